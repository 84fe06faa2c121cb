"""Saved threads and atomic saves against special and oversized files.

A saved thread is a file a user may receive; its name may be a FIFO (reading it waits for
a writer forever), a link to ``/dev/zero`` (never ends) or a huge sparse file. A save that
keeps a backup reads the file it replaces first, with the same risks, and a save over a
FIFO or a device the user named silently turned it into a plain file. Each case is
refused with one error of the package's tree (or ``OSError`` from the writer, which every
caller turns into its own), within seconds, and the special file is left as it was.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from supercontext_lab._atomic import MAX_BACKUP_BYTES, write_atomic
from supercontext_lab.errors import WorkspaceError
from supercontext_lab.harness import Thread
from supercontext_lab.harness.saved import MAX_SAVED_THREAD_BYTES

from .support import finishes


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _zero_link(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


def _null_link(path: Path) -> Path:
    path.symlink_to("/dev/null")
    return path


def _sparse(size: int) -> Callable[[Path], Path]:
    def make(path: Path) -> Path:
        with path.open("wb") as handle:
            handle.truncate(size)
        return path

    return make


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


SAVED_THREAD_TRAPS: dict[str, Callable[[Path], Path]] = {
    "fifo": _fifo,
    "link-to-dev-zero": _zero_link,
    "link-to-dev-null": _null_link,
    "sparse-past-the-limit": _sparse(MAX_SAVED_THREAD_BYTES + 1),
    "folder": _folder,
}


@pytest.mark.parametrize("trap", list(SAVED_THREAD_TRAPS), ids=list(SAVED_THREAD_TRAPS))
def test_thread_load_refuses_special_and_oversized_files(tmp_path: Path, trap: str) -> None:
    """Thread.load of a FIFO, a device link, a file past its limit or a folder: one error"""
    path = SAVED_THREAD_TRAPS[trap](tmp_path / "thread.json")
    with pytest.raises(WorkspaceError) as caught:
        finishes(20, lambda: Thread.load(path))
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    if trap == "sparse-past-the-limit":
        assert f"{MAX_SAVED_THREAD_BYTES >> 20} MiB" in message


def test_thread_load_refuses_invalid_utf8(tmp_path: Path) -> None:
    """A saved thread that is not UTF-8 is refused with one line naming it"""
    path = tmp_path / "thread.json"
    path.write_bytes(b'{"goal": "\xff\xfe"}')
    with pytest.raises(WorkspaceError) as caught:
        Thread.load(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_thread_load_still_reads_a_saved_thread(tmp_path: Path) -> None:
    """The bounded read changes nothing for a real saved thread"""
    path = tmp_path / "thread.json"
    data = {"thread_id": "t1", "goal": "Check the grant budget", "transcript": []}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert Thread.load(path, workspace=str(tmp_path)).goal == "Check the grant budget"


SAVE_TRAPS: dict[str, Callable[[Path], Path]] = {
    "fifo": _fifo,
    "link-to-dev-null": _null_link,
    "link-to-dev-zero": _zero_link,
    "folder": _folder,
}


def _kind(path: Path) -> str:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return f"link to {os.readlink(path)}"
    return stat.filemode(info.st_mode)[0]


@pytest.mark.parametrize("backup", [False, True], ids=["no-backup", "backup"])
@pytest.mark.parametrize("trap", list(SAVE_TRAPS), ids=list(SAVE_TRAPS))
def test_write_atomic_refuses_to_replace_a_special_file(
    tmp_path: Path, trap: str, backup: bool
) -> None:
    """A save over a FIFO, a device link or a folder is refused, the file left as it was"""
    path = SAVE_TRAPS[trap](tmp_path / "config.toml")
    before = _kind(path)
    bak = tmp_path / "config.toml.bak"
    with pytest.raises(OSError, match="not a regular file"):
        finishes(20, lambda: write_atomic(path, "x = 1\n", backup=bak if backup else None))
    assert _kind(path) == before
    assert not bak.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_write_atomic_refuses_a_backup_past_its_limit(tmp_path: Path) -> None:
    """A previous file larger than the backup limit is not read whole: the save is refused"""
    path = _sparse(MAX_BACKUP_BYTES + 1)(tmp_path / "agent.toml")
    bak = tmp_path / "agent.toml.bak"
    with pytest.raises(OSError, match="too large to back up"):
        finishes(20, lambda: write_atomic(path, "x = 1\n", backup=bak))
    assert path.stat().st_size == MAX_BACKUP_BYTES + 1
    assert not bak.exists()


def test_write_atomic_still_backs_up_a_regular_file(tmp_path: Path) -> None:
    """A regular file is backed up and replaced as before, its mode kept"""
    path = tmp_path / "agent.toml"
    path.write_text("old = 1\n", encoding="utf-8")
    path.chmod(0o640)
    bak = tmp_path / "agent.toml.bak"
    write_atomic(path, "new = 2\n", backup=bak)
    assert path.read_text(encoding="utf-8") == "new = 2\n"
    assert bak.read_text(encoding="utf-8") == "old = 1\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
