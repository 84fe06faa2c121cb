"""The transcript store's reads: the revision follows what is stored."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab.conversations import NAMESPACE, store_for
from supercontext_lab.sources.workspace import Workspace

from .conftest import poster_conversation


def test_the_revision_changes_with_what_is_stored(workspace: Path, tmp_path: Path) -> None:
    ws = Workspace(workspace)
    store = store_for(ws, create=True)
    assert store is not None
    empty = store.revision()
    store.import_conversations([poster_conversation()], ws.memory)
    one = store.revision()
    store.import_conversations([poster_conversation()], ws.memory)
    assert store.revision() == one != empty
    assert store.forget("c1", ws.memory)
    assert store.revision() == empty
    assert not store.forget("c1", ws.memory)
    assert ws.memory.count(NAMESPACE) == 0
