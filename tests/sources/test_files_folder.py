"""The files/ folder of a workspace: listed and read, never left."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from supercontext_lab.errors import WorkspaceError
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace

FILES = {
    "PROFILE.md": "I write reports.\n",
    "files/notes.md": "hello notes\n",
    "files/data/table.csv": "a,b\n1,2\n",
}


@pytest.fixture
def ws_with_links(tmp_path: Path) -> Workspace:
    root = build_workspace(tmp_path / "ws", FILES)
    secret = build_workspace(tmp_path / "outside", {"secret.txt": "top secret\n"}) / "secret.txt"
    os.symlink(secret, root / "files" / "escape.txt")
    os.symlink(tmp_path / "outside", root / "files" / "escape-dir")
    os.symlink(root / "files" / "notes.md", root / "files" / "alias.md")
    os.symlink(root / "PROFILE.md", root / "files" / "profile-link.md")
    return Workspace(root)


@pytest.mark.parametrize(
    ("rel", "message"),
    [
        ("../PROFILE.md", r"leaves files/"),
        ("data/../../PROFILE.md", r"leaves files/"),
        ("..\\PROFILE.md", r"leaves files/"),
        ("/etc/passwd", r"absolute path"),
        ("\\etc\\passwd", r"absolute path"),
        ("C:\\Windows\\win.ini", r"absolute path"),
        ("escape.txt", r"points outside files/"),
        ("escape-dir/secret.txt", r"points outside files/"),
        ("profile-link.md", r"points outside files/"),
        ("missing.md", r"does not exist"),
        ("data", r"is not a file"),
        ("", r"give a path inside files/"),
    ],
)
def test_reads_cannot_leave_files(ws_with_links: Workspace, rel: str, message: str) -> None:
    with pytest.raises(WorkspaceError, match=message):
        ws_with_links.read_file(rel)


def test_symlinks_inside_files_are_followed(ws_with_links: Workspace) -> None:
    assert ws_with_links.read_file("alias.md") == "hello notes\n"
    assert ws_with_links.read_file("./data//table.csv") == "a,b\n1,2\n"
    assert ws_with_links.list_files() == ["alias.md", "data/table.csv", "notes.md"]


def test_files_folder_linking_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    build_workspace(tmp_path / "elsewhere", {"x.txt": "x"})
    os.symlink(tmp_path / "elsewhere", root / "files")
    ws = Workspace(root)
    with pytest.raises(WorkspaceError, match=r"files/ .* points outside the workspace"):
        ws.list_files()
    with pytest.raises(WorkspaceError, match="points outside the workspace"):
        ws.read_file("x.txt")


def test_binary_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "image.png").write_bytes(b"\x89PNG\0\0\0")
    with pytest.raises(WorkspaceError, match=r"files/image\.png is a binary file"):
        Workspace(tmp_path).read_file("image.png")


def test_read_without_files_folder(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="no files/ folder"):
        Workspace(tmp_path).read_file("x.md")
