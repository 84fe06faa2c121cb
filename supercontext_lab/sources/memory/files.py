"""The memory files: ``memory/<namespace>/<key>.md`` in a tree's folder, found and read.

A file's optional front matter gives ``category``, ``key`` (overriding the file name)
and ``created``; its body is the content. Unreadable files are skipped with a warning,
and larger files are indexed up to :data:`MAX_FILE_BYTES`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from ...errors import MemoryIndexError
from ..frontmatter import parse_front_matter
from .index import DocRow, doc_row

__all__ = [
    "DEFAULT_CATEGORY",
    "MAX_FILE_BYTES",
    "FileEntry",
    "read_memory_file",
    "scan_memory_folder",
]

DEFAULT_CATEGORY = "note"
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


def scan_memory_folder(root: Path) -> tuple[dict[str, FileEntry], set[str]]:
    """Stat every ``root/memory/<namespace>/<key>.md``, by ``namespace/file`` path; also
    return the namespaces whose folder could not be listed."""
    memory = root / "memory"
    files: dict[str, FileEntry] = {}
    unlisted: set[str] = set()
    if not memory.is_dir():
        return files, unlisted
    try:
        namespaces = sorted(os.scandir(memory), key=lambda e: e.name)
    except OSError as exc:
        raise MemoryIndexError(
            f"Cannot list the memory folder {memory} ({exc.strerror or exc}); fix its permissions."
        ) from exc
    for folder in namespaces:
        if folder.name.startswith(".") or folder.name == "*" or not folder.is_dir():
            continue
        try:
            entries = list(os.scandir(folder.path))
        except OSError as exc:
            _log.warning("Skipping memory folder %s: %s", folder.path, exc)
            unlisted.add(folder.name)
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or not name.lower().endswith(".md") or len(name) <= 3:
                continue
            try:
                if not entry.is_file():
                    continue
                stat = entry.stat()
            except OSError:
                continue
            files[f"{folder.name}/{name}"] = FileEntry(
                Path(entry.path), stat.st_mtime_ns, stat.st_size, folder.name, name[:-3]
            )
    return files, unlisted


def read_memory_file(entry: FileEntry, rel: str) -> DocRow | None:
    """The document of one memory file (front matter read), ``None`` when unreadable."""
    try:
        with entry.path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        _log.warning("Skipping memory file %s: %s", entry.path, exc)
        return None
    if len(data) > MAX_FILE_BYTES:
        _log.warning("Indexing only the first %d bytes of %s.", MAX_FILE_BYTES, entry.path)
        data = data[:MAX_FILE_BYTES]
    front = parse_front_matter(data.decode("utf-8", errors="replace"))
    key = (front.get("key") or "").strip() or entry.key
    category = (front.get("category") or "").strip() or DEFAULT_CATEGORY
    created = (front.get("created") or "").strip() or None
    return doc_row(entry.namespace, key, category, front.body.strip(), created, rel)
