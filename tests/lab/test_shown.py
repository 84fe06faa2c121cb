"""What the display objects and the widgets show alike: a workspace's name, a path, and
the MIME type of a widget view."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.lab.shown import WIDGET_VIEW_MIME, shown_path, workspace_name
from supercontext_lab.sources.demo import open_workspace
from supercontext_lab.testing import build_workspace


def test_the_widget_view_mime_type_is_the_one_jupyter_reads() -> None:
    assert WIDGET_VIEW_MIME == "application/vnd.jupyter.widget-view+json"


def test_a_workspace_is_named_by_its_folder(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "kelp-ws", {"PROFILE.md": "# Profile\n"})
    assert workspace_name(open_workspace(root)) == "kelp-ws"
    assert workspace_name(open_workspace(None)) == "demo-workspace"


def test_a_path_under_home_is_written_with_a_tilde(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert shown_path(tmp_path / "notes" / "ws") == "~/notes/ws"
    assert shown_path(Path("/opt/ws")) == "/opt/ws"
