"""A copy of a hostile workspace: what the original would refuse to read, the copy does
not hold.

A shipped notebook run on a folder its user named works on a copy of it
(:func:`~supercontext_lab.sources.demo.copy_workspace`), and the folder may hold what any
workspace may: links out of it, link loops, a FIFO, a link to a device, a huge sparse
file, or the lab home itself. Each is left out (or cut) with a line saying why, within
seconds, and neither the folder nor what lies outside it changes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from supercontext_lab.config import lab_home
from supercontext_lab.sources.demo import MAX_COPIED_BYTES, copy_workspace
from supercontext_lab.sources.workspace import Workspace

from .support import fingerprint, finishes, hostile_workspace


def test_a_copy_holds_nothing_from_outside_the_workspace(tmp_path: Path) -> None:
    """Links out of the workspace, to folders outside it and in loops are not copied"""
    outside = tmp_path / "outside"
    root = hostile_workspace(tmp_path / "ws", outside)
    before = fingerprint(tmp_path)

    copy, left_out = finishes(30, lambda: copy_workspace(Workspace(root)))

    assert fingerprint(tmp_path) == before
    copied = {p.relative_to(copy).as_posix(): p for p in copy.rglob("*")}
    assert not [p for p in copied.values() if p.is_symlink()]
    assert not [p for p in copied.values() if p.is_file() and b"OUTSIDE-SECRET" in p.read_bytes()]
    skipped = dict(left_out)
    assert "outside the workspace" in skipped["files/escape.txt"]
    assert {"files/loop-a", "files/loop-b"} <= set(skipped)
    # What the workspace does read is all there.
    assert (copy / "files" / "latin1.txt").read_bytes() == (root / "files/latin1.txt").read_bytes()
    assert (copy / "PROFILE.md").read_text("utf-8") == (root / "PROFILE.md").read_text("utf-8")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero_link(path: Path) -> None:
    path.symlink_to("/dev/zero")


TRAPS = {"fifo": _fifo, "link-to-dev-zero": _zero_link}


@pytest.mark.parametrize("trap", list(TRAPS), ids=list(TRAPS))
def test_special_files_are_left_out_of_a_copy(tmp_path: Path, trap: str) -> None:
    """A FIFO or a link to a device in the workspace is left out, never waited on"""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "PROFILE.md").write_text("# Profile\n", "utf-8")
    TRAPS[trap](root / "memory" / "trap.md")

    copy, left_out = finishes(20, lambda: copy_workspace(Workspace(root)))

    assert [path for path, _why in left_out] == ["memory/trap.md"]
    assert not (copy / "memory" / "trap.md").exists()
    assert (copy / "PROFILE.md").is_file()


def test_a_huge_file_is_copied_up_to_its_limit(tmp_path: Path) -> None:
    """A sparse file far past every reader's limit keeps one byte more than they read"""
    root = tmp_path / "ws"
    (root / "files").mkdir(parents=True)
    with (root / "files" / "huge.bin").open("wb") as handle:
        handle.truncate(1 << 34)

    copy, left_out = finishes(20, lambda: copy_workspace(Workspace(root)))

    assert left_out == []
    assert (copy / "files" / "huge.bin").stat().st_size == MAX_COPIED_BYTES


def test_a_workspace_holding_the_lab_home_is_copied_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy of a folder the lab home lies in does not copy the lab home (nor itself)"""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "note.md").write_text("A note.\n", "utf-8")
    monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(root / "home"))
    assert lab_home() == root / "home"

    copy, left_out = finishes(20, lambda: copy_workspace(Workspace(root)))
    again, _ = finishes(20, lambda: copy_workspace(Workspace(root)))

    assert again == copy == root / "home" / "copies" / "ws"
    assert left_out == []
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*")) == [
        "memory",
        "memory/note.md",
    ]
