"""Shared fixtures: every test runs with a clean environment and a private lab home."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_CLEAN_PREFIXES = ("OPENAI_", "OPENHUMAN_", "SUPERCONTEXT_")
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")

# Module- and session-scoped fixtures are set up before the per-test home below: they get
# this session's own lab home, so no test reads or writes the user's (a thread a fixture
# builds would otherwise archive its turns into the user's demo workspace).
_SESSION_HOME = tempfile.mkdtemp(prefix="scl-test-home-")
os.environ["SUPERCONTEXT_LAB_HOME"] = _SESSION_HOME
# The memory index key is the user's, kept outside every lab home by default: a test's
# stays in its own folder (a test that plays another user points it elsewhere).
os.environ["SUPERCONTEXT_INDEX_KEY"] = os.path.join(_SESSION_HOME, "index.key")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def lab_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the lab home at a fresh folder and drop variables that could reach a network."""
    for name in list(os.environ):
        if name.startswith(_CLEAN_PREFIXES) or name in _PROXY_VARS:
            monkeypatch.delenv(name, raising=False)
    # Loopback must never go through a proxy even if one sneaks back in.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost,::1")
    home = tmp_path_factory.mktemp("labhome")
    monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(home))
    monkeypatch.setenv("SUPERCONTEXT_INDEX_KEY", str(home / "index.key"))
    return home


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh ``InteractiveShell`` with ``%load_ext supercontext_lab`` already run.

    IPython's own folder and history live in the test's temp folder, so nothing touches
    the user's profile. IPython is imported here, not at the top, so the core tests never
    load it.
    """
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance(config=config)
    ip.run_line_magic("load_ext", "supercontext_lab")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "supercontext_lab")
        InteractiveShell.clear_instance()
