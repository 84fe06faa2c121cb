"""Walks of a workspace tree are bounded: a tree nested thousands of folders deep or
holding tens of thousands of entries is listed in part, with a note, never a
RecursionError or a walk without end."""

from __future__ import annotations

import os
from pathlib import Path

from supercontext_lab.sources.files_folder import MAX_LIST_DEPTH, MAX_LIST_ENTRIES
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.tools import build_scout_registry

from .support import finishes, write


def _unnest(base: Path, depth: int) -> None:
    # shutil.rmtree (like pytest's clean-up of old temporary folders) recurses once per
    # level: the tree is removed here, bottom up.
    here = os.getcwd()
    os.chdir(base)
    try:
        for _ in range(depth):
            os.chdir("d")
        os.remove("leaf.txt")
        for _ in range(depth):
            os.chdir("..")
            os.rmdir("d")
    finally:
        os.chdir(here)


def _nest(base: Path, depth: int) -> Path:
    # Made by descending with relative names: the whole path would pass PATH_MAX.
    here = os.getcwd()
    os.chdir(base)
    try:
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        Path("leaf.txt").write_text("deep leaf\n", encoding="utf-8")
    finally:
        os.chdir(here)
    return base


def test_a_files_tree_1200_folders_deep_is_listed_in_part(tmp_path: Path) -> None:
    """files/ nested 1,200 folders deep: listed to 32 levels with a note, no RecursionError"""
    write(tmp_path / "files" / "top.md", "top\n")
    _nest(tmp_path / "files", 1200)
    workspace = Workspace(tmp_path, allow_outside_links=False)
    try:
        result = finishes(
            30, lambda: build_scout_registry(workspace).call("workspace_list_files", {})
        )
    finally:
        _unnest(tmp_path / "files", 1200)
    assert result.ok, result.content
    assert '"top.md"' in result.content and "leaf.txt" not in result.content
    assert any(f"deeper than {MAX_LIST_DEPTH} folders" in line for line in workspace.diagnostics)


def test_a_files_folder_of_55000_entries_is_listed_in_part(tmp_path: Path) -> None:
    """files/ holding 55,000 files: listed up to its first 50,000 entries, with a note"""
    folder = tmp_path / "files"
    folder.mkdir()
    for number in range(55_000):
        os.close(os.open(folder / f"f{number:05d}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    workspace = Workspace(tmp_path, allow_outside_links=False)
    listed = finishes(60, workspace.list_files)
    assert len(listed) == MAX_LIST_ENTRIES
    assert any("first 50,000 entries" in line for line in workspace.diagnostics)
