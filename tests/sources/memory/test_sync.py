"""The sync of memory/ into the index: front matter, ignored files, what changed, API documents."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from supercontext_lab.sources.memory import MemoryTree, SyncReport
from supercontext_lab.sources.memory.index import open_index, transaction
from supercontext_lab.sources.memory.schema import SCHEMA_VERSION
from supercontext_lab.sources.memory.seal import Seal
from supercontext_lab.sources.memory.sync import forget_file, sync_folder

from .support import INDEX, keys, write


def test_files_with_front_matter(tmp_path: Path) -> None:
    write(
        tmp_path,
        "global/file-name.md",
        "---\nkey: real-key\ncategory: decision\ncreated: 2024-01-02\n---\nWe chose SQLite.\n",
    )
    write(tmp_path, "global/plain.md", "No front matter; the kernel is Gaussian.")
    write(tmp_path, "skill-x/empty-fm.md", "---\ncategory:\nkey:\n---\nKernel notes for x\n")
    with MemoryTree(tmp_path) as tree:
        assert tree.last_sync == SyncReport(added=3)
        hit = tree.recall("global", "sqlite")[0]
        assert (hit.key, hit.category, hit.created, hit.content) == (
            "real-key",
            "decision",
            "2024-01-02",
            "We chose SQLite.",
        )
        # Both mention "kernel" once; the shorter document ranks first.
        assert [(h.namespace, h.key, h.category) for h in tree.recall("*", "kernel")] == [
            ("skill-x", "empty-fm", "note"),
            ("global", "plain", "note"),
        ]
        assert tree.namespaces() == ["global", "skill-x"]


def test_ignored_files(tmp_path: Path) -> None:
    write(tmp_path, "global/kept.md", "kept marker")
    write(tmp_path, "global/notes.txt", "marker in a txt file")
    write(tmp_path, "global/.hidden.md", "marker in a hidden file")
    write(tmp_path, ".hidden-ns/a.md", "marker in a hidden namespace")
    write(tmp_path, "global/deeper/nested.md", "marker in a nested folder")
    with MemoryTree(tmp_path) as tree:
        assert keys(tree.recall("*", "marker")) == ["kept"]
        assert tree.last_sync == SyncReport(added=1)


def test_a_note_straight_under_memory_belongs_to_global(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "top-level.md").write_text("marker at the top", encoding="utf-8")
    with MemoryTree(tmp_path) as tree:
        hits = tree.recall("global", "marker")
        assert [(hit.namespace, hit.key) for hit in hits] == [("global", "top-level")]
        assert tree.last_sync == SyncReport(added=1)
        (tmp_path / "memory" / "top-level.md").unlink()
        assert tree.sync() == SyncReport(removed=1)


def test_non_utf8_files_are_read_with_replacement_characters(tmp_path: Path) -> None:
    write(tmp_path, "global/latin1.md", "caf\xe9 deadline".encode("latin-1"))
    write(tmp_path, "global/binary.md", bytes(range(256)))
    with MemoryTree(tmp_path) as tree:
        hits = tree.recall("global", "deadline")
        assert [h.content for h in hits] == ["caf\ufffd deadline"]
        assert tree.count() == 2


def test_sync_is_incremental(tmp_path: Path) -> None:
    a = write(tmp_path, "global/a.md", "alpha original")
    write(tmp_path, "global/b.md", "beta")
    write(tmp_path, "other/c.md", "gamma")
    with MemoryTree(tmp_path) as tree:
        assert tree.last_sync == SyncReport(added=3)
        assert tree.sync() == SyncReport(unchanged=3)

        write(tmp_path, "global/d.md", "delta")
        assert tree.sync() == SyncReport(added=1, unchanged=3)
        assert keys(tree.recall("*", "delta")) == ["d"]

        a.write_text("alpha changed and longer", encoding="utf-8")
        assert tree.sync() == SyncReport(updated=1, unchanged=3)
        assert [h.content for h in tree.recall("*", "alpha")] == ["alpha changed and longer"]

        # Same size, new modification time: still noticed.
        a.write_text("alpha CHANGED and longer", encoding="utf-8")
        stat = a.stat()
        os.utime(a, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert tree.sync() == SyncReport(updated=1, unchanged=3)
        assert [h.content for h in tree.recall("*", "alpha")] == ["alpha CHANGED and longer"]

        (tmp_path / "memory" / "other" / "c.md").unlink()
        assert tree.sync() == SyncReport(removed=1, unchanged=3)
        assert tree.recall("*", "gamma") == []
        assert tree.namespaces() == ["global"]


def test_renaming_and_rekeying_files(tmp_path: Path) -> None:
    a = write(tmp_path, "global/a.md", "alpha")
    with MemoryTree(tmp_path) as tree:
        a.rename(a.with_name("renamed.md"))
        assert tree.sync() == SyncReport(added=1, removed=1)
        assert keys(tree.recall("*", "alpha")) == ["renamed"]
        renamed = a.with_name("renamed.md")
        renamed.write_text("---\nkey: explicit\n---\nalpha again", encoding="utf-8")
        assert tree.sync() == SyncReport(updated=1)
        assert keys(tree.recall("*", "alpha")) == ["explicit"]
        assert tree.count() == 1


def test_api_documents_survive_sync(tmp_path: Path) -> None:
    f = write(tmp_path, "global/file.md", "from a file")
    with MemoryTree(tmp_path) as tree:
        tree.add("global", "api", "added through the api")
        tree.add("global", "file", "api version of the file document")
        f.unlink()
        write(tmp_path, "global/new.md", "a new file")
        assert tree.sync() == SyncReport(added=1, removed=1)
        assert sorted(keys(tree.recall("*", "api"))) == ["api", "file"]
        assert tree.count() == 3


def test_reopening_an_up_to_date_index_does_no_work(tmp_path: Path) -> None:
    for i in range(5):
        write(tmp_path, f"global/n{i}.md", f"note {i}")
    with MemoryTree(tmp_path) as tree:
        assert tree.last_sync == SyncReport(added=5)
        tree.add("global", "api", "api note")
    with MemoryTree(tmp_path) as tree:
        assert tree.last_sync == SyncReport(unchanged=5)
        assert not tree.rebuilt
        assert tree.count() == 6


def test_deleted_file_document_returns_when_the_file_changes(tmp_path: Path) -> None:
    f = write(tmp_path, "global/f.md", "fern")
    with MemoryTree(tmp_path) as tree:
        assert tree.delete("global", "f")
        assert tree.sync() == SyncReport(unchanged=1)
        assert tree.recall("*", "fern") == []
        f.write_text("fern and moss", encoding="utf-8")
        assert tree.sync() == SyncReport(updated=1)
        assert keys(tree.recall("*", "fern")) == ["f"]


def test_a_forgotten_file_is_read_again_by_the_next_sync(tmp_path: Path) -> None:
    write(tmp_path, "global/a.md", "alpha")
    with MemoryTree(tmp_path) as tree:
        assert tree.sync() == SyncReport(unchanged=1)
    conn = sqlite3.connect(tmp_path / INDEX, isolation_level=None)
    forget_file(conn, "global/a.md")
    assert conn.execute("SELECT count(*) FROM files").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM docs").fetchone() == (0,)
    conn.close()
    with MemoryTree(tmp_path) as tree:
        assert tree.last_sync == SyncReport(added=1)
        assert keys(tree.recall("*", "alpha")) == ["a"]


def test_a_sync_writes_through_the_connection_it_is_given(tmp_path: Path) -> None:
    write(tmp_path, "global/a.md", "alpha")
    write(tmp_path, "notes/b.md", "---\nkey: beta\ncategory: fact\n---\nbeta body")
    seal = Seal.for_folder(tmp_path, SCHEMA_VERSION)
    conn, _, _ = open_index(tmp_path, seal)
    with transaction(conn):
        report = sync_folder(conn, tmp_path, seal, allow_outside_links=False)
    assert report == SyncReport(added=2)
    seen = conn.execute("SELECT path, namespace, key FROM files ORDER BY path").fetchall()
    assert seen == [("global/a.md", "global", "a"), ("notes/b.md", "notes", "beta")]
    with transaction(conn):
        assert sync_folder(conn, tmp_path, seal, allow_outside_links=False) == SyncReport(
            unchanged=2
        )
    conn.close()


def test_two_files_of_one_key_leave_one_out_and_say_so(tmp_path: Path) -> None:
    write(tmp_path, "global/real.md", "the real note")
    write(tmp_path, "global/claims.md", "---\nkey: real\n---\nclaims the real key")
    with MemoryTree(tmp_path) as tree:
        report = tree.last_sync
        assert report.added == 1
        assert [rel for rel, _ in report.refused] == ["global/claims.md"]
        assert [hit.content for hit in tree.recall("global", "real")] == ["the real note"]
