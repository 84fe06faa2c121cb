"""Reading files from folders the lab does not own: confined, regular files only, bounded.

A workspace is often somebody else's folder. A link in it may point anywhere (``PROFILE.md
-> /proc/self/environ`` would put the process environment, API key included, into a
prompt), a FIFO blocks a reader forever and ``/dev/zero`` never ends. So a read resolves
the real path first and refuses anything outside the root (unless links out are allowed),
anything under ``/proc``, ``/sys`` or ``/dev`` (whatever the setting), and anything that
is not a regular file; then it reads at most a given number of bytes. Every refusal is a
:class:`~supercontext_lab.errors.PathRefusedError` with a one-line reason for the caller to record.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import PathRefusedError

__all__ = ["confined_path", "read_limited"]

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

    Opened without blocking (a FIFO would wait forever for a writer) and checked on the
    open descriptor, so what is read is what was checked. Raises :class:`~supercontext_lab.errors.PathRefusedError` for
    anything but a regular file and ``OSError`` when it cannot be opened or read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
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
