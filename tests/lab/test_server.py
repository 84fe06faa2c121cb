"""The Super Context flag over REST, served by a real Jupyter Server (pytest-jupyter).

The server's fixtures come from :mod:`.server_fixtures`, imported into this module only.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
import tornado.httpclient

import supercontext_lab
from supercontext_lab.config import super_context_status
from supercontext_lab.lab.server import ROUTE

from .server_fixtures import *  # noqa: F403
from .server_fixtures import Fetch

REPO = Path(__file__).resolve().parents[2]
PARTS = ROUTE.split("/")


def _json(response: tornado.httpclient.HTTPResponse) -> Any:
    return json.loads(response.body.decode("utf-8"))


def _put(fetch: Fetch, body: bytes | str, **kwargs: Any) -> tornado.httpclient.HTTPResponse:
    return fetch(*PARTS, method="PUT", body=body, **kwargs)


def test_the_config_file_enables_the_extension_point() -> None:
    config_file = REPO / "jupyter-config" / "jupyter_server_config.d" / "supercontext_lab.json"
    assert json.loads(config_file.read_text("utf-8")) == {
        "ServerApp": {"jpserver_extensions": {"supercontext_lab": True}}
    }
    points = supercontext_lab._jupyter_server_extension_points()
    assert points == [{"module": "supercontext_lab.lab.server"}]
    module = importlib.import_module(points[0]["module"])
    assert callable(module._load_jupyter_server_extension)


def test_get_answers_the_default(fetch: Fetch) -> None:
    response = fetch(*PARTS)
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert _json(response) == {"enabled": True, "source": "default"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [(False, {"enabled": False, "source": "file"}), (True, {"enabled": True, "source": "file"})],
)
def test_put_persists_and_get_reads_it_back(
    fetch: Fetch, lab_home: Path, value: bool, expected: dict[str, Any]
) -> None:
    response = _put(fetch, json.dumps({"enabled": value}))
    assert response.code == 200
    assert _json(response) == expected
    assert _json(fetch(*PARTS)) == expected
    assert super_context_status().enabled is value
    text = (lab_home / "config.toml").read_text("utf-8")
    assert f"super_context_enabled = {str(value).lower()}" in text


def test_an_environment_override_wins_and_is_reported(
    fetch: Fetch, lab_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENHUMAN_SUPER_CONTEXT", "on")
    response = _put(fetch, b'{"enabled": false}')
    assert response.code == 200
    assert _json(response) == {"enabled": True, "source": "env"}
    assert "super_context_enabled = false" in (lab_home / "config.toml").read_text("utf-8")


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"enabled=false", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"", "not JSON"),
        (b"[true]", 'needs an "enabled" key'),
        (b"{}", 'needs an "enabled" key'),
        (b'{"enable": true}', 'needs an "enabled" key'),
        (b'{"enabled": "false"}', '"enabled" must be true or false, not "false"'),
        (b'{"enabled": 0}', '"enabled" must be true or false, not 0'),
        (b'{"enabled": null}', '"enabled" must be true or false, not null'),
    ],
)
def test_bad_bodies_get_400_with_a_json_message(
    fetch: Fetch, lab_home: Path, body: bytes, fragment: str
) -> None:
    response = _put(fetch, body, allow_nonstandard_methods=True)
    assert response.code == 400
    assert fragment in _json(response)["message"]
    assert not (lab_home / "config.toml").exists()


def test_a_corrupt_config_file_is_a_500_naming_it(fetch: Fetch, lab_home: Path) -> None:
    (lab_home / "config.toml").write_text("[context\n", "utf-8")
    response = fetch(*PARTS)
    assert response.code == 500
    assert "config.toml" in _json(response)["message"]
    assert (lab_home / "config.toml").read_text("utf-8") == "[context\n"


@pytest.mark.parametrize(
    ("method", "body"),
    [("GET", None), ("PUT", b'{"enabled": false}')],
)
def test_unauthenticated_requests_are_refused(
    fetch: Fetch, lab_home: Path, method: str, body: bytes | None
) -> None:
    response = fetch(
        *PARTS,
        method=method,
        body=body,
        headers={"Authorization": ""},
        follow_redirects=False,
    )
    assert response.code in (302, 403)
    assert response.code != 200
    assert not (lab_home / "config.toml").exists()
    assert super_context_status().source == "default"


def test_a_wrong_token_is_refused(fetch: Fetch, lab_home: Path) -> None:
    response = _put(
        fetch,
        b'{"enabled": false}',
        headers={"Authorization": "token wrong"},
        follow_redirects=False,
    )
    assert response.code in (302, 403)
    assert not (lab_home / "config.toml").exists()
