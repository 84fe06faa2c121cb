"""The transcript store: a workspace's past conversations, kept under ``.supercontext/``.

The store is the truth about past conversations; the memory tree only indexes them. What
the index says is never taken on its word: a hit is served only when the store holds that
turn with that very text (:mod:`.recall`), and the index is filled again from the store
whenever it holds fewer turns than the store (a rebuilt index loses every document that
came from no file).

:class:`ConversationStore` is the one object the rest of the lab holds. Its parts are
modules of their own, so that each can be read alone: the file's layout, opening it and
its transactions (:mod:`.store_file`), what it answers (:mod:`.store_reads`) and what
changes it (:mod:`.store_writes`). Filling the index again from the store is neither:
it reads the store and writes only the index, so it is here, where the parts meet.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any

from ..sources.memory import MemoryTree
from .store_file import NAMESPACE, turn_documents
from .store_reads import StoreReads
from .store_writes import StoreWrites

__all__ = ["ConversationStore"]


class ConversationStore(StoreReads, StoreWrites):
    """The past conversations of the workspace folder ``root`` (see the module docstring).

    Safe to share between threads. Raises :class:`ConversationStoreError` naming the file
    when the store cannot be opened or is not one this lab wrote.
    """

    def __repr__(self) -> str:
        return f"ConversationStore({str(self._root)!r})"

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the index -------------------------------------------------------------------------

    def ensure_indexed(self, memory: MemoryTree) -> int:
        """Index every stored turn again when ``memory`` holds fewer turn documents than
        the store holds turns (an index rebuilt from ``memory/`` lost them); returns how
        many documents were written."""
        expected = self.count_turns()
        if expected == 0 or memory.count(NAMESPACE) >= expected:
            return 0
        return self.reindex(memory)

    def reindex(self, memory: MemoryTree, conversation_ids: Sequence[str] | None = None) -> int:
        """Write the turns of ``conversation_ids`` (every conversation for ``None``) into
        ``memory`` again; returns how many documents were written."""
        infos = self.conversations()
        wanted = set(conversation_ids) if conversation_ids is not None else None
        documents: list[dict[str, Any]] = []
        for info in infos:
            if wanted is not None and info.id not in wanted:
                continue
            conversation = self.get(info.id)
            if conversation is not None:
                documents.extend(turn_documents(info.doc, conversation))
        if documents:
            memory.add_many(documents)
        return len(documents)
