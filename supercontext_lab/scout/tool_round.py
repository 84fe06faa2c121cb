"""One round of the scout's tool calls: each refused or run, side by side, within the run's time.

Read-only is enforced here a second time, at run time: a call to a tool outside the
allowlist, unknown to the registry, or not declared read-only is refused, and its refusal
is the answer the model gets. The calls of one reply are independent reads, so they run on
a pool shared by every run (starting threads per reply cost more than the reads); a read
still running when the run's time is up is abandoned, not awaited.

What the model is sent of the round's results fits the room its context window leaves
(:func:`fit_answers`): a megabyte note a recall found is cut to the passages that answer
the request, never sent whole. The run keeps every result whole for its trace and its
sources.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from ..errors import ToolNotAllowedError
from ..models.base import Message, ToolCall
from ..models.fitting import fit_texts
from ..models.window import MIN_RESULT_BYTES, conversation_bytes
from ..reading.relevance import RequestTerms
from ..tools.base import ToolRegistry, ToolResult

__all__ = ["CallOutcome", "fit_answers", "run_tool_calls", "tool_pool"]

_POOL_LOCK = threading.Lock()
_POOL: concurrent.futures.ThreadPoolExecutor | None = None


def tool_pool() -> concurrent.futures.ThreadPoolExecutor:
    """The thread pool that runs tool calls, created on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = concurrent.futures.ThreadPoolExecutor(
                max_workers=16, thread_name_prefix="scout-tool"
            )
        return _POOL


@dataclass(frozen=True)
class CallOutcome:
    """What became of one tool call: its result, whether it was refused, and when (in the
    run's milliseconds) it started and how long it took."""

    result: ToolResult
    refused: bool
    started_ms: float
    duration_ms: float
    late: bool = False
    """Not done when the time was up: abandoned, its result the line saying so."""


def _refusal(registry: ToolRegistry, call: ToolCall, allowlist: Collection[str]) -> str | None:
    try:
        registry.check_allowed(call.name, allowlist)
    except ToolNotAllowedError as exc:
        return str(exc)
    return None


def run_tool_calls(
    calls: Sequence[ToolCall],
    *,
    registry: ToolRegistry,
    allowlist: Collection[str],
    remaining: Callable[[], float],
    now_ms: Callable[[], float],
) -> list[CallOutcome]:
    """The outcome of each of ``calls``, in their order.

    ``remaining`` gives the run's seconds left, ``now_ms`` the run's clock; a call not
    done when the time is up ends as a failed, ``late`` result saying so.
    """
    outcomes: dict[int, CallOutcome] = {}
    pending: dict[concurrent.futures.Future[ToolResult], tuple[int, float]] = {}
    pool = tool_pool()
    for index, call in enumerate(calls):
        refusal = _refusal(registry, call, allowlist)
        if refusal is not None:
            outcomes[index] = CallOutcome(
                ToolResult(ok=False, content=refusal), True, now_ms(), 0.0
            )
            continue
        future = pool.submit(registry.call, call.name, call.arguments)
        pending[future] = (index, now_ms())
    done, not_done = concurrent.futures.wait(pending, timeout=max(remaining(), 0))
    for future in done:
        index, started = pending[future]
        outcomes[index] = CallOutcome(future.result(), False, started, now_ms() - started)
    for future in not_done:
        future.cancel()
        index, started = pending[future]
        late = f"tool '{calls[index].name}' did not finish before the scout's time ran out."
        outcomes[index] = CallOutcome(
            ToolResult(ok=False, content=late), False, started, now_ms() - started, late=True
        )
    return [outcomes[index] for index in range(len(calls))]


def fit_answers(
    calls: Sequence[ToolCall], contents: Sequence[str], room: int, request: RequestTerms
) -> list[Message]:
    """The tool messages answering ``calls`` with ``contents``, as the model is sent them:
    together at most ``room`` bytes, the short answers whole and the long ones sharing the
    rest, each cut to the passages that answer ``request``
    (:func:`~supercontext_lab.models.fitting.fit_texts`). A share is never below
    :data:`~supercontext_lab.models.window.MIN_RESULT_BYTES` while the room holds that much
    for each answer."""

    def answer(call: ToolCall, content: str) -> Message:
        return Message(role="tool", content=content, tool_call_id=call.id, name=call.name)

    # What each message weighs around its content (role, call id, name) is room taken.
    room -= conversation_bytes([answer(call, "") for call in calls])
    floor = min(MIN_RESULT_BYTES, max(room, 0) // max(len(contents), 1))
    fitted = fit_texts(contents, room, request, floor=floor)
    return [answer(call, content) for call, content in zip(calls, fitted, strict=True)]
