"""The memory tools: ``memory_recall`` over the memory tree, ``memory_flavour`` per facet."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..conversations import NAMESPACE as CONVERSATIONS
from ..conversations import TranscriptHit, resolve_hits, store_for
from ..errors import ConversationStoreError, MemoryIndexError, SupercontextError
from ..sources.flavour import FLAVOUR_FACETS, normalise_facet
from ..sources.memory import MAX_RECALL_LIMIT
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


class MemoryFlavourArgs(ToolArgs):
    """Arguments of ``memory_flavour``."""

    flavour: str = Field(min_length=1, description="The facet: " + ", ".join(FLAVOUR_FACETS) + ".")


def memory_recall(context: ToolContext, args: MemoryRecallArgs) -> ToolResult:
    """The best memory hits for the query in one namespace (or ``*``).

    A hit on a past conversation is a turn, checked against the transcript store and
    quoted with the neighbour that completes it; it names its conversation, to be cited
    ``(transcript: <id>)``. The conversations of ``context.exclude_conversations`` (the
    thread that is running) are never returned. With an embedder (``[memory] semantic``)
    the ranking is BM25's fused with the ranking by meaning; when the embedder fails, the
    recall is BM25's alone and the note says why.
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
    hits = None
    if embedder is not None:
        try:
            hits = memory.recall(args.namespace, args.query, limit=limit, embedder=embedder)
        except MemoryIndexError:
            raise
        except SupercontextError as exc:
            problem = f"semantic recall failed, BM25 only: {exc}"
            context.semantic_failed(problem)
    if problem:
        notes.append(problem)
    if hits is None:
        hits = memory.recall(args.namespace, args.query, limit=limit)
    resolved = resolve_hits(
        hits, store, memory, query=args.query, exclude=context.exclude_conversations
    )
    payload: dict[str, Any] = {
        "namespace": args.namespace,
        "query": args.query,
        "hits": [
            hit.payload()
            if isinstance(hit, TranscriptHit)
            else {
                "namespace": hit.namespace,
                "key": hit.key,
                "category": hit.category,
                "content": hit.content,
                "score": round(hit.score, 3),
            }
            for hit in resolved
        ],
    }
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
