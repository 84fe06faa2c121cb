"""The memory files: ``memory/<namespace>/<key>.md`` in a tree's folder, found and read.

A note put straight under ``memory/`` (``memory/<key>.md``, no namespace folder) belongs
to :data:`ROOT_NAMESPACE`, ``global``, the namespace ``memory_recall`` searches by
default; when ``memory/global/<key>.md`` also exists, that file wins and the loose one is
reported as refused. A file's optional front matter gives ``category``, ``key`` (overriding the file name)
and ``created``; its body is the content. Unreadable files are skipped with a warning,
and larger files are indexed up to :data:`MAX_FILE_BYTES`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from ..._confine import confined_path, read_confined
from ...errors import MemoryIndexError, PathRefusedError
from ..frontmatter import parse_front_matter
from .index import DocRow, doc_row

__all__ = [
    "DEFAULT_CATEGORY",
    "MAX_FILE_BYTES",
    "ROOT_NAMESPACE",
    "FileEntry",
    "read_memory_file",
    "scan_memory_folder",
]

DEFAULT_CATEGORY = "note"
ROOT_NAMESPACE = "global"
"""The namespace of a note put straight under ``memory/`` (no namespace folder)."""
#: Larger memory files are indexed up to this size.
MAX_FILE_BYTES = 1 << 20

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileEntry:
    """One memory file as the last scan saw it."""

    path: Path
    mtime_ns: int
    size: int
    namespace: str
    key: str
    root: Path
    """The resolved folder the file must stay in (the tree's), checked again on reading."""
    allow_outside_links: bool = False


def scan_memory_folder(
    root: Path, *, allow_outside_links: bool = False
) -> tuple[dict[str, FileEntry], set[str], list[tuple[str, str]]]:
    """Stat every ``root/memory/<namespace>/<key>.md``, by ``namespace/file`` path; also
    return the namespaces whose folder could not be listed, and what was refused (links
    leading out of ``root``, special files) with the reason, for the caller to report."""
    memory = root / "memory"
    files: dict[str, FileEntry] = {}
    unlisted: set[str] = set()
    refused: list[tuple[str, str]] = []
    if not memory.is_dir():
        return files, unlisted, refused
    resolved = root.resolve()
    if _refused(resolved, memory, "", refused, allow_outside_links):
        return files, unlisted, refused
    try:
        namespaces = sorted(os.scandir(memory), key=lambda e: e.name)
    except OSError as exc:
        raise MemoryIndexError(
            f"Cannot list the memory folder {memory} ({exc.strerror or exc}); fix its permissions."
        ) from exc
    loose: list[os.DirEntry[str]] = []
    for folder in namespaces:
        if folder.name.startswith(".") or folder.name == "*":
            continue
        if not _is_folder(folder):
            loose.append(folder)
            continue
        if folder.is_symlink() and _refused(
            resolved, Path(folder.path), folder.name, refused, allow_outside_links
        ):
            continue
        try:
            entries = list(os.scandir(folder.path))
        except OSError as exc:
            _log.warning("Skipping memory folder %s: %s", folder.path, exc)
            unlisted.add(folder.name)
            continue
        for entry in entries:
            rel = f"{folder.name}/{entry.name}"
            _add_note(files, refused, entry, folder.name, rel, resolved, allow_outside_links)
    for entry in loose:
        # A loose note of the same key as a file in memory/global/ would replace it in
        # the index: the namespace folder wins, and the loose note is reported.
        if f"{ROOT_NAMESPACE}/{entry.name}" in files:
            refused.append(
                (entry.name, f"memory/{ROOT_NAMESPACE}/{entry.name} has the same key; rename it")
            )
            continue
        _add_note(files, refused, entry, ROOT_NAMESPACE, entry.name, resolved, allow_outside_links)
    return files, unlisted, refused


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _add_note(
    files: dict[str, FileEntry],
    refused: list[tuple[str, str]],
    entry: os.DirEntry[str],
    namespace: str,
    rel: str,
    root: Path,
    allow_outside_links: bool = False,
) -> None:
    """Record ``entry`` as the note ``rel`` of ``namespace`` when it is one."""
    name = entry.name
    if name.startswith(".") or not name.lower().endswith(".md") or len(name) <= 3:
        return
    try:
        if entry.is_symlink() and _refused(
            root, Path(entry.path), rel, refused, allow_outside_links
        ):
            return
        if entry.is_dir():
            return
        if not entry.is_file():
            refused.append((rel, "it is not a regular file"))
            return
        stat = entry.stat()
    except OSError:
        return
    files[rel] = FileEntry(
        Path(entry.path),
        stat.st_mtime_ns,
        stat.st_size,
        namespace,
        name[:-3],
        root,
        allow_outside_links,
    )


def _refused(
    root: Path, path: Path, rel: str, refused: list[tuple[str, str]], allow_outside: bool
) -> bool:
    """Whether ``path`` must be left out (recorded in ``refused``)."""
    try:
        confined_path(root, path, allow_outside=allow_outside)
    except PathRefusedError as exc:
        reason = str(exc)
    except OSError:
        return False  # a dangling link: nothing to read, nothing to report
    else:
        return False
    refused.append((rel, reason))
    return True


def read_memory_file(entry: FileEntry, rel: str) -> DocRow | None:
    """The document of one memory file (front matter read), ``None`` when unreadable.

    The file is read under the scan's confinement again, on the file actually opened: one
    swapped for a link out of the folder since the scan is not read (nor indexed)."""
    try:
        data, more = read_confined(
            entry.root, entry.path, MAX_FILE_BYTES, allow_outside=entry.allow_outside_links
        )
    except (OSError, PathRefusedError) as exc:
        _log.warning("Skipping memory file %s: %s", entry.path, exc)
        return None
    if more:
        _log.warning("Indexing only the first %d bytes of %s.", MAX_FILE_BYTES, entry.path)
    front = parse_front_matter(data.decode("utf-8", errors="replace"))
    key = (front.get("key") or "").strip() or entry.key
    category = (front.get("category") or "").strip() or DEFAULT_CATEGORY
    created = (front.get("created") or "").strip() or None
    return doc_row(entry.namespace, key, category, front.body.strip(), created, rel)
