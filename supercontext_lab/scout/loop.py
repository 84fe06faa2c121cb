"""The scout's run loop: model calls, read-only tool calls, a trace, a bounded envelope.

One run is: build the system prompt and the task message, then call the model up to
``max_iterations`` times, executing the read-only tool calls of each reply concurrently,
until the model answers without tools. With ``iteration_policy = "extended"`` a run that
hits the cap gets one last call without tools asking for the envelope. A wall-clock
timeout bounds the whole run (120 s, unless the model declares it needs more: a local
CPU model's ``info.run_timeout_s``). A model that declares its ``info.context_tokens`` is
asked for the envelope early, with the same last call, once the conversation fills more
than :data:`CONTEXT_WRAP_UP_SHARE` of its window: a small local model must not run out
of context before it has emitted anything; each round's tool results are cut to the room
its window leaves (:func:`~.tool_round.fit_answers`). Secrets the model boundary removed
from the replies are noted in the run's problems. The final text is settled by
:mod:`.settle` (extracted, fitted, parsed, grounded); every problem on the way is
recorded, never raised.

Before the first model call the harness may run the first gathering round itself
(``prefetch``, see :func:`prefetch_enabled`): the reads the offline scout plans for the
message, recorded as prefetched steps, their results in the model's first request. Every
call gets the run's :class:`~supercontext_lab.models.choices.BundleChoices` (the names and
sources that exist, :mod:`.choices`), which constrained emissions choose from.

Read-only is enforced a second time, at run time, by the round that runs a reply's tool
calls (:mod:`.tool_round`): a refused call is recorded and answered to the model as a
tool error.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from .._text import one_line
from ..agents.definition import AgentDefinition, default_agent_definition
from ..agents.prompt import build_scout_system_prompt, build_task_message
from ..bundle import ContextBundle
from ..errors import ModelError, ModelTimeoutError, ScoutError
from ..models.base import ChatModel, Message, ToolCall, Usage
from ..models.choices import BundleChoices
from ..models.offline.scout import OfflineScoutModel
from ..models.window import ContextBudget
from ..reading.relevance import request_terms
from ..sources.workspace import Workspace
from ..tools.base import ToolRegistry
from ..tools.catalogue import build_scout_registry
from .choices import bundle_choices
from .grounding_report import GroundingReport
from .records import PREVIEW_CHARS, ScoutRun, ScoutStatus, StopCause, TraceStep
from .settle import settle_output
from .sources import RunSources
from .tool_round import fit_answers, run_tool_calls

__all__ = [
    "CONTEXT_WRAP_UP_SHARE",
    "DEFAULT_SCOUT_TIMEOUT_S",
    "GRACE_INSTRUCTION",
    "prefetch_enabled",
    "run_gathered",
    "run_scout",
]

DEFAULT_SCOUT_TIMEOUT_S = 120.0
"""Wall-clock bound of one scout run, in seconds."""

GRACE_INSTRUCTION = (
    "You have used all your tool calls. Reply now with the single [context_bundle] "
    "envelope built from what you have gathered, and nothing else."
)

CONTEXT_WRAP_UP_SHARE = 0.55
"""Share of a model's declared context window after which the scout stops gathering:
the next round's tool results and the envelope itself must still fit."""


# The first gathering round is the offline scout's plan of reads (and references it names).
_PLANNER = OfflineScoutModel(name="offline:prefetch")
_PREFETCH_ROUNDS = 2


def prefetch_enabled(definition: AgentDefinition, model: ChatModel) -> bool:
    """Whether the harness runs the first gathering round before the first model call:
    ``prefetch = "always"``, or ``"auto"`` on a model that declares itself local or
    small (:attr:`~supercontext_lab.models.base.ModelInfo.small`)."""
    if definition.prefetch == "auto":
        return model.info.local or model.info.small
    return definition.prefetch == "always"


def _run_budget(model: ChatModel, timeout_s: float | None) -> float:
    """The run's wall-clock budget: ``timeout_s``, else what the model declares it needs,
    else :data:`DEFAULT_SCOUT_TIMEOUT_S`."""
    if timeout_s is None:
        declared = model.info.run_timeout_s
        timeout_s = declared if declared is not None and declared > 0 else DEFAULT_SCOUT_TIMEOUT_S
    if not math.isfinite(timeout_s) or timeout_s <= 0:
        # nan would compare false everywhere (no bound at all) and inf overflows timeouts.
        raise ScoutError(f"timeout_s must be a finite number of seconds above 0, not {timeout_s}.")
    return float(timeout_s)


class _Run:
    """One run, step by step: :meth:`prompt`, :meth:`gather`, :meth:`grace`, :meth:`finish`.

    Kept private so that :class:`ScoutRun` stays a plain result.
    """

    def __init__(
        self,
        definition: AgentDefinition,
        workspace: Workspace,
        registry: ToolRegistry,
        model: ChatModel,
        timeout_s: float,
        on_step: Callable[[TraceStep], None] | None,
    ) -> None:
        self.definition = definition
        self.workspace = workspace
        self.registry = registry
        self.model = model
        self.start = time.perf_counter()
        self.deadline = self.start + timeout_s
        self.timeout_s = timeout_s
        self.on_step = on_step
        self.trace: list[TraceStep] = []
        self.usage = Usage()
        self.model_calls = 0
        self.redactions = 0
        self.allowed = [
            name
            for name in definition.tools.named
            if (tool := registry.get(name)) is not None and tool.read_only
        ]
        self.system_prompt = ""
        self.task = ""
        self.message = ""
        self.focus = ""
        self.messages: list[Message] = []
        self.status = ScoutStatus.COMPLETED
        self.stopped: StopCause | None = None
        self.reason: str | None = None
        self.output = ""
        self.problems: list[str] = []
        self.sources = RunSources()
        self.grounding: GroundingReport | None = None
        self.unchecked: ContextBundle | None = None

    def now_ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000.0

    def remaining(self) -> float:
        return self.deadline - time.perf_counter()

    def record(self, step: TraceStep) -> None:
        self.trace.append(step)
        if self.on_step is not None:
            self.on_step(step)

    # -- the steps ---------------------------------------------------------------------

    def prompt(self, message: str, focus: str | None) -> None:
        """The system prompt and the task message the conversation starts with."""
        workspace = self.workspace
        self.system_prompt = build_scout_system_prompt(
            self.definition,
            profile_md=workspace.profile_md,
            memory_md=workspace.memory_md,
            tools=[tool for name in self.allowed if (tool := self.registry.get(name)) is not None],
            integrations=workspace.integrations,
            workspace_name=workspace.root.name,
            workspace_files=workspace.list_files(),
        )
        self.task = build_task_message(
            message, focus=focus, orchestrator_tools=workspace.orchestrator_tools
        )
        self.messages = [
            Message(role="system", content=self.system_prompt),
            Message(role="user", content=self.task),
        ]
        self.sources = RunSources.for_run(workspace)
        self.message = message
        self.focus = focus or ""

    def prefetch(self, only: Collection[str] | None = None) -> None:
        """The first gathering round, run by the harness: the reads the offline scout
        plans for this message (with ``only``, those of these tools). Their results join
        the conversation as the answer to a first tool-calling turn, so the model's first
        request already carries them."""
        specs = self.registry.specs(self.allowed)
        # The plan's reads, then the references the best of them name (the planner asks
        # for those once it has read the first results, and for nothing after them).
        for _round in range(_PREFETCH_ROUNDS):
            plan = _PLANNER.complete(self.messages, tools=specs or None).message
            if only is not None:
                plan = replace(plan, tool_calls=tuple(c for c in plan.tool_calls if c.name in only))
            if not plan.tool_calls:
                return
            self.messages.append(plan)
            self.messages.extend(self.run_tools(plan.tool_calls, 0, prefetched=True))

    def gather(self) -> bool:
        """Model calls with tools, up to ``max_iterations``; whether the model answered
        without tools (its answer is the output)."""
        for iteration in range(1, self.definition.max_iterations + 1):
            if self.remaining() <= 0:
                raise ModelTimeoutError(f"the scout ran past its {self.timeout_s:g} s time limit")
            used = self.context_nearly_full()
            if used is not None:
                self.problems.append(
                    f"the model's context was nearly full ({used} tokens), so the envelope "
                    "was asked for early"
                )
                return False
            reply = self.call_model(iteration, grace=False)
            if not reply.tool_calls:
                self.output = reply.content or ""
                return True
            self.messages.extend(self.run_tools(reply.tool_calls, iteration))
        return False

    def grace(self) -> None:
        """After gathering ended without an answer: the extended policy's last call without
        tools, or the reason the run stops incomplete."""
        if self.definition.iteration_policy == "extended" and self.remaining() > 0:
            self.messages.append(Message(role="user", content=GRACE_INSTRUCTION))
            reply = self.call_model(self.definition.max_iterations + 1, grace=True)
            self.output = reply.content or ""
            if reply.tool_calls:
                self.problems.append("the final call asked for tools anyway; they were not run")
        elif self.context_nearly_full() is not None:
            self.stop(ScoutStatus.INCOMPLETE, StopCause.CONTEXT_FULL)
            self.reason = "the model's context window filled up"
        else:
            self.stop(ScoutStatus.INCOMPLETE, StopCause.ITERATION_CAP)
            self.reason = f"iteration cap reached ({self.definition.max_iterations} model calls)"

    def stop(self, status: ScoutStatus, cause: StopCause) -> None:
        self.status, self.stopped = status, cause

    def finish(self, *, survey: bool = True) -> ScoutRun:
        """The envelope (extracted, fitted, parsed) and every problem, as a ScoutRun;
        without ``survey``, the workspace's refusals noted so far (no survey now)."""
        envelope: str | None = None
        bundle: ContextBundle | None = None
        problems = self.problems
        if self.reason is not None:
            problems.insert(0, self.reason)
        if self.status is ScoutStatus.COMPLETED:
            settled = settle_output(
                self.output,
                definition=self.definition,
                workspace=self.workspace,
                sources=self.sources,
                request=self.message,
                iteration=self.model_calls,
                now_ms=self.now_ms,
                record=self.record,
            )
            envelope, bundle = settled.envelope, settled.bundle
            self.grounding, self.unchecked = settled.grounding, settled.unchecked
            problems.extend(settled.problems)
        if self.redactions:
            problems.append(
                f"{self.redactions} secret value{'s' if self.redactions > 1 else ''} (an API "
                "key) removed from the model's replies"
            )
        problems.extend(
            f"refused tool call: {step.tool}"
            for step in self.trace
            if step.kind == "tool" and step.refused
        )
        # What the workspace refused to read (links out of it, special files) is shown with
        # the run, never dropped silently.
        noted = self.workspace.diagnostics if survey else self.workspace.noted_diagnostics()
        problems.extend(f"workspace: {line}" for line in noted)
        return ScoutRun(
            status=self.status,
            stopped=self.stopped,
            reason=self.reason,
            output=self.output,
            envelope=envelope,
            bundle=bundle,
            problems=problems,
            trace=self.trace,
            usage=self.usage,
            model_calls=self.model_calls,
            elapsed_ms=self.now_ms(),
            model_name=self.model.name,
            definition_hash=self.definition.definition_hash(),
            system_prompt=self.system_prompt,
            task_message=self.task,
            messages=self.messages,
            grounding=self.grounding,
            unchecked=self.unchecked,
            sources=self.sources,
        )

    def choices(self) -> BundleChoices:
        """What a constrained emission may choose from, from what exists and was read."""
        return bundle_choices(self.workspace, self.sources, self.message, self.focus)

    # -- helpers of the steps ----------------------------------------------------------

    def context_nearly_full(self) -> int | None:
        """Tokens used by the last call when they fill most of the model's window."""
        window = self.model.info.context_tokens
        last = next((step for step in reversed(self.trace) if step.kind == "model"), None)
        if window is None or window <= 0 or last is None:
            return None
        return last.tokens if last.tokens > CONTEXT_WRAP_UP_SHARE * window else None

    def call_model(self, iteration: int, *, grace: bool) -> Message:
        """One model call on the conversation so far; its message joins the conversation."""
        started = self.now_ms()
        specs = None if grace else (self.registry.specs(self.allowed) or None)
        try:
            reply = self.model.complete(
                self.messages,
                tools=specs,
                tool_choice=None,
                temperature=self.definition.temperature,
                timeout=max(self.remaining(), 0.001),
                choices=self.choices(),
            )
        except ModelError as exc:
            self.model_calls += 1
            self.record(
                TraceStep.model_call(iteration, started, self.now_ms() - started, exc, grace=grace)
            )
            raise
        self.model_calls += 1
        self.usage = self.usage + reply.usage
        self.redactions += reply.redactions
        self.record(
            TraceStep.model_call(iteration, started, self.now_ms() - started, reply, grace=grace)
        )
        self.messages.append(reply.message)
        return reply.message

    def run_tools(
        self, calls: Sequence[ToolCall], iteration: int, *, prefetched: bool = False
    ) -> list[Message]:
        outcomes = run_tool_calls(
            calls,
            registry=self.registry,
            allowlist=self.definition.tools.named,
            remaining=self.remaining,
            now_ms=self.now_ms,
        )
        contents: list[str] = []
        for call, outcome in zip(calls, outcomes, strict=True):
            result, refused = outcome.result, outcome.refused
            self.record(
                TraceStep(
                    kind="tool",
                    iteration=iteration,
                    started_ms=outcome.started_ms,
                    duration_ms=outcome.duration_ms,
                    tool=call.name,
                    arguments=call.arguments,
                    ok=result.ok,
                    refused=refused,
                    result_preview=one_line(result.content, PREVIEW_CHARS),
                    result=result.content,
                    prefetched=prefetched,
                    late=outcome.late,
                )
            )
            if not refused:
                self.sources.add_result(call.name, result)
            contents.append(result.content if result.ok else f"error: {result.content}")
        # What the model is sent fits its window; the trace and the sources keep it whole.
        budget = ContextBudget.of(self.model.info)
        room = budget.round_room(self.messages, self.registry.specs(self.allowed))
        return fit_answers(calls, contents, room, request_terms(self.message, self.focus))


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
    defaults to the run budget the model declares (``model.info.run_timeout_s``), else
    120 s; a run that ran out of it does not survey the workspace for refused files.
    """
    budget = _run_budget(model, timeout_s)
    definition = definition or default_agent_definition()
    registry = registry or build_scout_registry(workspace)
    run = _Run(definition, workspace, registry, model, budget, on_step)
    run.prompt(message, focus)
    try:
        if prefetch_enabled(definition, model):
            run.prefetch()
        if not run.gather():
            run.grace()
    except ModelTimeoutError as exc:
        run.stop(ScoutStatus.INCOMPLETE, StopCause.TIMEOUT)
        run.reason = f"timeout: {exc}"
    except ModelError as exc:
        run.stop(ScoutStatus.FAILED, StopCause.MODEL_ERROR)
        run.reason = f"model error: {exc}"
    return run.finish(survey=run.stopped is not StopCause.TIMEOUT)


def run_gathered(
    message: str,
    *,
    workspace: Workspace,
    write: Callable[[BundleChoices], str],
    label: str,
    definition: AgentDefinition | None = None,
    focus: str | None = None,
    registry: ToolRegistry | None = None,
    on_step: Callable[[TraceStep], None] | None = None,
    reads: Collection[str] | None = None,
    reads_timeout_s: float | None = None,
    survey: bool = True,
) -> ScoutRun:
    """The harness's gathering round alone, then an envelope written without a model.

    The first gathering round runs as it does before a scout's first model call (the
    reads the offline scout plans for ``message``, whatever the definition's
    ``prefetch``; with ``reads``, only the reads of those tools), and ``write`` turns what
    it gathered (:meth:`_Run.choices`: the facts ranked for the request, the names that
    exist) into the output. The output then goes through the same extraction, fitting,
    parsing and grounding check as a scout's, so the result is a :class:`ScoutRun` with
    no model call, named ``label``. Reads not done ``reads_timeout_s`` after the start are
    abandoned (``late`` steps) and ``write`` gets the rest; ``survey`` as for ``finish``.
    """
    definition = definition or default_agent_definition()
    registry = registry or build_scout_registry(workspace)
    # No model is called: the run only needs a name for its record.
    writer = OfflineScoutModel(name=label)
    budget = DEFAULT_SCOUT_TIMEOUT_S if reads_timeout_s is None else reads_timeout_s
    run = _Run(definition, workspace, registry, writer, budget, on_step)
    run.prompt(message, focus)
    run.prefetch(reads)
    run.output = write(run.choices())
    return run.finish(survey=survey)
