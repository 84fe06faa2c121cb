"""A real Jupyter Server with the extension enabled, for the tests of its REST endpoint.

pytest only accepts ``pytest_plugins`` in the rootdir's conftest, so a test module that
needs the server star-imports this one (``from lab.server_fixtures import *``): the
pytest-jupyter fixtures, its autouse ones included, are then visible in that module and
nowhere else. The plugin's coroutine runner is not imported, so each test drives the
server's event loop itself, through :func:`fetch`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import tornado.httpclient
from pytest_jupyter.jupyter_server import *  # noqa: F403

CONFIG_FILE = (
    Path(__file__).resolve().parents[2]
    / "jupyter-config"
    / "jupyter_server_config.d"
    / "supercontext_lab.json"
)
"""The jupyter-config file the package installs to enable the extension."""

Fetch = Callable[..., tornado.httpclient.HTTPResponse]


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    """Enable the extension the way the installed jupyter-config file does."""
    config: dict[str, Any] = json.loads(CONFIG_FILE.read_text("utf-8"))
    return config


@pytest.fixture
def fetch(jp_fetch: Any, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Fetch:
    """``jp_fetch`` run to completion on the server's loop; never raises for a status."""

    def run(*parts: str, **kwargs: Any) -> tornado.httpclient.HTTPResponse:
        kwargs.setdefault("raise_error", False)
        future: Coroutine[Any, Any, tornado.httpclient.HTTPResponse] = jp_fetch(*parts, **kwargs)
        return jp_asyncio_loop.run_until_complete(future)

    return run
