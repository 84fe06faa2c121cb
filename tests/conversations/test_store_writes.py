"""The transcript store's writes: an import is all or nothing, and a changed conversation
replaces the old one turn for turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.conversations import NAMESPACE, store_for
from supercontext_lab.errors import MemoryIndexError
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.sources.workspace import Workspace

from .conftest import poster_conversation


def test_an_import_that_cannot_be_indexed_imports_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None

    def broken(self: MemoryTree, records: object) -> int:
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
