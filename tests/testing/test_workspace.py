"""The workspace builder the tests and notebooks share: what it writes, and what it refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import SAMPLE_REGISTRY, SAMPLE_WORKSPACE, build_workspace, write_file


def test_the_sample_workspace_has_every_kind_of_source(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "ws")
    assert root == tmp_path / "ws"
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert written == sorted(SAMPLE_WORKSPACE)
    ws = Workspace(root)
    assert ws.profile_md.startswith("# Dr. Ada Test\n")
    assert "department head" in ws.memory_md
    assert set(ws.flavour) == {"communication"}
    assert [skill.dir_name for skill in ws.skills] == ["grant-budget-check"]
    assert [entry.id for entry in ws.registry] == [entry["id"] for entry in SAMPLE_REGISTRY]
    assert [(i.toolkit, i.connected) for i in ws.integrations] == [
        ("gmail", True),
        ("notion", False),
    ]
    assert ws.list_files() == ["budget/grant-budget-2026.md"]
    hits = ws.memory.recall("*", "grant renewal budget cap")
    assert [hit.key for hit in hits][:1] == ["grant-budget"]


def test_the_sample_registry_is_the_json_of_the_sample_workspace() -> None:
    assert json.loads(SAMPLE_WORKSPACE["registry.json"]) == [dict(e) for e in SAMPLE_REGISTRY]
    assert sorted({entry["category"] for entry in SAMPLE_REGISTRY}) == [
        "productivity",
        "research",
        "writing",
    ]


def test_files_are_written_exactly_as_given(tmp_path: Path) -> None:
    files = {
        "PROFILE.md": "Café, naïve résumé\r\nsecond line\n",
        "files/deep/er/data.bin": b"\x89PNG\r\n\x00\xff",
        "memory/global/empty.md": "",
    }
    root = build_workspace(tmp_path / "ws", files)
    assert (root / "PROFILE.md").read_bytes() == "Café, naïve résumé\r\nsecond line\n".encode()
    assert (root / "files" / "deep" / "er" / "data.bin").read_bytes() == b"\x89PNG\r\n\x00\xff"
    assert (root / "memory" / "global" / "empty.md").read_bytes() == b""
    assert not (root / "MEMORY.md").exists()


def test_an_empty_description_is_an_empty_workspace(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "ws", {})
    assert root.is_dir()
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("relative", ["/etc/passwd", "../outside.md", "memory/../../x.md", ""])
def test_a_path_outside_the_folder_is_refused_before_anything_is_written(
    tmp_path: Path, relative: str
) -> None:
    with pytest.raises(ValueError, match="is not a path below the workspace folder"):
        build_workspace(tmp_path / "ws", {"PROFILE.md": "first\n", relative: "x"})
    assert not (tmp_path / "ws").exists()
    assert not (tmp_path / "outside.md").exists()


def test_write_file_makes_folders_replaces_and_returns_the_path(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "note.md"
    assert write_file(target, "one\n") == target
    assert write_file(str(target), "two\n") == target
    assert target.read_text("utf-8") == "two\n"
    assert write_file(target, b"\x00raw") == target
    assert target.read_bytes() == b"\x00raw"


def test_write_file_follows_the_umask_like_open(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        path = write_file(tmp_path / "x.md", "x")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o640
