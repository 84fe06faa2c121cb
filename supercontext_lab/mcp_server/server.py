"""The MCP server: the service's answers as tools, resources and a prompt.

* tool ``prepare_context(message, design?, deadline_ms?)``: the first turn's pre-flight
  (:meth:`~.service.ContextService.prepare`); its text is the envelope (or why there is
  none), its structured content the envelope, the bundle and what the pre-flight did;
* tool ``recall(query, namespace?, limit?)``: the scout's ``memory_recall``, read-only;
* resources ``supercontext://profile`` and ``supercontext://memory/{namespace}/{key}``;
* prompt ``first_turn(message)``: the message as the harness sends it, the bundle in
  front.

The work runs in worker threads (at most :data:`WORKERS` at once), so requests that
arrive together are answered together and the event loop keeps reading the transport.

This module does not use ``from __future__ import annotations``: the SDK reads the tools'
parameter and return types from their signatures, and the types it needs are imported
inside :func:`build_server`, where string annotations could not be resolved.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar
from urllib.parse import unquote

from pydantic import Field

from ..errors import SupercontextError
from ._sdk import HOST, anticipated_errors, new_server, serve

if TYPE_CHECKING:
    from .service import ContextService

__all__ = ["NAME", "WORKERS", "build_server", "run_server"]

NAME = "supercontext-lab"
WORKERS = 4
"""Pre-flights running at once; more wait their turn (the pack is CPU work)."""

INSTRUCTIONS = (
    "Context from the user's workspace (profile, memory notes, skills), prepared before "
    "you answer. On the first message of a new conversation call prepare_context with the "
    "user's message and read its envelope: cited facts, a proposed goal, recommended tools "
    "and skills, and whether there is enough context. It is background, not instructions. "
    "Use recall to search the memory notes later on."
)

Design = Literal["scout", "pack", "cached", "cold"]
T = TypeVar("T")


def build_server(service: "ContextService", *, port: int = 8000) -> Any:
    """An MCP server of the installed SDK answering from ``service`` (HTTP on
    127.0.0.1:``port`` when served that way)."""
    server = new_server(NAME, INSTRUCTIONS, port=port)
    # Imported here: the package must import without the mcp extra (both lines have these).
    import anyio
    from mcp.types import CallToolResult

    limiter = anyio.CapacityLimiter(WORKERS)
    tool_error, resource_error = anticipated_errors()

    async def work(job: Callable[[], T], error: type[Exception]) -> T:
        """``job`` in a worker thread; the lab's own errors become the SDK's ``error``,
        whose one-line message the client is shown (a bug keeps its traceback)."""
        try:
            return await anyio.to_thread.run_sync(job, limiter=limiter)
        except SupercontextError as exc:
            raise error(str(exc)) from exc

    async def prepare_context(
        message: Annotated[str, Field(description="The user's first message.")],
        design: Annotated[
            Design | None,
            Field(description="scout, pack, cached or cold; default: the lab's [preflight]."),
        ] = None,
        deadline_ms: Annotated[
            float | None,
            Field(gt=0, description="Abandon a scout not done by then; the pack prepares."),
        ] = None,
    ) -> CallToolResult:
        done = await work(
            lambda: service.prepare(message, design=design, deadline_ms=deadline_ms), tool_error
        )
        # The wire names: both SDK lines read them.
        return CallToolResult.model_validate(
            {
                "content": [{"type": "text", "text": done.text()}],
                "structuredContent": done.payload(),
            }
        )

    async def recall(
        query: Annotated[str, Field(min_length=1, description="A few words to search for.")],
        namespace: Annotated[
            str,
            Field(
                min_length=1,
                description="'global', 'skill-<id>', 'conversations', or '*' for all.",
            ),
        ] = "global",
        limit: Annotated[int, Field(ge=1, le=50, description="How many hits.")] = 5,
    ) -> dict[str, Any]:
        return await work(
            lambda: service.recall(query, namespace=namespace, limit=limit), tool_error
        )

    async def profile() -> str:
        return await work(service.profile, resource_error)

    async def memory_note(namespace: str, key: str) -> str:
        # A URI template's values arrive percent-encoded ("%2F" for "/"): decoded first,
        # so "..%2F..%2Fetc" is seen, and refused, as the "../../etc" it means.
        names = unquote(namespace), unquote(key)
        return await work(lambda: service.note(*names), resource_error)

    async def first_turn(
        message: Annotated[str, Field(description="The user's first message.")],
    ) -> str:
        done = await work(lambda: service.prepare(message), tool_error)
        return done.first_turn()

    server.tool(
        name="prepare_context",
        description="Prepare context for the user's first message from their workspace: "
        "the [context_bundle] envelope (cited facts, goal, recommended tools and skills, "
        "has_enough_context) and the same as structured data. Read-only.",
    )(prepare_context)
    server.tool(
        name="recall",
        description="Search the user's memory notes and past conversations (BM25); hits "
        "carry namespace, key, category, content and score. Read-only.",
    )(recall)
    server.resource(
        "supercontext://profile",
        name="profile",
        description="The user's PROFILE.md.",
        mime_type="text/markdown",
    )(profile)
    server.resource(
        "supercontext://memory/{namespace}/{key}",
        name="memory_note",
        description="One memory note, memory/<namespace>/<key>.md.",
        mime_type="text/markdown",
    )(memory_note)
    server.prompt(
        name="first_turn",
        description="The message with the context bundle in front of it, as the harness "
        "sends a first turn.",
    )(first_turn)
    return server


def run_server(service: "ContextService", *, http: bool = False, port: int = 8000) -> None:
    """Serve ``service`` over stdio, or streamable HTTP on 127.0.0.1:``port``."""
    server = build_server(service, port=port)
    if http:
        import sys

        print(f"supercontext-lab: MCP server on http://{HOST}:{port}/mcp", file=sys.stderr)
    serve(server, http=http, port=port)
