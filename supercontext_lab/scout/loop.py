"""The scout's run loop: model calls, read-only tool calls, a trace, a bounded envelope.

One run is: build the system prompt and the task message, then call the model up to
``max_iterations`` times, executing the read-only tool calls of each reply concurrently,
until the model answers without tools. With ``iteration_policy = "extended"`` a run that
hits the cap gets one last call without tools asking for the envelope. A wall-clock
timeout bounds the whole run (120 s, unless the model says it needs more: a local CPU
model advertises ``run_timeout_s``). A model that advertises its ``context_tokens`` is
asked for the envelope early, with the same last call, once the conversation fills more
than :data:`CONTEXT_WRAP_UP_SHARE` of its window: a small local model must not run out
of context before it has emitted anything. The final text goes through ``parse_context_bundle`` and
``fit_bundle``; every problem on the way is recorded, never raised.

Read-only is enforced here a second time, at run time: a call to a tool outside the
allowlist, unknown to the registry, or not declared read-only is refused, recorded and
answered to the model as a tool error.
"""

from __future__ import annotations

import concurrent.futures
import math
import threading
import time
from collections.abc import Callable, Sequence

from ..agents.definition import AgentDefinition, default_agent_definition
from ..agents.prompt import build_scout_system_prompt, build_task_message
from ..bundle import (
    ContextBundle,
    bundle_rejection_reason,
    extract_context_bundle,
    fit_bundle,
    parse_context_bundle,
)
from ..errors import ModelError, ModelTimeoutError, ScoutError, ToolNotAllowedError
from ..models.base import ChatModel, Message, ToolCall, Usage
from ..sources.workspace import Workspace
from ..tools.base import ToolRegistry, ToolResult
from ..tools.catalogue import build_scout_registry
from .records import ScoutRun, ScoutStatus, StopCause, TraceStep

__all__ = ["CONTEXT_WRAP_UP_SHARE", "DEFAULT_SCOUT_TIMEOUT_S", "GRACE_INSTRUCTION", "run_scout"]

DEFAULT_SCOUT_TIMEOUT_S = 120.0
"""Wall-clock bound of one scout run, in seconds."""

GRACE_INSTRUCTION = (
    "You have used all your tool calls. Reply now with the single [context_bundle] "
    "envelope built from what you have gathered, and nothing else."
)

CONTEXT_WRAP_UP_SHARE = 0.55
"""Share of a model's advertised context window after which the scout stops gathering:
the next round's tool results and the envelope itself must still fit."""

_PREVIEW_CHARS = 300


_POOL_LOCK = threading.Lock()
_POOL: concurrent.futures.ThreadPoolExecutor | None = None


def _tool_pool() -> concurrent.futures.ThreadPoolExecutor:
    """The thread pool that runs tool calls, created on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = concurrent.futures.ThreadPoolExecutor(
                max_workers=16, thread_name_prefix="scout-tool"
            )
        return _POOL


def _preview(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1] + "…"


class _Run:
    """Mutable state of one run; kept private so ScoutRun stays a plain result."""

    def __init__(
        self,
        definition: AgentDefinition,
        registry: ToolRegistry,
        model: ChatModel,
        timeout_s: float,
        on_step: Callable[[TraceStep], None] | None,
    ) -> None:
        self.definition = definition
        self.registry = registry
        self.model = model
        self.start = time.perf_counter()
        self.deadline = self.start + timeout_s
        self.timeout_s = timeout_s
        self.on_step = on_step
        self.trace: list[TraceStep] = []
        self.usage = Usage()
        self.model_calls = 0
        self.allowed = [
            name
            for name in definition.tools.named
            if (tool := registry.get(name)) is not None and tool.read_only
        ]

    def now_ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000.0

    def remaining(self) -> float:
        return self.deadline - time.perf_counter()

    def context_nearly_full(self) -> int | None:
        """Tokens used by the last call when they fill most of the model's window."""
        window = getattr(self.model, "context_tokens", None)
        last = next((step for step in reversed(self.trace) if step.kind == "model"), None)
        if not isinstance(window, int) or window <= 0 or last is None:
            return None
        return last.tokens if last.tokens > CONTEXT_WRAP_UP_SHARE * window else None

    def record(self, step: TraceStep) -> None:
        self.trace.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def call_model(self, messages: list[Message], iteration: int, *, grace: bool) -> Message:
        started = self.now_ms()
        specs = None if grace else (self.registry.specs(self.allowed) or None)
        try:
            reply = self.model.complete(
                messages,
                tools=specs,
                tool_choice=None,
                temperature=self.definition.temperature,
                timeout=max(self.remaining(), 0.001),
            )
        except ModelError as exc:
            # A failed call is a step too: the trace shows where the run broke.
            self.model_calls += 1
            self.record(
                TraceStep(
                    kind="model",
                    iteration=iteration,
                    started_ms=started,
                    duration_ms=self.now_ms() - started,
                    grace=grace,
                    ok=False,
                    text_preview=_preview(str(exc)),
                )
            )
            raise
        self.model_calls += 1
        self.usage = self.usage + reply.usage
        message = reply.message
        self.record(
            TraceStep(
                kind="model",
                iteration=iteration,
                started_ms=started,
                duration_ms=self.now_ms() - started,
                prompt_tokens=reply.usage.prompt_tokens,
                completion_tokens=reply.usage.completion_tokens,
                finish_reason=reply.finish_reason,
                text_preview=_preview(message.content),
                tool_calls=tuple(call.name for call in message.tool_calls),
                grace=grace,
            )
        )
        return message

    def refusal(self, call: ToolCall) -> str | None:
        try:
            self.registry.check_allowed(call.name, self.definition.tools.named)
        except ToolNotAllowedError as exc:
            return str(exc)
        return None

    def run_tools(self, calls: Sequence[ToolCall], iteration: int) -> list[Message]:
        results: dict[int, tuple[ToolResult, bool, float, float]] = {}
        pending: dict[concurrent.futures.Future[ToolResult], tuple[int, float]] = {}
        # Tool calls of one reply are independent reads, so they run side by side, on a
        # pool shared by every run: starting threads per reply cost more than the reads.
        pool = _tool_pool()
        for index, call in enumerate(calls):
            refusal = self.refusal(call)
            if refusal is not None:
                results[index] = (ToolResult(ok=False, content=refusal), True, self.now_ms(), 0.0)
                continue
            future = pool.submit(self.registry.call, call.name, call.arguments)
            pending[future] = (index, self.now_ms())
        done, not_done = concurrent.futures.wait(pending, timeout=max(self.remaining(), 0))
        for future in done:
            index, started = pending[future]
            results[index] = (future.result(), False, started, self.now_ms() - started)
        for future in not_done:
            # A read past the deadline is abandoned, not awaited: the run must end on time.
            future.cancel()
            index, started = pending[future]
            message = f"tool '{calls[index].name}' did not finish before the scout's time ran out."
            results[index] = (
                ToolResult(ok=False, content=message),
                False,
                started,
                self.now_ms() - started,
            )
        answers: list[Message] = []
        for index, call in enumerate(calls):
            result, refused, started, duration = results[index]
            self.record(
                TraceStep(
                    kind="tool",
                    iteration=iteration,
                    started_ms=started,
                    duration_ms=duration,
                    tool=call.name,
                    arguments=call.arguments,
                    ok=result.ok,
                    refused=refused,
                    result_preview=_preview(result.content),
                )
            )
            content = result.content if result.ok else f"error: {result.content}"
            answers.append(
                Message(role="tool", content=content, tool_call_id=call.id, name=call.name)
            )
        return answers


def run_scout(
    message: str,
    *,
    workspace: Workspace,
    model: ChatModel,
    definition: AgentDefinition | None = None,
    focus: str | None = None,
    registry: ToolRegistry | None = None,
    timeout_s: float | None = None,
    on_step: Callable[[TraceStep], None] | None = None,
) -> ScoutRun:
    """Run the scout once on ``message`` and return its :class:`ScoutRun`.

    Never raises for model or tool failures: they become the run's status, reason and
    problems. ``registry`` defaults to the workspace's read-only tools. ``timeout_s``
    defaults to the model's ``run_timeout_s`` when it has one, else 120 s.
    """
    if timeout_s is None:
        advertised = getattr(model, "run_timeout_s", None)
        timeout_s = (
            float(advertised)
            if isinstance(advertised, int | float) and advertised > 0
            else DEFAULT_SCOUT_TIMEOUT_S
        )
    if not math.isfinite(timeout_s) or timeout_s <= 0:
        # nan would compare false everywhere (no bound at all) and inf overflows timeouts.
        raise ScoutError(f"timeout_s must be a finite number of seconds above 0, not {timeout_s}.")
    definition = definition or default_agent_definition()
    registry = registry or build_scout_registry(workspace)
    run = _Run(definition, registry, model, timeout_s, on_step)
    system_prompt = build_scout_system_prompt(
        definition,
        profile_md=workspace.profile_md,
        memory_md=workspace.memory_md,
        tools=[tool for name in run.allowed if (tool := registry.get(name)) is not None],
        integrations=workspace.integrations,
        workspace_name=workspace.root.name,
        workspace_files=workspace.list_files(),
    )
    task = build_task_message(message, focus=focus, orchestrator_tools=workspace.orchestrator_tools)
    messages = [Message(role="system", content=system_prompt), Message(role="user", content=task)]

    status = ScoutStatus.COMPLETED
    stopped: StopCause | None = None
    reason: str | None = None
    output = ""
    problems: list[str] = []
    finished = False
    try:
        for iteration in range(1, definition.max_iterations + 1):
            if run.remaining() <= 0:
                raise ModelTimeoutError(f"the scout ran past its {timeout_s:g} s time limit")
            used = run.context_nearly_full()
            if used is not None:
                problems.append(
                    f"the model's context was nearly full ({used} tokens), so the envelope "
                    "was asked for early"
                )
                break
            reply = run.call_model(messages, iteration, grace=False)
            messages.append(reply)
            if not reply.tool_calls:
                output = reply.content or ""
                finished = True
                break
            messages.extend(run.run_tools(reply.tool_calls, iteration))
        if not finished:
            if definition.iteration_policy == "extended" and run.remaining() > 0:
                messages.append(Message(role="user", content=GRACE_INSTRUCTION))
                reply = run.call_model(messages, definition.max_iterations + 1, grace=True)
                messages.append(reply)
                output = reply.content or ""
                if reply.tool_calls:
                    problems.append("the final call asked for tools anyway; they were not run")
            elif run.context_nearly_full() is not None:
                status, stopped = ScoutStatus.INCOMPLETE, StopCause.CONTEXT_FULL
                reason = "the model's context window filled up"
            else:
                status, stopped = ScoutStatus.INCOMPLETE, StopCause.ITERATION_CAP
                reason = f"iteration cap reached ({definition.max_iterations} model calls)"
    except ModelTimeoutError as exc:
        status, stopped = ScoutStatus.INCOMPLETE, StopCause.TIMEOUT
        reason = f"timeout: {exc}"
    except ModelError as exc:
        status, stopped = ScoutStatus.FAILED, StopCause.MODEL_ERROR
        reason = f"model error: {exc}"

    envelope: str | None = None
    bundle: ContextBundle | None = None
    if reason is not None:
        problems.insert(0, reason)
    if status is ScoutStatus.COMPLETED:
        extracted = extract_context_bundle(output)
        if extracted is None:
            rejection = bundle_rejection_reason(output) or "no usable envelope"
            problems.append(f"no valid envelope: {rejection}")
        else:
            envelope = fit_bundle(extracted, definition.max_result_chars)
            if envelope != extracted:
                problems.append(
                    f"bundle fitted from {len(extracted)} to {len(envelope)} characters "
                    f"(max_result_chars = {definition.max_result_chars})"
                )
            bundle = parse_context_bundle(envelope)
    problems.extend(
        f"refused tool call: {step.tool}"
        for step in run.trace
        if step.kind == "tool" and step.refused
    )
    # What the workspace refused to read (links out of it, special files) is shown with
    # the run, never dropped silently.
    problems.extend(f"workspace: {line}" for line in workspace.diagnostics)
    return ScoutRun(
        status=status,
        stopped=stopped,
        reason=reason,
        output=output,
        envelope=envelope,
        bundle=bundle,
        problems=problems,
        trace=run.trace,
        usage=run.usage,
        model_calls=run.model_calls,
        elapsed_ms=run.now_ms(),
        model_name=model.name,
        definition_hash=definition.definition_hash(),
        system_prompt=system_prompt,
        task_message=task,
        messages=messages,
    )
