"""An open workspace per worker thread, kept while nothing it has read has changed.

A :class:`~supercontext_lab.sources.workspace.Workspace` reads each part once and keeps
it (the profile, the skills, the registry, the memory tree synced when it is opened), so
a server answering many requests must not hold one for ever: a note written since would
not be seen. Opening it anew for every request is correct but costs about as much as the
pack itself (its memory tree is opened and synced, its parts read again). So each thread
keeps the one it opened, and opens it anew when the folder's :func:`signature` changed:
the size and time of every file the workspace keeps a part of, and of the lab's
``config.toml`` (it decides whether links out are followed). The ``files/`` folder is
listed and read on each use, so it is not part of it. One per thread: requests running
at once never share a workspace. (A file rewritten with the same size within the file
system's time resolution would go unnoticed until the next change.)
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..config import config_path
from ..sources.workspace import Workspace

__all__ = ["MAX_SIGNATURE_ENTRIES", "OpenedWorkspaces", "signature"]

MAX_SIGNATURE_ENTRIES = 100_000
"""A folder with more entries than this is opened anew for every request (no signature)."""

_ROOT_FILES = (
    "PROFILE.md",
    "MEMORY.md",
    "registry.json",
    "integrations.toml",
    "orchestrator_tools.toml",
)
# The folders a workspace keeps parts of, and how deep it reads them: memory/<ns>/<key>.md,
# flavour/<facet>.md, skills/<dir>/SKILL.md.
_FOLDERS = (("memory", 2), ("flavour", 1), ("skills", 2))

Stamp = tuple[str, int, int]


def _stamp(path: Path, name: str) -> Stamp:
    """``name`` with the size and modification time of what ``path`` leads to (a link is
    followed: what it points at is what is read); ``-1`` when it is not there."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return (name, -1, -1)
    return (name, found.st_size, found.st_mtime_ns)


def _walk(folder: Path, name: str, depth: int, stamps: list[Stamp]) -> None:
    stamps.append(_stamp(folder, name))
    if depth == 0 or len(stamps) > MAX_SIGNATURE_ENTRIES:
        return
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path, rel = Path(entry.path), f"{name}/{entry.name}"
        try:
            is_folder = entry.is_dir()
        except OSError:
            is_folder = False
        if is_folder:
            _walk(path, rel, depth - 1, stamps)
        else:
            stamps.append(_stamp(path, rel))


def signature(root: Path) -> tuple[Stamp, ...] | None:
    """What the workspace at ``root`` would read, by size and time (see the module
    docstring); ``None`` for a folder too large to stamp."""
    stamps = [_stamp(config_path(), "config.toml")]
    stamps += [_stamp(root / name, name) for name in _ROOT_FILES]
    for name, depth in _FOLDERS:
        _walk(root / name, name, depth, stamps)
    return tuple(stamps) if len(stamps) <= MAX_SIGNATURE_ENTRIES else None


class OpenedWorkspaces:
    """The workspace at ``root`` for the calling thread: the one it opened last while the
    folder's :func:`signature` is unchanged, else a new one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._local = threading.local()

    def get(self) -> Workspace:
        now = signature(self.root)
        held: tuple[tuple[Stamp, ...] | None, Workspace] | None = self._local.__dict__.get("held")
        if held is not None and now is not None and held[0] == now:
            return held[1]
        # The one replaced is not closed: a scout abandoned at its deadline may still be
        # reading it in its worker; its memory tree's connection closes when it is dropped.
        workspace = Workspace(self.root)
        self._local.held = (now, workspace)
        return workspace
