"""One way to replace a file: atomically, durably, keeping its permissions.

Every file the package writes on a user's behalf (``config.toml``, an edited
``agent.toml`` and its ``.bak``, a saved thread) goes through :func:`write_text_atomic`,
so a reader sees the old file or the new one, never half of either, and saving never
changes who may read the file.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

__all__ = ["NEW_FILE_MODE", "write_text_atomic"]

_CANNOT_SYNC_FOLDERS = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF})

NEW_FILE_MODE = 0o644
"""The permissions of a file that did not exist before (what ``umask 022`` gives)."""


def write_text_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, newlines as given).

    The text goes to a temporary file in the same folder (``.<name>.<random>.tmp``), which
    is flushed to disk, given the permissions of the file it replaces (or
    :data:`NEW_FILE_MODE`), and renamed over ``path``; the folder is then synced so the
    rename survives a crash. On any failure the temporary file is removed and ``path`` is
    left as it was. ``OSError`` propagates for the caller to word.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = NEW_FILE_MODE
        # mkstemp creates the file 0o600: without this a save would hide the file.
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename durable where folders can be synced (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows cannot open folders
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        # Some filesystems cannot sync a folder; that is no failure of this write. Any
        # other error (a full disk, an I/O error) is, and is reported.
        if exc.errno not in _CANNOT_SYNC_FOLDERS:
            raise
    finally:
        os.close(fd)
