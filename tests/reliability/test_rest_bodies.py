"""Hostile bodies sent to the Super Context flag's REST endpoint, on a real Jupyter Server.

Every bad body is a 400 with a one-line reason, and the flag file is left as it was. The
Jupyter Server fixtures of tests/lab/server_fixtures.py are imported into this module only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lab.server_fixtures import *  # noqa: F403
from lab.server_fixtures import Fetch

from supercontext_lab.lab.server import ROUTE

PARTS = ROUTE.split("/")
FLAG_FILE = "# the user's own comment\n[context]\nsuper_context_enabled = true\n"

BAD_BODIES = [
    ("array-1000-deep", b"[" * 1_000 + b"]" * 1_000, "nested"),
    ("object-300-deep", b'{"a":' * 300 + b"1" + b"}" * 300, "nested"),
    ("deep-beside-enabled", b'{"enabled": true, "x": ' + b"[" * 1_000 + b"]" * 1_000 + b"}", "nested"),
    ("array-100k-deep", b"[" * 100_000 + b"]" * 100_000, "too large"),
    ("two-megabytes", b'{"enabled": true, "pad": "' + b"x" * 2_000_000 + b'"}', "too large"),
    ("not-json", b"enabled=false", "not JSON"),
    ("not-utf8", b"\xff\xfe\x00", "not JSON"),
    ("empty", b"", "not JSON"),
    ("string-false", b'{"enabled": "false"}', "must be true or false"),
    ("number", b'{"enabled": 1}', "must be true or false"),
    ("nan", b'{"enabled": NaN}', "not JSON"),
    ("null", b'{"enabled": null}', "must be true or false"),
    ("array", b"[true]", '"enabled" key'),
    ("repeated-key", b'{"enabled": true, "enabled": false}', "more than once"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "body", "fragment"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_bad_rest_body_is_a_400_and_the_flag_file_is_untouched(
    case: str, body: bytes, fragment: str, fetch: Fetch, lab_home: Path
) -> None:
    """A bad PUT body (nested, huge, not JSON, wrong type): 400, one line, file untouched"""
    flag_file = lab_home / "config.toml"
    flag_file.write_text(FLAG_FILE, "utf-8")
    response = fetch(*PARTS, method="PUT", body=body, allow_nonstandard_methods=True)
    assert response.code == 400, response.body[:300]
    message = json.loads(response.body.decode("utf-8"))["message"]
    assert fragment in message
    assert "\n" not in message and len(message) < 300
    assert flag_file.read_text("utf-8") == FLAG_FILE
    assert sorted(p.name for p in lab_home.iterdir()) == ["config.toml"]
