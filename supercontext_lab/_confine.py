"""Reading files from folders the lab does not own: confined, regular files only, bounded.

A workspace is often somebody else's folder. A link in it may point anywhere (``PROFILE.md
-> /proc/self/environ`` would put the process environment, API key included, into a
prompt), a FIFO blocks a reader forever and ``/dev/zero`` never ends. So a read resolves
the real path first and refuses anything outside the root (unless links out are allowed),
anything under ``/proc``, ``/sys`` or ``/dev`` (whatever the setting), and anything that
is not a regular file; then it reads at most a given number of bytes. Every refusal is a
:class:`~supercontext_lab.errors.PathRefusedError` with a one-line reason for the caller to record.

Checking a path and then opening it is a race: whoever writes the folder can swap the
file (or a folder above it) for a link out between the two steps. :func:`read_confined`,
which every workspace read goes through, therefore opens what it checked and nothing
else: it walks the checked real path from ``/`` one component at a time with
``O_NOFOLLOW`` (``os.open(..., dir_fd=...)``), so a component that became a link cannot
be followed; when one did, the path is checked again from the start.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import PathRefusedError

__all__ = ["confined_path", "read_confined", "read_limited"]

_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO would wait forever for a writer
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
# O_PATH opens a folder to walk through without needing to read it (Linux).
_WALK_FLAGS = (
    getattr(os, "O_PATH", os.O_RDONLY)
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_CAN_WALK = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
# A path that changes under the reader this many times running is refused.
_ATTEMPTS = 3

# Kernel and device trees: their "files" are live views of processes and hardware.
_SPECIAL_ROOTS = tuple(Path(p) for p in ("/proc", "/sys", "/dev"))


def _real(path: Path) -> Path:
    try:
        return path.resolve(strict=True)
    except FileNotFoundError as exc:
        raise FileNotFoundError(exc.errno, exc.strerror, str(path)) from None
    except (OSError, RuntimeError, ValueError) as exc:
        # A symlink loop (RuntimeError before 3.13), a NUL byte (ValueError), ...
        raise PathRefusedError("it cannot be resolved (a link loop or an invalid name)") from exc


def confined_path(root: Path, path: Path, *, allow_outside: bool = False) -> Path:
    """The real path of ``path``, which must lie inside ``root`` (itself resolved).

    Raises :class:`~supercontext_lab.errors.PathRefusedError` for a path leading outside ``root`` (through a link or
    ``..``) unless ``allow_outside``, for a path under /proc, /sys or /dev in any case,
    and ``FileNotFoundError`` when it does not exist (a dangling link included).
    """
    real = _real(path)
    if not allow_outside and not real.is_relative_to(root):
        raise PathRefusedError(
            f"it is a link to {real}, outside the workspace "
            "(set workspace.allow_outside_links = true to follow such links)"
        )
    if any(real.is_relative_to(special) for special in _SPECIAL_ROOTS):
        raise PathRefusedError(f"it leads to {real}, which is not a regular file")
    return real


def read_limited(path: Path, max_bytes: int) -> tuple[bytes, bool]:
    """At most ``max_bytes`` of the regular file ``path``, and whether more was there.

    For files the lab's user named (its config, an agent definition); a file inside a
    folder somebody else may write goes through :func:`read_confined`. Opened without
    blocking and checked on the open descriptor. Raises
    :class:`~supercontext_lab.errors.PathRefusedError` for anything but a regular file and
    ``OSError`` when it cannot be opened or read.
    """
    return _read_open(os.open(path, _READ_FLAGS), max_bytes)


def read_confined(
    root: Path, path: Path, max_bytes: int, *, allow_outside: bool = False
) -> tuple[bytes, bool]:
    """At most ``max_bytes`` of the regular file ``path`` inside ``root`` (a resolved
    folder), and whether more was there; what is read is the file that was checked.

    The rules of :func:`confined_path` apply to the file actually opened: its real path is
    checked, then opened component by component without following any link, and checked
    again from the start when a component changed in between (a file swapped for a link).
    Raises :class:`~supercontext_lab.errors.PathRefusedError` for a refused or special
    file, or one that keeps changing while it is read; ``FileNotFoundError`` when it does
    not exist; ``OSError`` when it cannot be opened or read.
    """
    for _attempt in range(_ATTEMPTS):
        real = confined_path(root, path, allow_outside=allow_outside)
        try:
            fd = _open_exactly(real)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                continue  # a component changed since it was checked: check again
            raise
        return _read_open(fd, max_bytes)
    raise PathRefusedError("it kept changing while it was read")


def _open_exactly(real: Path) -> int:
    """A descriptor of the file at ``real`` (a resolved path), reached without following
    any link: an ``OSError`` (``ELOOP``, ``ENOTDIR``) when a component is one now."""
    if not _CAN_WALK:
        # No dir_fd here: open, then make sure the file opened is the one at ``real``.
        fd = os.open(real, _READ_FLAGS)
        opened, there = os.fstat(fd), os.lstat(real)
        if (opened.st_dev, opened.st_ino) != (there.st_dev, there.st_ino):
            os.close(fd)
            raise OSError(errno.ELOOP, "the file changed while it was opened", str(real))
        return fd
    anchor, *folders, name = real.parts
    current = os.open(anchor, _WALK_FLAGS)
    try:
        for folder in folders:
            step = os.open(folder, _WALK_FLAGS, dir_fd=current)
            os.close(current)
            current = step
        return os.open(name, _READ_FLAGS | os.O_NOFOLLOW, dir_fd=current)
    finally:
        os.close(current)


def _read_open(fd: int, max_bytes: int) -> tuple[bytes, bool]:
    """Read at most ``max_bytes`` of the regular file open at ``fd``, then close it."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PathRefusedError("it is not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data[:max_bytes], len(data) > max_bytes
