"""No data lost, continued: a corrupt ``config.toml`` is reported (naming the file and the
way out), never reset; a deleted or damaged memory index is rebuilt from ``memory/``,
loudly; an index that cannot be rebuilt says how to fix it."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from supercontext_lab.config import (
    config_path,
    get_setting,
    get_super_context_enabled,
    set_super_context_enabled,
)
from supercontext_lab.errors import ConfigError, MemoryIndexError
from supercontext_lab.harness import Thread
from supercontext_lab.routes import get_model_route
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.tools import web

from .support import ORCHESTRATOR_REPLY, Sandbox, fingerprint, run_turn, write

# ---------------------------------------------------------------------- corrupt config

CORRUPT_CONFIGS: list[tuple[str, bytes, set[str]]] = [
    ("toml-syntax", b"[context\nsuper_context_enabled = true\n", {"flag", "route", "setting", "set"}),
    ("not-utf8", b"\xff\xfe[context]\n", {"flag", "route", "setting", "set"}),
    ("flag-not-bool", b'[context]\nsuper_context_enabled = "yes"\n', {"flag", "route", "setting", "set"}),
    ("context-not-table", b"context = 1\n", {"flag", "route", "setting", "set"}),
    ("models-not-table", b"models = []\n", {"flag", "route", "setting", "set"}),
    ("route-not-table", b"[models]\nburst = 5\n", {"flag", "route", "setting", "set"}),
    ("route-invalid", b'[models.burst]\nkind = "bogus"\n', {"route"}),
    ("route-missing-model", b'[models.burst]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n', {"route"}),
    ("setting-wrong-type", b'[web]\nallow_private_addresses = "yes"\n', {"setting"}),
]  # fmt: skip

OPERATIONS: dict[str, Callable[[], object]] = {
    "flag": get_super_context_enabled,
    "route": lambda: get_model_route("burst"),
    "setting": lambda: get_setting("web.allow_private_addresses", False),
    "set": lambda: set_super_context_enabled(True),
}


@pytest.mark.parametrize(
    ("case", "content", "failing"), CORRUPT_CONFIGS, ids=[c for c, _, _ in CORRUPT_CONFIGS]
)
def test_corrupt_config_is_reported_never_reset(
    case: str, content: bytes, failing: set[str], sandbox: Sandbox, lab_home: Path
) -> None:
    """Corrupt config.toml: an error naming the file and the way out, never a reset."""
    path = config_path()
    write(path, content)
    for name, operation in OPERATIONS.items():
        if name not in failing:
            if name != "set":  # a working write would (rightly) change the file
                operation()
            continue
        with pytest.raises(ConfigError) as caught:
            operation()
        message = str(caught.value)
        assert str(path) in message, message
        assert "fix or delete" in message, message
        assert "\n" not in message
    assert path.read_bytes() == content
    # A thread still starts and answers; what it cannot use it says, naming the file.
    if "flag" in failing:
        with pytest.raises(ConfigError, match="fix or delete"):
            Thread(sandbox.root)
    else:
        turn = run_turn(sandbox.root, None)
        assert turn.result.reply == ORCHESTRATOR_REPLY
        if "route" in failing:
            assert turn.result.preparation == "failed"
            assert str(path) in (turn.result.reason_detail or "")
        if "setting" in failing:
            fetched = web.fetch_url("http://127.0.0.1:9/")
            assert not fetched.ok and str(path) in fetched.content
    assert path.read_bytes() == content


def test_config_that_is_a_folder_is_reported(lab_home: Path) -> None:
    """A config.toml that is a folder."""
    config_path().mkdir(parents=True)
    with pytest.raises(ConfigError, match="cannot read it"):
        get_super_context_enabled()
    with pytest.raises(ConfigError):
        set_super_context_enabled(False)
    assert config_path().is_dir()


# ---------------------------------------------------------------------- the memory index


def _damage(kind: str, index: Path) -> None:
    data = index.read_bytes()
    if kind == "deleted":
        shutil.rmtree(index.parent)
    elif kind == "file-deleted":
        index.unlink()
    elif kind == "garbage":
        index.write_bytes(b"this is not a database at all" * 100)
    elif kind == "empty":
        index.write_bytes(b"")
    elif kind == "truncated":
        index.write_bytes(data[: len(data) // 2])
    elif kind == "pages-zeroed":
        index.write_bytes(data[:4096] + b"\0" * (len(data) - 4096))
    elif kind == "header-zeroed":
        index.write_bytes(b"\0" * 100 + data[100:])
    elif kind in ("old-schema", "foreign-database"):
        with sqlite3.connect(index) as conn:
            if kind == "old-schema":
                conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
            else:
                conn.execute("DROP TABLE meta")
        conn.close()
    elif kind == "wal-garbage":
        index.with_name(index.name + "-wal").write_bytes(b"garbage wal" * 50)
    else:  # pragma: no cover - a typo in the table below
        raise AssertionError(kind)


INDEX_DAMAGE = [
    "deleted", "file-deleted", "garbage", "empty", "truncated", "pages-zeroed",
    "header-zeroed", "old-schema", "foreign-database", "wal-garbage",
]  # fmt: skip


@pytest.mark.parametrize("kind", INDEX_DAMAGE)
def test_memory_index_recovers_from_memory_files(
    kind: str, sandbox: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    """Memory index deleted or damaged: rebuilt from memory/, with a warning."""
    caplog.set_level(logging.WARNING)
    with MemoryTree(sandbox.root) as tree:
        tree.add("global", "api-only", "Added through the Python API only.")
        index = tree.index_path
    memory_files = fingerprint(sandbox.root / "memory")
    _damage(kind, index)
    with MemoryTree(sandbox.root) as tree:
        hits = tree.recall("global", "grant renewal budget")
        assert [hit.key for hit in hits][:1] == ["grant-budget"]
        assert tree.count("skill-grant-budget-check") == 1
        rebuilt = tree.rebuilt
    assert fingerprint(sandbox.root / "memory") == memory_files
    if rebuilt:
        # Never a silent reset: the rebuild is logged with the file and what was lost.
        assert str(index) in caplog.text
        assert "added only through the Python API" in caplog.text
    # The real path: a first turn reads the recovered memory.
    turn = run_turn(sandbox.root, None)
    assert turn.result.prepared, turn.result.reason
    assert "250k EUR" in (turn.result.envelope or "")


def test_memory_index_that_cannot_be_rebuilt_says_how_to_fix_it(sandbox: Sandbox) -> None:
    """A memory index that cannot be rebuilt: an error saying how to fix it."""
    index = sandbox.root / ".supercontext" / "memory.sqlite3"
    index.mkdir(parents=True)  # a folder where the index file belongs
    (index / "keep.txt").write_text("not ours", encoding="utf-8")
    with pytest.raises(MemoryIndexError) as caught:
        MemoryTree(sandbox.root)
    assert str(index) in str(caught.value)
    assert "remove it by hand" in str(caught.value)
    assert (index / "keep.txt").read_text(encoding="utf-8") == "not ours"
    turn = run_turn(sandbox.root, None)  # the turn survives, without memory
    assert turn.result.reply == ORCHESTRATOR_REPLY
    recalls = [step for step in turn.result.trace if step.tool == "memory_recall"]
    assert recalls and not any(step.ok for step in recalls)
