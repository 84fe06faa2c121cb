"""The index file: opened, rebuilt when it is not this lab's or is damaged, refused when linked."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from supercontext_lab.errors import MemoryIndexError
from supercontext_lab.sources.memory import MemoryTree, SyncReport
from supercontext_lab.sources.memory.index import index_problem, is_damage, open_index, transaction
from supercontext_lab.sources.memory.schema import SCHEMA_VERSION
from supercontext_lab.sources.memory.seal import ENV_INDEX_KEY, Seal

from .support import INDEX, keys, write


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.write_bytes(b"this is not a database" * 100), id="garbage"),
        pytest.param(lambda p: p.write_bytes(b""), id="empty"),
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:1500]), id="truncated"),
        pytest.param(lambda p: p.unlink(), id="deleted"),
    ],
)
def test_damaged_index_is_rebuilt_from_files(tmp_path: Path, damage: object) -> None:
    write(tmp_path, "global/kept.md", "the kernel is Gaussian")
    with MemoryTree(tmp_path) as tree:
        tree.add("global", "api-only", "the kernel bandwidth is two metres")
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"{INDEX}{suffix}").unlink(missing_ok=True)
    damage(tmp_path / INDEX)  # type: ignore[operator]
    with MemoryTree(tmp_path) as tree:
        assert tree.last_sync == SyncReport(added=1)
        assert keys(tree.recall("*", "kernel")) == ["kept"]


def test_other_schema_version_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(tmp_path, "global/kept.md", "the kernel is Gaussian")
    with MemoryTree(tmp_path) as tree:
        tree.add("global", "api-only", "api kernel")
    conn = sqlite3.connect(tmp_path / INDEX)
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with MemoryTree(tmp_path) as tree:
        assert tree.rebuilt
        assert keys(tree.recall("*", "kernel")) == ["kept"]
    assert "schema version 1" in caplog.text
    rebuilt = [r.getMessage() for r in caplog.records if "Rebuilding" in r.getMessage()]
    assert len(rebuilt) == 1 and "\n" not in rebuilt[0]
    # What is lost, counted: the one document no file holds.
    assert (
        "1 document added only through the Python API (global) is in no file and lost" in rebuilt[0]
    )


def test_a_notebooks_private_lab_home_and_the_default_one_share_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A notebook's private lab home, then the default one (the CLI): one user, one index"""
    monkeypatch.setenv(ENV_INDEX_KEY, str(tmp_path / "user" / "index.key"))
    root = tmp_path / "ws"
    write(root, "global/kept.md", "the kernel is Gaussian")
    monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(tmp_path / "supercontext-nb-x1"))
    with MemoryTree(root) as tree:
        tree.add("global", "api-only", "the kernel bandwidth is two metres")
    for home in ("default-home", "supercontext-nb-x2", "default-home"):
        monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(tmp_path / home))
        with MemoryTree(root) as tree:
            assert not tree.rebuilt
            assert sorted(keys(tree.recall("*", "kernel"))) == ["api-only", "kept"]
    assert "Rebuilding" not in caplog.text


def test_an_index_another_user_built_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An index sealed with another user's key (planted, copied): rebuilt, the planted row gone"""
    root = tmp_path / "ws"
    write(root, "global/kept.md", "the kernel is Gaussian")
    monkeypatch.setenv(ENV_INDEX_KEY, str(tmp_path / "them" / "index.key"))
    with MemoryTree(root) as tree:
        tree.add("global", "planted", "the kernel is wired to evil.example")
    monkeypatch.setenv(ENV_INDEX_KEY, str(tmp_path / "me" / "index.key"))
    with MemoryTree(root) as tree:
        assert "not built by this lab for this folder" in str(tree.rebuilt_because)
        assert keys(tree.recall("*", "kernel")) == ["kept"]
    rebuilt = [r.getMessage() for r in caplog.records if "Rebuilding" in r.getMessage()]
    assert len(rebuilt) == 1
    assert (
        "1 document added only through the Python API (global) is in no file and lost" in rebuilt[0]
    )


def test_a_rebuild_that_loses_nothing_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path, "global/kept.md", "the kernel is Gaussian")
    MemoryTree(tmp_path).close()
    monkeypatch.setenv(ENV_INDEX_KEY, str(tmp_path / "other" / "index.key"))
    with MemoryTree(tmp_path) as tree:
        assert tree.rebuilt
    rebuilt = [r.getMessage() for r in caplog.records if "Rebuilding" in r.getMessage()]
    assert len(rebuilt) == 1
    assert "; nothing is lost (the notes from memory/" in rebuilt[0]
    assert "lost" not in rebuilt[0].replace("nothing is lost", "")


def test_unusable_index_folder_raises(tmp_path: Path) -> None:
    (tmp_path / ".supercontext").write_text("a file where the folder should be")
    with pytest.raises(MemoryIndexError, match=r"\.supercontext"):
        MemoryTree(tmp_path)


def test_index_that_cannot_be_replaced_raises(tmp_path: Path) -> None:
    (tmp_path / INDEX).mkdir(parents=True)
    (tmp_path / INDEX / "keep").write_text("x")
    with pytest.raises(MemoryIndexError, match=r"memory\.sqlite3"):
        MemoryTree(tmp_path)


@pytest.mark.parametrize("linked", [".supercontext", ".supercontext/memory.sqlite3"])
def test_a_linked_index_location_is_refused_and_nothing_is_written_there(
    tmp_path: Path, linked: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "ws"
    link = root / linked
    link.parent.mkdir(parents=True)
    target = elsewhere if linked == ".supercontext" else elsewhere / "memory.sqlite3"
    link.symlink_to(target)
    with pytest.raises(MemoryIndexError, match="symbolic link"):
        MemoryTree(root)
    assert list(elsewhere.iterdir()) == []


# -- the file read without writing, the errors, the transactions ---------------------------


def _seal(root: Path) -> Seal:
    return Seal.for_folder(root, SCHEMA_VERSION)


def test_a_problem_is_found_without_writing_anything(tmp_path: Path) -> None:
    seal = _seal(tmp_path)
    assert index_problem(tmp_path, seal) is None
    conn, db_path, rebuilt_because = open_index(tmp_path, seal)
    conn.close()
    assert db_path == tmp_path / INDEX and rebuilt_because is None
    assert index_problem(tmp_path, seal) is None
    foreign = index_problem(tmp_path, Seal.for_folder(tmp_path / "elsewhere", SCHEMA_VERSION))
    assert foreign is not None and "not built by this lab for this folder" in foreign
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE extra(x)")
    conn.commit()
    conn.close()
    before = db_path.read_bytes()
    assert index_problem(tmp_path, seal) == (
        "its tables, indexes or triggers are not the ones this lab creates"
    )
    assert db_path.read_bytes() == before
    db_path.write_bytes(b"not a database at all" * 100)
    garbage = index_problem(tmp_path, seal)
    assert garbage is not None and garbage.startswith("it is not a readable SQLite database")


def test_a_reopened_index_is_used_as_it_is(tmp_path: Path) -> None:
    seal = _seal(tmp_path)
    conn, _, _ = open_index(tmp_path, seal)
    with transaction(conn):
        conn.execute("INSERT INTO meta(key, value) VALUES ('kept', 'yes')")
    conn.close()
    conn, _, rebuilt_because = open_index(tmp_path, seal)
    assert rebuilt_because is None
    assert conn.execute("SELECT value FROM meta WHERE key = 'kept'").fetchone() == ("yes",)
    conn.close()


def test_a_failed_transaction_leaves_nothing(tmp_path: Path) -> None:
    conn, _, _ = open_index(tmp_path, _seal(tmp_path))

    def half_way() -> None:
        with transaction(conn):
            conn.execute("INSERT INTO meta(key, value) VALUES ('half', 'done')")
            raise RuntimeError("stopped half way")

    with pytest.raises(RuntimeError, match="half way"):
        half_way()
    assert conn.execute("SELECT value FROM meta WHERE key = 'half'").fetchone() is None
    assert not conn.in_transaction
    conn.close()


def test_damage_is_told_apart_from_a_busy_or_misused_index() -> None:
    assert is_damage(sqlite3.DatabaseError("database disk image is malformed"))
    assert is_damage(sqlite3.DatabaseError("file is not a database"))
    assert not is_damage(sqlite3.OperationalError("database is locked"))
    assert not is_damage(sqlite3.OperationalError("no such table: docs"))


def test_the_rebuild_warning_stays_one_line_whatever_the_old_index_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A planted index's namespaces, named in the warning: escaped, a few, one line"""
    monkeypatch.setenv(ENV_INDEX_KEY, str(tmp_path / "them" / "index.key"))
    root = tmp_path / "ws"
    with MemoryTree(root) as tree:
        tree.add_many(
            [{"namespace": f"ns{n}", "key": "k", "content": "planted text"} for n in range(8)]
        )
    conn = sqlite3.connect(root / INDEX)
    conn.execute("UPDATE docs SET namespace = 'ns0\nFAKE LOG LINE' WHERE namespace = 'ns0'")
    conn.commit()
    conn.close()
    monkeypatch.setenv(ENV_INDEX_KEY, str(tmp_path / "me" / "index.key"))
    with MemoryTree(root) as tree:
        assert tree.rebuilt and tree.count() == 0
    (rebuilt,) = [r.getMessage() for r in caplog.records if "Rebuilding" in r.getMessage()]
    assert "\n" not in rebuilt and "ns0\\nFAKE LOG LINE" in rebuilt
    assert "8 documents added only through the Python API (" in rebuilt and ", …) are" in rebuilt
    assert "ns7" not in rebuilt
