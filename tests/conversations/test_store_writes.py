"""The transcript store's writes: an import is all or nothing, and a changed conversation
replaces the old one turn for turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.conversations import (
    NAMESPACE,
    Conversation,
    Turn,
    forget_conversation,
    open_store,
    store_for,
)
from supercontext_lab.errors import MemoryIndexError
from supercontext_lab.sources.memory import MemoryTree, rows
from supercontext_lab.sources.memory import tree as tree_module
from supercontext_lab.sources.workspace import Workspace

from .conftest import poster_conversation


def test_an_import_that_cannot_be_indexed_imports_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None

    def broken(self: MemoryTree, records: object, **removing: object) -> int:
        raise MemoryIndexError("disk full")

    monkeypatch.setattr(MemoryTree, "add_many", broken)
    with pytest.raises(MemoryIndexError, match="disk full"):
        store.import_conversations([poster_conversation()], ws.memory)
    assert store.conversations() == []
    monkeypatch.undo()
    report = store.import_conversations([poster_conversation()], ws.memory)
    assert report.added == ("c1",) and report.turns_indexed == 2


def test_a_shorter_conversation_replaces_the_longer_one_turn_for_turn(workspace: Path) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    store.import_conversations(
        [poster_conversation("c1", "One more thing about the freezer.")], ws.memory
    )
    assert ws.memory.count(NAMESPACE) == 3
    report = store.import_conversations([poster_conversation("c1")], ws.memory)
    assert report.updated == ("c1",)
    assert ws.memory.count(NAMESPACE) == 2
    assert store.count_turns() == 2


# -- a killed update, forgetting ---------------------------------------------------------


def test_an_update_that_fails_in_the_index_keeps_the_old_turns_whole(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turns a shorter conversation drops leave the index in the transaction that
    writes the new ones: a failure there changes neither the index nor the store."""
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    longer = poster_conversation("c1", *(f"Extra turn {i} about the freezer." for i in range(50)))
    store.import_conversations([longer], ws.memory)
    assert ws.memory.count(NAMESPACE) == 52
    deleted: list[str] = []
    real_delete = rows.delete_doc

    def dying(conn: object, namespace: str, key: str) -> bool:
        if len(deleted) == 10:
            raise KeyboardInterrupt  # as a kill would, in the middle of the deletes
        deleted.append(key)
        return real_delete(conn, namespace, key)  # type: ignore[arg-type]

    monkeypatch.setattr(tree_module, "delete_doc", dying)
    with pytest.raises(KeyboardInterrupt):
        store.import_conversations([poster_conversation("c1")], ws.memory)
    assert len(deleted) == 10
    assert ws.memory.count(NAMESPACE) == 52
    assert store.count_turns() == 52
    monkeypatch.undo()
    report = store.import_conversations([poster_conversation("c1")], ws.memory)
    assert report.updated == ("c1",)
    assert ws.memory.count(NAMESPACE) == store.count_turns() == 2


def test_forget_leaves_no_byte_of_the_conversation_in_the_store_or_the_index(
    workspace: Path,
) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    secret = poster_conversation("c1", "The portal password is Qx7kestrel.")
    store.import_conversations([secret, poster_conversation("c2")], ws.memory)
    # Another connection holding the store open keeps its write-ahead log in place.
    with open_store(workspace) as other:
        assert other.info("c1") is not None
        assert store.forget("c1", ws.memory) is True
        assert other.info("c1") is None
        folder = workspace / ".supercontext"
        assert (folder / "conversations.sqlite3-wal").exists()
        for path in folder.iterdir():
            assert b"qx7kestrel" not in path.read_bytes().lower(), path
        assert other.info("c2") is not None
    assert ws.memory.count(NAMESPACE) == 2
    assert store.forget("c1", ws.memory) is False


def test_a_forget_that_cannot_erase_the_index_keeps_the_conversation(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    store.import_conversations([poster_conversation("c1")], ws.memory)

    def broken(self: MemoryTree, namespace: str, keys: object) -> int:
        raise MemoryIndexError("disk full")

    monkeypatch.setattr(MemoryTree, "erase", broken)
    with pytest.raises(MemoryIndexError, match="disk full"):
        store.forget("c1", ws.memory)
    assert store.info("c1") is not None
    monkeypatch.undo()
    assert store.forget("c1", ws.memory) is True
    assert ws.memory.count(NAMESPACE) == 0


def test_forget_conversation_erases_the_lab_homes_cached_replies(
    workspace: Path, lab_home: Path
) -> None:
    """Replies built from the conversation go with it (the Python API does what the
    command line does); others stay."""
    from supercontext_lab.models.base import Message
    from supercontext_lab.models.cache import CachedModel, ResponseCache
    from supercontext_lab.testing import ScriptedModel

    ws = Workspace(workspace)
    import_store = store_for(ws, create=True)
    assert import_store is not None
    import_store.import_conversations([poster_conversation("c1")], ws.memory)
    quoting = [Message(role="user", content="(transcript: c1) Which palette?")]
    other = [Message(role="user", content="Which freezer?")]
    with ResponseCache() as cache:
        model = CachedModel(ScriptedModel(["teal", "minus eighty"]), cache=cache)
        model.complete(quoting)
        model.complete(other)
        assert forget_conversation("c1", ws) is True
        assert model.key_for(quoting) not in cache
        assert model.key_for(other) in cache


# -- a different conversation under a stored id ------------------------------------------


def test_a_different_conversation_under_a_stored_id_is_reported_as_replaced(
    workspace: Path,
) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    store.import_conversations([poster_conversation("c1")], ws.memory)
    grown = store.import_conversations(
        [poster_conversation("c1", "And the frame?")], ws.memory, format="test"
    )
    assert grown.updated == ("c1",) and grown.replaced == () and grown.replacements == ()
    other = Conversation("c1", "Boat", None, (Turn("user", "Is the boat free in May?"),), "test")
    report = store.import_conversations([other], ws.memory, format="test")
    assert report.replaced == ("c1",) and report.updated == ()
    (line,) = report.replacements
    assert line.startswith("c1 took the place of a different conversation")
    assert "'Poster'" in line
    assert report.summary() == "1 conversation from test (1 replaced), 1 turns indexed"
    assert report.to_dict()["replaced"] == ["c1"]
    assert [t.content for t in store.turns("c1")] == ["Is the boat free in May?"]
