"""The memory tools: ``memory_recall`` over the memory tree, ``memory_flavour`` per facet."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..conversations import NAMESPACE as CONVERSATIONS
from ..conversations import ConversationStore, TranscriptHit, resolve_hits, store_for
from ..errors import ConversationStoreError, MemoryIndexError, SupercontextError
from ..reading.transcripts import transcript_lines
from ..sources.flavour import FLAVOUR_FACETS, normalise_facet
from ..sources.memory import MAX_RECALL_LIMIT, MemoryHit, MemoryTree
from ..sources.memory.embedder import MEANING_FLOOR
from .base import ToolArgs, ToolResult
from .context import ToolContext

__all__ = ["MemoryFlavourArgs", "MemoryRecallArgs", "memory_flavour", "memory_recall"]


class MemoryRecallArgs(ToolArgs):
    """Arguments of ``memory_recall``."""

    namespace: str = Field(
        default="global",
        min_length=1,
        description="Memory namespace such as 'global', 'skill-<id>' or 'conversations' "
        "(past conversations); '*' searches all.",
    )
    query: str = Field(min_length=1, description="Words to search for.")
    limit: int = Field(
        default=5, ge=1, description=f"How many hits (at most {MAX_RECALL_LIMIT} are returned)."
    )
    request: str = Field(
        default="",
        description="The request in its own words. With semantic recall on, the passages "
        "of notes closest to it in meaning are returned too, as 'by_meaning'.",
    )


class MemoryFlavourArgs(ToolArgs):
    """Arguments of ``memory_flavour``."""

    flavour: str = Field(min_length=1, description="The facet: " + ", ".join(FLAVOUR_FACETS) + ".")


def memory_recall(context: ToolContext, args: MemoryRecallArgs) -> ToolResult:
    """The best memory hits for the query in one namespace (or ``*``).

    A hit on a past conversation is a turn, checked against the transcript store and
    quoted with the neighbour that completes it; it names its conversation, to be cited
    ``(transcript: <id>)``. The conversations of ``context.exclude_conversations`` (the
    thread that is running) are never returned.

    The hits are BM25's. With an embedder (``[memory] semantic``), ``by_meaning`` holds
    up to ``limit`` units of notes (a sentence, a list item, a table row with its header, a
    turn) closest in meaning to ``request`` (or, without one, to ``query``), with a
    cosine of at least :data:`~supercontext_lab.sources.memory.embedder.MEANING_FLOOR`:
    what a request worded differently from the notes is answered by, for the reader to
    weigh against the hits (:mod:`supercontext_lab.reading.meaning`). When the embedder
    fails, there is no ``by_meaning`` and the note says why.
    """
    limit = min(args.limit, MAX_RECALL_LIMIT)
    workspace = context.workspace
    memory = workspace.memory
    notes: list[str] = []
    try:
        store = store_for(workspace)
        if store is not None and args.namespace in ("*", CONVERSATIONS):
            store.ensure_indexed(memory)
    except ConversationStoreError as exc:
        store = None
        notes.append(f"past conversations cannot be read: {exc}")
    embedder, problem = context.recall_embedder()
    meaning: list[MemoryHit] = []
    if embedder is not None:
        try:
            meaning = memory.recall_by_meaning(
                args.namespace,
                args.request or args.query,
                limit=limit,
                embedder=embedder,
                floor=MEANING_FLOOR,
            )
        except MemoryIndexError:
            raise
        except SupercontextError as exc:
            problem = f"semantic recall failed, BM25 only: {exc}"
            context.semantic_failed(problem)
    if problem:
        notes.append(problem)
    hits = memory.recall(args.namespace, args.query, limit=limit)
    resolved = resolve_hits(
        hits, store, memory, query=args.query, exclude=context.exclude_conversations
    )
    payload: dict[str, Any] = {
        "namespace": args.namespace,
        "query": args.query,
        "hits": [_payload(hit) for hit in resolved],
    }
    if meaning:
        payload["by_meaning"] = _by_meaning(meaning, store, memory, context)
    if not resolved:
        notes.append("no memory matched; try other words or namespace '*'")
    if notes:
        payload["note"] = "; ".join(notes)
    return ToolResult.success(payload)


def memory_flavour(context: ToolContext, args: MemoryFlavourArgs) -> ToolResult:
    """One flavour facet's text; an unknown facet is an error listing the valid ones."""
    facet = normalise_facet(args.flavour)
    if facet is None:
        return ToolResult.failure(
            f"memory_flavour: unknown facet '{args.flavour}'; valid facets: "
            + ", ".join(FLAVOUR_FACETS)
        )
    files = context.workspace.flavour
    content = files.get(facet)
    if content is None:
        # Hand-named files ("coding-style.md", "tech.md") count for their facet.
        content = next((t for n, t in files.items() if normalise_facet(n) == facet), None)
    if content is None:
        return ToolResult.success(
            {"facet": facet, "content": "", "note": f"no flavour/{facet}.md in this workspace"}
        )
    return ToolResult.success({"facet": facet, "content": content.strip()})


def _payload(hit: MemoryHit | TranscriptHit, passage: str = "") -> dict[str, Any]:
    """A hit as the tool hands it over; with ``passage``, quoting only that unit of it
    (a turn's with its speaker)."""
    if isinstance(hit, TranscriptHit):
        payload = hit.payload()
        if passage:
            turn = next(turn for turn in hit.turns if turn.position == hit.position)
            payload["content"] = transcript_lines([(turn.role, passage)])
            payload["turns"] = [hit.position + 1]
        return payload
    return {
        "namespace": hit.namespace,
        "key": hit.key,
        "category": hit.category,
        "content": passage or hit.content,
        "score": round(hit.score, 3),
    }


def _by_meaning(
    found: list[MemoryHit],
    store: ConversationStore | None,
    memory: MemoryTree,
    context: ToolContext,
) -> list[dict[str, Any]]:
    """The units found by meaning, best first, each checked as a hit is (a past turn
    against its conversation, never the running thread's), quoted as the unit alone: a
    note's hit carries its unit; a turn, quoted once, its closest unit."""
    closest: dict[str, str] = {}
    for hit in found:
        if hit.namespace == CONVERSATIONS:
            closest.setdefault(hit.key, hit.passage)
    resolved = resolve_hits(found, store, memory, exclude=context.exclude_conversations)
    return [
        _payload(hit, closest.get(hit.key, "") if isinstance(hit, TranscriptHit) else hit.passage)
        for hit in resolved
    ]
