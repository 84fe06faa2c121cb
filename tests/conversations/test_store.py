"""The transcript store and recall: an index that is never taken on its word, filled again
from the store when it lost turns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from supercontext_lab.conversations import (
    NAMESPACE,
    import_conversations,
    open_store,
    resolve_hits,
    store_for,
)
from supercontext_lab.conversations.store_file import doc_prefix, turn_key
from supercontext_lab.sources.memory.seal import ENV_INDEX_KEY
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.tools.context import ToolContext
from supercontext_lab.tools.memory import MemoryRecallArgs, memory_recall

from .conftest import Ran, poster_conversation, stored


def _recall(workspace: Workspace, query: str, namespace: str = "*") -> list[dict[str, object]]:
    result = memory_recall(
        ToolContext(workspace), MemoryRecallArgs(namespace=namespace, query=query)
    )
    assert result.ok
    hits = result.data["hits"]  # type: ignore[index]
    assert isinstance(hits, list)
    return hits


def test_a_rebuilt_index_gets_every_turn_back_from_the_store(workspace: Path) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    store.import_conversations([poster_conversation()], ws.memory)
    ws.memory.close()
    for suffix in ("", "-wal", "-shm"):
        (workspace / ".supercontext" / f"memory.sqlite3{suffix}").unlink(missing_ok=True)
    fresh = Workspace(workspace)  # a new index: the notes, and the turns back from the store
    assert fresh.memory.count(NAMESPACE) == 2
    hits = _recall(fresh, "palette Lund poster")
    assert [hit["transcript"] for hit in hits] == ["c1"]
    assert fresh.memory.count(NAMESPACE) == 2


def test_a_hit_the_store_does_not_hold_is_never_served(workspace: Path) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    store.import_conversations([poster_conversation()], ws.memory)
    doc = doc_prefix("c1")
    # The index says something the store does not: the row is dropped and indexed again.
    ws.memory.add(NAMESPACE, turn_key(doc, 1), "Jonas prints the poster in orange.", "transcript")
    hits = _recall(ws, "Jonas prints poster orange")
    assert all("orange" not in str(hit["content"]) for hit in hits)
    assert _recall(ws, "Jonas prints poster")[0]["content"] == (
        "User: Which palette did we choose for the Lund symposium poster?\n"
        "Assistant: The teal palette; Jonas prints the poster on 3 June."
    )
    # A turn left in the index for a conversation the store no longer holds is taken out.
    ws.memory.add(
        NAMESPACE, turn_key(doc_prefix("gone"), 0), "Orange posters forever.", "transcript"
    )
    assert all("forever" not in str(hit["content"]) for hit in _recall(ws, "posters forever"))
    assert ws.memory.recall(NAMESPACE, "forever") == []


def test_a_turn_past_the_end_of_its_conversation_is_taken_out_when_met(workspace: Path) -> None:
    """What a killed update left behind (the turns a shorter conversation dropped) is
    never served, and leaves the index the first time a search meets it."""
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    store.import_conversations([poster_conversation()], ws.memory)
    stale = turn_key(doc_prefix("c1"), 7)
    ws.memory.add(NAMESPACE, stale, "Jonas prints the orange poster twice.", "transcript")
    assert ws.memory.count(NAMESPACE) == 3
    assert all("orange" not in str(hit["content"]) for hit in _recall(ws, "orange poster twice"))
    assert ws.memory.count(NAMESPACE) == 2
    assert ws.memory.recall(NAMESPACE, "orange twice") == []


def test_a_users_own_note_in_the_conversations_namespace_stays_a_note(workspace: Path) -> None:
    folder = workspace / "memory" / "conversations"
    folder.mkdir()
    (folder / "call-with-jonas.md").write_text("Jonas said the poster is teal.\n", "utf-8")
    ws = Workspace(workspace)
    import_conversations_from = store_for(ws, create=True)
    assert import_conversations_from is not None
    import_conversations_from.import_conversations([poster_conversation()], ws.memory)
    hits = _recall(ws, "Jonas poster teal", NAMESPACE)
    kinds = {("transcript" in hit, str(hit["key"])) for hit in hits}
    assert (False, "call-with-jonas") in kinds
    assert any(has for has, _ in kinds)


def test_listing_writes_nothing_in_a_workspace_without_conversations(workspace: Path) -> None:
    assert open_store(workspace, create=False) is None
    ws = Workspace(workspace)
    assert _recall(ws, "freezer")[0]["key"] == "freezer"
    assert not (workspace / ".supercontext" / "conversations.sqlite3").exists()


def test_resolving_keeps_notes_in_place_and_drops_what_is_excluded(workspace: Path) -> None:
    path = workspace.parent / "one.jsonl"
    path.write_text(
        '{"id": "c1", "messages": [{"role": "user", "content": "The freezer key is with Jonas."}]}\n'
        '{"id": "c2", "messages": [{"role": "user", "content": "The freezer alarm rang twice."}]}\n',
        encoding="utf-8",
    )
    import_conversations(path, workspace)
    ws = Workspace(workspace)
    hits = ws.memory.recall("*", "freezer key alarm Jonas")
    resolved = resolve_hits(hits, stored(workspace), ws.memory, exclude=["c1"])
    shown = [getattr(hit, "conversation", None) or hit.key for hit in resolved]  # type: ignore[union-attr]
    assert "c1" not in shown and "c2" in shown and "freezer" in shown


def test_a_rebuilt_index_has_the_conversations_at_once_and_says_nothing_is_lost(
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    cli: Callable[..., Ran],
) -> None:
    """A rebuild (another user's index here) gets the turns back before anything reads it"""
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    store.import_conversations([poster_conversation()], ws.memory)
    ws.memory.close()
    monkeypatch.setenv(ENV_INDEX_KEY, str(workspace.parent / "other-user" / "index.key"))
    listed = cli("memory", "list", "--workspace", str(workspace))
    assert listed.code == 0, listed.err
    assert "conversations: 2 documents" in listed.out.splitlines()
    rebuilt = [r.getMessage() for r in caplog.records if "Rebuilding" in r.getMessage()]
    assert len(rebuilt) == 1
    assert "nothing is lost" in rebuilt[0]
    assert "the conversations from the transcript store" in rebuilt[0]
    with Workspace(workspace).memory as memory:  # no second rebuild, nothing to restore
        assert not memory.rebuilt and memory.count(NAMESPACE) == 2
