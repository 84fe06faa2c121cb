"""Recall at the turn level: memory hits of the ``conversations`` namespace made quotes.

The memory tree finds the *turn* that answers a request (each turn is one document, see
:mod:`.store_file`). Before a hit reaches a model it is checked and completed here:

* it is served only when the store holds that turn with that very text; a hit whose
  conversation is gone is dropped and taken out of the index, one whose text differs is
  dropped and its conversation indexed again;
* a conversation the caller excludes (the thread that is running, which never recalls
  itself) is dropped;
* the turn is quoted with the neighbour that completes it
  (:func:`~supercontext_lab.reading.passages.turn_extent`: a question with its answer, a "Yes,
  that one" with what it answers), each turn labelled with who said it;
* a quoted turn longer than :data:`MAX_TURN_QUOTE_CHARS` is quoted by its passages that
  answer the query, whole sentences, one a line.

What comes out is a :class:`TranscriptHit`: the conversation's id (what a bundle cites,
``(transcript: <id>)``), title and date, the turns quoted and where they are.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConversationStoreError, MemoryIndexError
from ..reading.passages import passages, turn_extent
from ..reading.relevance import request_terms
from ..reading.transcripts import transcript_lines
from ..sources.memory import INDEX_DIR, MemoryHit, MemoryTree
from ..sources.memory.kept import Kept, keep_namespace
from ..sources.workspace import Workspace
from .store import ConversationStore
from .store_file import CATEGORY, NAMESPACE, STORE_FILE, split_key
from .store_reads import StoredTurn

__all__ = [
    "MAX_TURN_QUOTE_CHARS",
    "TranscriptHit",
    "TurnsAround",
    "open_store",
    "resolve_hits",
    "store_for",
    "transcript_text",
    "turns_around",
]

MAX_TURN_QUOTE_CHARS = 1500
"""A quoted turn longer than this is quoted by its passages on the query."""
_PASSAGES_PER_TURN = 3

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TranscriptHit:
    """One recalled turn of a past conversation, with the turns quoted around it."""

    conversation: str
    """The conversation's id: a bundle cites it as ``(transcript: <id>)``."""
    title: str
    date: str | None
    position: int
    """The turn the search found (from 0)."""
    turns: tuple[StoredTurn, ...]
    """The turns quoted: the one found, with the neighbour that completes it."""
    score: float
    key: str
    """The turn's key in the memory index."""

    @property
    def label(self) -> str:
        """The attribution that cites it: ``transcript: <id>``."""
        return f"transcript: {self.conversation}"

    @property
    def text(self) -> str:
        """The quoted turns, one a line: ``User: …`` / ``Assistant: …``."""
        return transcript_text(self.turns)

    def payload(self) -> dict[str, Any]:
        """The hit as ``memory_recall`` hands it to a model."""
        return {
            "namespace": NAMESPACE,
            "key": self.key,
            "category": CATEGORY,
            "transcript": self.conversation,
            "title": self.title,
            "date": self.date,
            "turn": self.position + 1,
            "turns": [turn.position + 1 for turn in self.turns],
            "content": self.text,
            "cite": f"({self.label})",
            "score": round(self.score, 3),
        }


def transcript_text(turns: Iterable[StoredTurn]) -> str:
    """Turns as lines labelled with who said them (``User: …``), as
    :func:`~supercontext_lab.reading.transcripts.transcript_lines` writes them."""
    return transcript_lines((turn.role, turn.content) for turn in turns)


# -- finding a workspace's store --------------------------------------------------------

_stores: weakref.WeakKeyDictionary[Workspace, ConversationStore] = weakref.WeakKeyDictionary()
_stores_lock = threading.Lock()


def open_store(root: str | os.PathLike[str], *, create: bool = True) -> ConversationStore | None:
    """The transcript store of the workspace folder ``root``; with ``create=False``,
    ``None`` when the folder has none yet (nothing is written then)."""
    folder = Path(root)
    if not create and not (folder / INDEX_DIR / STORE_FILE).is_file():
        return None
    return ConversationStore(folder)


def _restore_conversations(memory: MemoryTree) -> int:
    """Index the stored turns again in ``memory``, whose index was just rebuilt."""
    store = open_store(memory.path, create=False)
    if store is None:
        return 0
    with store:
        return store.ensure_indexed(memory)


# A rebuilt index gets the past conversations back at once, from the store that is their
# truth: a listing or a search right after a rebuild finds them (see sources/memory/kept.py).
keep_namespace(Kept(NAMESPACE, "the transcript store", _restore_conversations))


def store_for(workspace: Workspace, *, create: bool = False) -> ConversationStore | None:
    """The transcript store of ``workspace``, opened once per :class:`Workspace` object;
    ``None`` when it has none and ``create`` is false."""
    with _stores_lock:
        store = _stores.get(workspace)
        if store is None:
            store = open_store(workspace.root, create=create)
            if store is not None:
                _stores[workspace] = store
        return store


# -- resolving hits ----------------------------------------------------------------------


def _is_turn(hit: MemoryHit) -> bool:
    return hit.namespace == NAMESPACE and hit.category == CATEGORY


def _shortened(turn: StoredTurn, query: str) -> StoredTurn:
    if len(turn.content) <= MAX_TURN_QUOTE_CHARS:
        return turn
    found = passages(turn.content, request_terms(query), limit=_PASSAGES_PER_TURN)
    if not found:
        return turn
    chosen = sorted(found, key=lambda passage: passage.position)
    return StoredTurn(turn.position, turn.role, "\n".join(p.text for p in chosen), turn.time)


def resolve_hits(
    hits: Sequence[MemoryHit],
    store: ConversationStore | None,
    memory: MemoryTree,
    *,
    query: str = "",
    exclude: Iterable[str] = (),
) -> list[MemoryHit | TranscriptHit]:
    """``hits`` in order, each turn of a past conversation checked against ``store`` and
    made a :class:`TranscriptHit` (see the module docstring); other hits unchanged."""
    excluded = frozenset(exclude)
    located = {hit.key: split_key(hit.key) for hit in hits if _is_turn(hit)}
    infos = store.by_docs([w[0] for w in located.values() if w]) if store is not None else {}
    wanted = [
        (info.id, where[1] - 1, where[1] + 1)
        for where in located.values()
        if where is not None and (info := infos.get(where[0])) is not None
    ]
    stored = store.spans(wanted) if store is not None else {}
    out: list[MemoryHit | TranscriptHit] = []
    gone: list[str] = []
    changed: set[str] = set()
    quoted: set[tuple[str, int, int]] = set()
    for hit in hits:
        if not _is_turn(hit):
            out.append(hit)
            continue
        where = located[hit.key]
        info = infos.get(where[0]) if where is not None else None
        if where is None or info is None:
            # A user's own note filed under memory/conversations/ is a note like any
            # other; a turn document without its conversation is left over.
            if where is None:
                out.append(hit)
            else:
                gone.append(hit.key)
            continue
        if info.id in excluded:
            continue
        position = where[1]
        found = stored.get((info.id, position))
        if found is None and position >= info.turns:
            # A turn the conversation no longer has (an update killed before it took
            # the dropped turns out, by a version that did that after its commit).
            gone.append(hit.key)
            continue
        if found is None or found.content != hit.content:
            changed.add(info.id)
            continue
        ordered = [
            turn
            for p in (position - 1, position, position + 1)
            if (turn := stored.get((info.id, p))) is not None
        ]
        start, end = turn_extent([turn.content for turn in ordered], ordered.index(found))
        window = tuple(_shortened(turn, query) for turn in ordered[start : end + 1])
        span = (info.id, window[0].position, window[-1].position)
        if span in quoted:
            continue
        quoted.add(span)
        out.append(
            TranscriptHit(info.id, info.title, info.date, position, window, hit.score, hit.key)
        )
    _repair(store, memory, gone, changed)
    return out


def _repair(
    store: ConversationStore | None, memory: MemoryTree, gone: Sequence[str], changed: set[str]
) -> None:
    """Take left-over turn documents out of the index and index changed conversations
    again; a failure is logged, never raised (the hits were already dropped)."""
    try:
        for key in gone:
            memory.delete(NAMESPACE, key)
        if changed and store is not None:
            store.reindex(memory, sorted(changed))
    except (MemoryIndexError, ConversationStoreError) as exc:
        _log.warning("Could not repair the index of past conversations: %s", exc)


@dataclass(frozen=True)
class TurnsAround:
    """The turns a run read of one conversation, with their neighbours: what a panel
    shows when its transcript chip is opened."""

    conversation: str
    title: str
    date: str | None
    turns: tuple[StoredTurn, ...]
    """The turns read and up to ``around`` turns on each side, in order."""
    read: frozenset[int]
    """Positions of the turns the run read."""
    total: int
    """How many turns the conversation has."""


def _was_read(turn: StoredTurn, text: str) -> bool:
    line = f"{turn.label}: {turn.content.strip()}"
    return line in text or f"{turn.label}: {turn.content.strip()[:80]}" in text


def turns_around(
    store: ConversationStore, conversation: str, read_text: str, *, around: int = 2
) -> TurnsAround | None:
    """The turns of ``conversation`` whose text is in ``read_text`` (what a run read of
    it, as :func:`transcript_text` writes it) with ``around`` turns on each side; ``None``
    when the store no longer holds the conversation."""
    info = store.info(conversation)
    if info is None:
        return None
    every = store.turns(conversation)
    read = frozenset(turn.position for turn in every if _was_read(turn, read_text))
    if read:
        first, last = max(min(read) - around, 0), max(read) + around
        shown = tuple(turn for turn in every if first <= turn.position <= last)
    else:
        shown = tuple(every[: 2 * around + 1])
    return TurnsAround(info.id, info.title, info.date, shown, read, info.turns)
