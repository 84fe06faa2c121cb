"""The one way the project writes a file: atomically, durably, keeping its mode.

:func:`write_atomic` writes to a temporary file with a unique name in the same folder,
fsyncs it, gives it the mode of the file it replaces, renames it over the target and
fsyncs the folder. Readers see the old file or the new one, never a part; two writers
never share a temporary file; a crash at any point leaves the old or the new version
(plus, at worst, a stray ``.<name>.*.tmp`` file that no reader ever opens).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from ._confine import read_limited
from .errors import PathRefusedError

__all__ = ["MAX_BACKUP_BYTES", "write_atomic"]

MAX_BACKUP_BYTES = 64 * 1024 * 1024
"""Largest previous file :func:`write_atomic` copies to a backup: the files it backs up
(agent definitions, prompts) are far smaller; a larger one is refused, not read whole."""

_FOLDER_FSYNC_UNSUPPORTED = frozenset(
    {errno.EINVAL, errno.EBADF, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES}
)
_NEW_FILE_MODE = 0o666
"""Mode of a file that did not exist, before the umask (what ``open()`` would give)."""


def _current_umask() -> int:
    # Linux shows the umask in /proc; elsewhere it can only be read by setting it, which
    # briefly changes it for every thread, so that is the fallback only.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return _NEW_FILE_MODE & ~_current_umask()


def _refuse_special(target: Path) -> None:
    """Raise ``OSError`` when ``target`` (or what its link leads to) exists and is not a
    regular file: replacing a FIFO, a device or a folder the user named is never what a
    save meant, and reading one for a backup would block or never end."""
    try:
        info = target.stat()
    except FileNotFoundError:
        return  # a new file, or a dangling link the rename replaces
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, "it is a link loop", str(target)) from None
        raise
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a special file (FIFO, device, socket)"
        raise OSError(errno.EINVAL, f"it is {kind}, not a regular file", str(target))


def _previous(target: Path) -> bytes | None:
    """The bytes of the file ``write_atomic`` replaces, for its backup; ``None`` when there
    is none. Read without blocking and to a bound (``OSError`` past it)."""
    try:
        previous, more = read_limited(target, MAX_BACKUP_BYTES)
    except FileNotFoundError:
        return None
    except PathRefusedError as exc:  # it became a special file since it was checked
        raise OSError(errno.EINVAL, str(exc), str(target)) from None
    if more:
        raise OSError(
            errno.EFBIG,
            f"it is larger than {MAX_BACKUP_BYTES >> 20} MiB, too large to back up",
            str(target),
        )
    return previous


def write_atomic(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    backup: str | os.PathLike[str] | None = None,
    mode: int | None = None,
    on_folder_sync_error: Callable[[OSError], None] | None = None,
) -> Path:
    """Replace ``path`` with ``data`` (text is written as UTF-8, newlines as given).

    ``backup``: where to keep the previous content first (itself written atomically, with
    the same mode); nothing is kept when ``path`` does not exist. ``mode``: the permission
    bits of the new file; by default those of the file replaced, or what a plain
    ``open()`` would give a new file. Raises ``OSError``; the target is then unchanged,
    except when the last step, the folder's fsync after the rename, fails: the new file is
    in place but may not survive a power cut, and the error is raised (or handed to
    ``on_folder_sync_error`` when given). An existing ``path`` that is not a regular file
    (a FIFO, a device, a folder, or a link to one) is refused with ``OSError`` before
    anything is written, and so is a previous file larger than :data:`MAX_BACKUP_BYTES`
    when a backup is asked for.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    _refuse_special(target)
    bits = _mode_for(target) if mode is None else mode
    if backup is not None:
        previous = _previous(target)
        if previous is not None:
            write_atomic(backup, previous, mode=bits)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file 0600; the saved file keeps the mode of the one it replaces.
        os.chmod(tmp, bits)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    try:
        _fsync_folder(target.parent)
    except OSError as exc:
        if on_folder_sync_error is None:
            raise
        on_folder_sync_error(exc)
    return target


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable where a folder can be fsynced (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        # Some filesystems cannot fsync a folder at all; any other failure (EIO, ENOSPC)
        # means the rename may not last, and the caller must hear of it.
        if exc.errno not in _FOLDER_FSYNC_UNSUPPORTED:
            raise
    finally:
        os.close(fd)
