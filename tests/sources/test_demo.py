"""Copies of a workspace in the lab home: the shipped demo's, and ``copy_workspace`` of a
folder somebody named, which reads the same as the original and leaves it as it was."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab.config import lab_home
from supercontext_lab.conversations import archive_turn, list_conversations
from supercontext_lab.sources.demo import copy_workspace, demo_workspace_path
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace

FILES = {
    "PROFILE.md": "# Profile\n\nI survey kelp forests.\n",
    "MEMORY.md": "- The March survey uses six transects.\n",
    "memory/global/urchins.md": "Urchin barrens cover 38% of the reef.\n",
    "skills/transect-log/SKILL.md": "---\nname: Transect log\n---\nLog a transect.\n",
    "files/raw/counts.csv": "transect,urchins\n1,412\n",
}


def tree_snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, hidden ones included, with its bytes."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_the_demo_is_copied_into_the_lab_home_once() -> None:
    first = demo_workspace_path()
    assert first.parent == lab_home() and first.name == "demo-workspace"
    assert (first / "PROFILE.md").is_file()
    assert demo_workspace_path() == first


def test_a_copy_holds_the_workspace_and_reads_the_same(tmp_path: Path) -> None:
    folder = build_workspace(tmp_path / "kelp-ws", FILES)
    original = Workspace(folder)
    archive_turn(original, "t-1", "Which transects come first?", "")
    before = tree_snapshot(folder)

    copy, left_out = copy_workspace(original)

    # Not a byte of the folder changed, its own .supercontext/ included.
    assert tree_snapshot(folder) == before
    assert left_out == []
    assert copy == lab_home() / "copies" / "kelp-ws"
    for rel, text in FILES.items():
        assert (copy / rel).read_text("utf-8") == text
    copied = Workspace(copy)
    assert copied.profile_md == original.profile_md
    assert copied.memory_md == original.memory_md
    assert [s.dir_name for s in copied.skills] == [s.dir_name for s in original.skills]
    # The lab's own folder is not copied: the copy's conversations are its own.
    assert not (copy / ".supercontext").exists()
    assert list_conversations(copied) == []
    archive_turn(copied, "t-2", "Stored in the copy", "")
    assert [c.id for c in list_conversations(original)] == ["t-1"]


def test_copying_again_replaces_the_older_copy(tmp_path: Path) -> None:
    folder = build_workspace(tmp_path / "kelp-ws", FILES)
    copy, _ = copy_workspace(Workspace(folder))
    (copy / "stray.md").write_text("left by an earlier run\n", "utf-8")
    (folder / "memory" / "global" / "new.md").write_text("A new note.\n", "utf-8")

    again, _ = copy_workspace(Workspace(folder))

    assert again == copy
    assert not (copy / "stray.md").exists()
    assert (copy / "memory" / "global" / "new.md").is_file()
    assert [p.name for p in (lab_home() / "copies").iterdir()] == ["kelp-ws"]
