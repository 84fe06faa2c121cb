"""The memory files: ``memory/<namespace>/<key>.md`` in a tree's folder, found and read.

A note put straight under ``memory/`` (``memory/<key>.md``, no namespace folder) belongs
to :data:`ROOT_NAMESPACE`, ``global``, the namespace ``memory_recall`` searches by
default; when ``memory/global/<key>.md`` also exists, that file wins and the loose one is
reported as refused. A file's optional front matter gives ``category``, ``key``
(overriding the file name) and ``created``; its body is the content. Unreadable files are
skipped with a warning, and larger files are indexed up to :data:`MAX_FILE_BYTES`.

Two files of a namespace that come to the same key (``evil.md`` whose front matter says
``key: budget`` beside ``budget.md``) would replace each other in the index, and one would
be cited under the other's name: :func:`keys_left_out` says which of them is left out
and why (and leaves out a key holding a line break, a control or an invisible character). The file named after the key keeps it; a file that only claims it in its front
matter is not indexed (and when no file is named after it, none of them is).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..._confine import confined_path, read_confined
from ..._text import NOT_PLAIN, plain_name, visible
from ...errors import MemoryIndexError, PathRefusedError
from ..frontmatter import parse_front_matter
from .rows import DocRow, doc_row
from .seal import Seal

__all__ = [
    "DEFAULT_CATEGORY",
    "MAX_FILE_BYTES",
    "ROOT_NAMESPACE",
    "FileEntry",
    "file_entry",
    "keys_left_out",
    "note_keys",
    "read_current",
    "read_memory_file",
    "scan_memory_folder",
    "source_hash",
    "survey_notes",
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
        if not plain_name(folder.name):
            refused.append((f"{folder.name}/", NOT_PLAIN))
            continue
        try:
            entries = list(os.scandir(folder.path))
        except OSError as exc:
            _log.warning("Skipping memory folder %s: %s", visible(folder.path), exc)
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
    if not plain_name(name):
        refused.append((rel, NOT_PLAIN))
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


def _read(entry: FileEntry) -> bytes | None:
    """The bytes of a memory file, read under the scan's confinement again, on the file
    actually opened (one swapped for a link out of the folder since is not read);
    ``None`` when it cannot be read."""
    try:
        data, more = read_confined(
            entry.root, entry.path, MAX_FILE_BYTES, allow_outside=entry.allow_outside_links
        )
    except (OSError, PathRefusedError) as exc:
        _log.warning("Skipping memory file %s: %s", visible(str(entry.path)), exc)
        return None
    if more:
        _log.warning(
            "Indexing only the first %d bytes of %s.", MAX_FILE_BYTES, visible(str(entry.path))
        )
    return data


def source_hash(data: bytes) -> str:
    """The content hash a row keeps of the bytes of the file it was read from."""
    return hashlib.sha256(data).hexdigest()


def _document(entry: FileEntry, rel: str, data: bytes, seal: Seal) -> DocRow:
    front = parse_front_matter(data.decode("utf-8", errors="replace"))
    key = (front.get("key") or "").strip() or entry.key
    category = (front.get("category") or "").strip() or DEFAULT_CATEGORY
    created = (front.get("created") or "").strip() or None
    return doc_row(
        entry.namespace,
        key,
        category,
        front.body.strip(),
        created,
        rel,
        seal=seal,
        source_hash=source_hash(data),
    )


def read_memory_file(entry: FileEntry, rel: str, seal: Seal) -> DocRow | None:
    """The document of one memory file (front matter read, sealed with ``seal``), ``None``
    when unreadable."""
    data = _read(entry)
    return None if data is None else _document(entry, rel, data, seal)


def read_current(entry: FileEntry) -> bytes | None:
    """The bytes of a memory file now, for checking a row against it (``None``: gone,
    refused or unreadable)."""
    try:
        data, _ = read_confined(
            entry.root, entry.path, MAX_FILE_BYTES, allow_outside=entry.allow_outside_links
        )
    except (OSError, PathRefusedError):
        return None
    return data


def file_entry(root: Path, rel: str, *, allow_outside_links: bool = False) -> FileEntry | None:
    """The memory file ``rel`` (as a row's ``path`` names it) of the folder ``root``, as a
    scan would see it now; ``None`` when it is gone or is not a regular file."""
    namespace, slash, name = rel.partition("/")
    if not slash:
        namespace, name = ROOT_NAMESPACE, rel
    path = root / "memory" / rel
    try:
        stat = path.stat()
    except (OSError, ValueError):
        return None
    if not os.path.isfile(path) or not name.lower().endswith(".md"):
        return None
    return FileEntry(
        path,
        stat.st_mtime_ns,
        stat.st_size,
        namespace,
        name[:-3],
        root.resolve(),
        allow_outside_links,
    )


def note_keys(files: Mapping[str, FileEntry]) -> dict[str, tuple[str, str]]:
    """The ``(namespace, key)`` each memory file is indexed under, front matter read (for
    ``workspace check``, which indexes nothing); unreadable files are left out."""
    keys: dict[str, tuple[str, str]] = {}
    for rel, entry in files.items():
        data = _read(entry)
        if data is not None:
            front = parse_front_matter(data.decode("utf-8", errors="replace"))
            keys[rel] = (entry.namespace, (front.get("key") or "").strip() or entry.key)
    return keys


def keys_left_out(keys: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """The files left out for their key, each with the reason: a front-matter key that is
    not a plain name (a line break, a control or an invisible character: a citation of it
    would show one name and mean another), or one another file of the namespace has (see
    the module docstring). ``keys`` maps a file (its path under ``memory/``) to the
    ``(namespace, key)`` it would be indexed under."""
    by_key: dict[tuple[str, str], list[str]] = defaultdict(list)
    left_out: dict[str, str] = {}
    for rel, (namespace, key) in keys.items():
        if plain_name(key):
            by_key[namespace, key].append(rel)
        else:
            left_out[rel] = (
                f"its front-matter key '{visible(key)}' holds a line break, a control or an "
                "invisible character; change it"
            )
    for (_namespace, key), rels in by_key.items():
        if len(rels) < 2:
            continue
        owners = [rel for rel in rels if rel.rpartition("/")[2][:-3] == key]
        for rel in sorted(rels):
            if rel in owners:
                continue
            if owners:
                left_out[rel] = (
                    f"its front matter gives it the key '{key}' of memory/{owners[0]}, and "
                    "neither note is served under the other's name; change the key"
                )
            else:
                others = ", ".join(f"memory/{other}" for other in sorted(rels) if other != rel)
                left_out[rel] = (
                    f"{others} has the key '{key}' too, and none of them is served under "
                    "it; change the keys"
                )
    return left_out


def survey_notes(
    root: Path, *, allow_outside_links: bool = False
) -> tuple[dict[str, FileEntry], list[tuple[str, str]]]:
    """The memory files of ``root`` that would be indexed, and those left out with the
    reason (refused by the scan, or a key another file has), every file's front matter
    read and nothing written: what ``workspace check`` reports."""
    files, _unlisted, refused = scan_memory_folder(root, allow_outside_links=allow_outside_links)
    collisions = keys_left_out(note_keys(files))
    kept = {rel: entry for rel, entry in files.items() if rel not in collisions}
    return kept, [*refused, *sorted(collisions.items())]
