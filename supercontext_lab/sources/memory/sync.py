"""Bringing the memory index up to date with the ``memory/`` folder of its tree.

The ``files`` table is what the last sync saw: each file's size, modification time and
the key it was indexed under. A sync reads only the files that are new or whose size or
time changed, so reopening an up-to-date workspace costs one ``stat`` per file. The rows
of a file that disappeared are removed; documents added through the API (rows without a
file) are never touched. A folder that could not be listed keeps what it had.

Two files of one key would replace each other, and a key holding a line break or a hidden
character could not be cited as it reads: such a file is left out (taken out of the index
if it was in it) and reported, as are links leading out of the folder and special files,
with one warning each.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..._text import visible
from .files import keys_left_out, read_memory_file, scan_memory_folder
from .rows import DocRow, optimize_after_bulk, upsert_doc
from .seal import Seal

__all__ = ["SyncReport", "forget_file", "sync_folder"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SyncReport:
    """What one sync of ``memory/`` did, counted in files."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    refused: tuple[tuple[str, str], ...] = ()
    """``(path under memory/, reason)`` of every file or folder left out: links leading
    out of the tree's folder, special files."""


def forget_file(conn: sqlite3.Connection, rel: str) -> None:
    """Remove the row of the memory file ``rel`` and what the sync saw of it, so the
    next sync reads it again if it is there."""
    conn.execute("DELETE FROM docs WHERE path = ?", (rel,))
    conn.execute("DELETE FROM files WHERE path = ?", (rel,))


def sync_folder(
    conn: sqlite3.Connection, root: Path, seal: Seal, *, allow_outside_links: bool
) -> SyncReport:
    """Sync ``root/memory/`` into the index on ``conn`` (inside a write transaction) and
    report what changed; new rows are sealed with ``seal``."""
    files, unlisted, refused = scan_memory_folder(root, allow_outside_links=allow_outside_links)
    for rel, reason in refused:
        _log.warning("Not indexing %s: %s.", visible(f"memory/{rel}".rstrip("/")), reason)
    known = {
        row[0]: row[1:]
        for row in conn.execute("SELECT path, mtime_ns, size, namespace, key FROM files")
    }
    removed = 0
    for rel in sorted(set(known) - set(files)):
        if rel.split("/", 1)[0] in unlisted:
            continue  # its folder could not be listed: keep what we had
        forget_file(conn, rel)
        removed += 1
    # The key of every file: an unchanged one keeps the key it was indexed under,
    # a new or changed one is read.
    keys: dict[str, tuple[str, str]] = {}
    rows: dict[str, DocRow] = {}
    for rel in sorted(files):
        entry = files[rel]
        old = known.get(rel)
        if old is not None and (old[0], old[1]) == (entry.mtime_ns, entry.size):
            keys[rel] = (old[2], old[3])
            continue
        row = read_memory_file(entry, rel, seal)
        if row is not None:
            rows[rel] = row
            keys[rel] = (row.namespace, row.key)
    # Two files of one key would replace each other, and a key holding a line
    # break or a hidden character could not be cited as it reads: the file left
    # out is not indexed (and taken out if it was), and reported.
    collisions = keys_left_out(keys)
    for rel, reason in collisions.items():
        refused.append((rel, reason))
        _log.warning("Not indexing %s: %s.", visible(f"memory/{rel}"), reason)
        if rel in known:
            forget_file(conn, rel)
    added = updated = unchanged = 0
    for rel in sorted(files):
        if rel in collisions:
            continue
        row = rows.get(rel)
        if row is None:
            unchanged += rel in keys
            continue
        entry = files[rel]
        old = known.get(rel)
        if old is not None and (old[2], old[3]) != (row.namespace, row.key):
            conn.execute("DELETE FROM docs WHERE path = ?", (rel,))
        upsert_doc(conn, row)
        conn.execute(
            "INSERT OR REPLACE INTO files(path, mtime_ns, size, namespace, key) "
            "VALUES (?, ?, ?, ?, ?)",
            (rel, entry.mtime_ns, entry.size, row.namespace, row.key),
        )
        if old is None:
            added += 1
        else:
            updated += 1
    optimize_after_bulk(conn, added + updated)
    return SyncReport(added, updated, removed, unchanged, tuple(refused))
