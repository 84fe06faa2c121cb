"""The harness turn (SPEC §7): a thread, its first-turn preparation, the orchestrator call.

On the first turn of a genuinely new thread with Super Context on, the harness runs the
scout *before* the orchestrator sees the message, prepends the validated envelope under
``## Prepared context (super context)``, records a "prepared" marker, hides
``agent_prepare_context`` from the orchestrator for that turn and adopts the bundle's
``proposed_goal`` when the thread has no goal. Any failure means a cold start: nothing is
prepended and the reason is kept on the :class:`TurnResult`.

Each completed turn (the message as typed and the reply) is archived into the
workspace's past conversations under the thread's id (SPEC §15), so a later thread can
recall it; the running thread never recalls itself. ``Thread(..., archive=False)`` or
``[memory] archive_threads = false`` turns that off. A reply of the offline orchestrator,
a stand-in that only restates the bundle and the request, is not archived (the user's
message is): quoted later, it would pass for something settled.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from .._bounded import json_loads
from .._confine import read_limited
from .._text import one_line
from ..agents.definition import AgentDefinition, default_agent_definition
from ..bundle.lookalikes import neutralise
from ..config import get_super_context_enabled
from ..conversations import archive_enabled, archive_turn, conversation_id
from ..errors import ModelError, PathRefusedError, SupercontextError, WorkspaceError
from ..gate import (
    SKIP_REASONS,
    ColdStartReason,
    has_prior_conversation,
    structural_skip_reason,
    super_context_skip_reason,
)
from ..models.base import ChatModel, Message, ToolCall, ToolSpec
from ..models.offline import OfflineOrchestratorModel
from ..models.routing import ORCHESTRATOR_HINT, resolve_model
from ..models.wire import messages_from_openai
from ..scout import ScoutRun, TraceStep, run_scout
from ..sources.demo import open_workspace
from ..sources.workspace import Workspace
from ..tools import build_scout_registry
from .cached import record_recalls
from .designs import preflight_settings
from .preflight import accepted_envelope, run_preflight
from .turn import (
    Preparation,
    TurnResult,
    already_prepared_envelope,
    build_prepared_message,
)

__all__ = ["Thread"]

_ORCHESTRATOR_PROMPT = (
    "You are the orchestrator of a supercontext_lab thread. Answer the user's message. "
    "When a prepared context bundle is present, ground your reply in it."
)
_MAX_ORCHESTRATOR_ROUNDS = 4

MAX_SAVED_THREAD_BYTES = 64 * 1024 * 1024
"""Largest saved thread :meth:`Thread.load` reads: a transcript of long tool results is a
few megabytes; anything past this is refused rather than read into memory."""
_FREE_ARGS: dict[str, Any] = {"type": "object", "additionalProperties": True}

_log = logging.getLogger(__name__)


class Thread:
    """One conversation with an orchestrator, with the Super Context pre-flight.

    The Super Context flag is read once, here (``super_context_enabled=None`` reads the
    effective config value), so toggling it affects new threads only. So is whether the
    thread archives its turns into the workspace's past conversations (``archive=None``
    reads ``memory.archive_threads``, default true), and so are the ``[preflight]``
    settings (SPEC §16): ``design`` (``"scout"``, ``"pack"``, ``"cached"`` or ``"cold"``)
    and ``deadline_ms`` override them for this thread. ``record_recalls`` counts the
    memory notes each pre-flight read, for the cached design's "most recalled" notes.
    """

    def __init__(
        self,
        workspace: Workspace | str | os.PathLike[str] | None = None,
        *,
        definition: AgentDefinition | None = None,
        scout_model: ChatModel | None = None,
        orchestrator_model: ChatModel | None = None,
        super_context_enabled: bool | None = None,
        goal: str | None = None,
        transcript: Sequence[Message] = (),
        thread_id: str | None = None,
        scout_timeout_s: float | None = None,
        native_tool_calling: bool = True,
        is_orchestrator: bool = True,
        archive: bool | None = None,
        design: str | None = None,
        deadline_ms: float | None = None,
        record_recalls: bool = True,
    ) -> None:
        self.workspace = (
            workspace if isinstance(workspace, Workspace) else open_workspace(workspace)
        )
        self.definition = definition or default_agent_definition()
        self._scout_model = scout_model
        self._orchestrator_model = orchestrator_model
        self.enabled = (
            get_super_context_enabled() if super_context_enabled is None else super_context_enabled
        )
        self.goal = goal
        self.transcript: list[Message] = list(transcript)
        self.thread_id = thread_id or uuid.uuid4().hex[:12]
        self.scout_timeout_s = scout_timeout_s
        self.native_tool_calling = native_tool_calling
        self.is_orchestrator = is_orchestrator
        self.preflight = preflight_settings().with_overrides(design=design, deadline_ms=deadline_ms)
        self.record_recalls = record_recalls
        self.turns: list[TurnResult] = []
        self.prepared_markers: list[dict[str, Any]] = []
        self.archive = archive_enabled(archive)
        # Turns the thread had before this object: a marker names its turn in the whole
        # thread, so a resumed thread never takes a marker of an earlier turn for its own.
        self._turns_before = sum(1 for m in self.transcript if m.role == "user")

    # -- models ------------------------------------------------------------------------------

    @property
    def scout_model_built(self) -> bool:
        """Whether the scout's model exists yet (a local route starts its server when it
        is built)."""
        return self._scout_model is not None

    def skip_reason(self, message: str) -> ColdStartReason | None:
        """Why the gate would start ``message`` cold as the thread's next turn, or
        ``None`` when the scout would run."""
        return self._skip_reason(message, not self.turns)

    @property
    def scout_model(self) -> ChatModel:
        if self._scout_model is None:
            self._scout_model = resolve_model(self.definition.model.hint, role="scout")
        return self._scout_model

    @property
    def orchestrator_model(self) -> ChatModel:
        if self._orchestrator_model is None:
            self._orchestrator_model = resolve_model(ORCHESTRATOR_HINT, role="orchestrator")
        return self._orchestrator_model

    @property
    def turn_number(self) -> int:
        """The number of the turn being sent (or the next one), counted from 0 over the
        whole thread, turns before a save included."""
        return self._turns_before + len(self.turns)

    @property
    def is_new(self) -> bool:
        """True while the orchestrator has never answered in this thread."""
        return not has_prior_conversation(self.transcript) and not self.turns

    # -- the explicit path ---------------------------------------------------------------

    def run_scout(
        self,
        message: str,
        *,
        focus: str | None = None,
        on_step: Callable[[TraceStep], None] | None = None,
        timeout_s: float | None = None,
    ) -> ScoutRun:
        """Run the scout on ``message`` now (no gate), with this thread's setup; its
        ``memory_recall`` never returns this thread's own archived turns, and
        ``timeout_s`` (else the thread's ``scout_timeout_s``) bounds the run."""
        return run_scout(
            message,
            workspace=self.workspace,
            model=self.scout_model,
            definition=self.definition,
            focus=focus,
            registry=build_scout_registry(
                self.workspace, exclude_conversations=[self.conversation_id]
            ),
            timeout_s=self.scout_timeout_s if timeout_s is None else timeout_s,
            on_step=on_step,
        )

    @property
    def conversation_id(self) -> str:
        """The id this thread's turns are archived under (its ``thread_id``), what a later
        bundle cites as ``(transcript: <id>)``."""
        return conversation_id(self.thread_id)

    def agent_prepare_context(self, question: str, focus: str | None = None) -> str:
        """The ``agent_prepare_context`` tool: the bounded envelope, or a line saying why
        there is none. After a successful preparation in this turn it returns the
        synthetic "already prepared" envelope instead of running the scout again."""
        turn = self.turn_number
        markers = [m for m in self.prepared_markers if m["turn"] == turn]
        if markers:
            enough = all(m["has_enough_context"] is not False for m in self.prepared_markers)
            return already_prepared_envelope(has_enough_context=enough)
        run = self.run_scout(question, focus=focus)
        accepted = accepted_envelope(run)
        if accepted is None:
            return "No context bundle could be prepared: " + "; ".join(run.problems or ["unknown"])
        return accepted[0]

    # -- a turn ----------------------------------------------------------------------------

    def _skip_reason(self, message: str, first_turn: bool) -> ColdStartReason | None:
        """The gate's answer for this turn: the structural reason, else the message's."""
        structural = structural_skip_reason(
            is_orchestrator=self.is_orchestrator,
            first_turn=first_turn,
            has_prior_conversation=has_prior_conversation(self.transcript),
            enabled=self.enabled,
        )
        return structural or super_context_skip_reason(
            message, native_tool_calling=self.native_tool_calling
        )

    def _prepare(
        self,
        message: str,
        first_turn: bool,
        result: TurnResult,
        on_step: Callable[[TraceStep], None] | None,
    ) -> None:
        result.design, result.deadline_ms = self.preflight.design, self.preflight.deadline_ms
        reason = self._skip_reason(message, first_turn)
        if reason is not None and not (
            self.preflight.design == "cached" and reason in SKIP_REASONS
        ):
            # The cached envelope does not read the message, so only the structural gate
            # applies to it.
            result.preparation, result.reason = Preparation.SKIPPED, reason
            return
        done = run_preflight(
            message,
            settings=self.preflight,
            workspace=self.workspace,
            definition=self.definition,
            scout=lambda timeout_s, step: self.run_scout(
                message, on_step=step, timeout_s=timeout_s
            ),
            scout_timeout_s=self.scout_timeout_s,
            on_step=on_step,
        )
        result.scout, result.notes = done.run, [*result.notes, *done.notes]
        result.deadline_missed, result.preflight_note = done.missed_deadline, done.note
        if done.envelope is None or done.bundle is None:
            reason = done.reason or ColdStartReason.NO_ENVELOPE
            if reason.skipped:
                result.preparation, result.reason = Preparation.SKIPPED, reason
            else:
                result.cold(reason, done.detail)
            return
        envelope, bundle = done.envelope, done.bundle
        result.preparation, result.prepared_by = Preparation.PREPARED, done.prepared_by
        result.envelope, result.bundle = envelope, bundle
        result.sent_message = build_prepared_message(
            envelope, message, design=done.prepared_by or "scout"
        )
        self.prepared_markers.append(
            {"turn": self.turn_number, "has_enough_context": bundle.has_enough_context}
        )
        if self.goal is None and bundle.proposed_goal is not None:
            self.goal = bundle.proposed_goal
            result.goal_from_bundle = True

    def _recalled(self, result: TurnResult) -> None:
        """Count the memory notes a pre-flight read (for the cached design's ranking); a
        workspace that cannot be written is not an error of the turn."""
        run = result.scout
        if not self.record_recalls or run is None or run.sources is None:
            return
        notes = [
            source.ref for source in run.sources.named if source.kind == "memory" and source.ref
        ]
        try:
            record_recalls(self.workspace, notes)
        except (OSError, SupercontextError) as exc:
            _log.info("Recall counts not saved in %s: %s", self.workspace.root, exc)

    def _orchestrator_specs(self, prepared: bool) -> list[ToolSpec]:
        return [
            ToolSpec(tool.name, tool.description, _FREE_ARGS)
            for tool in self.workspace.orchestrator_tools
            if not (prepared and tool.name == "agent_prepare_context")
        ]

    def _answer_tool(self, call: ToolCall) -> str:
        if call.name == "agent_prepare_context":
            try:
                args = json_loads(call.arguments or "{}")
            except ValueError:
                return "error: agent_prepare_context got invalid JSON arguments."
            if not isinstance(args, dict) or not isinstance(args.get("question"), str):
                return "error: agent_prepare_context needs a 'question' string argument."
            focus = args.get("focus")
            return self.agent_prepare_context(
                args["question"], focus=focus if isinstance(focus, str) else None
            )
        return (
            f"'{call.name}' was not executed: supercontext_lab shows the orchestrator's "
            "tool calls but runs none of them except agent_prepare_context."
        )

    def _call_orchestrator(self, result: TurnResult, on_text: Callable[[str], None] | None) -> None:
        system = _ORCHESTRATOR_PROMPT + (f"\n\n## Thread goal\n{self.goal}" if self.goal else "")
        messages = [
            Message(role="system", content=system),
            *self.transcript,
            Message(role="user", content=result.sent_message),
        ]
        try:
            specs = self._orchestrator_specs(result.prepared)
        except WorkspaceError as exc:
            # A broken catalogue must not break the turn: the orchestrator goes on without
            # tools and the turn says why.
            specs = []
            result.notes.append(f"no orchestrator tools offered: {exc}")
        result.orchestrator_tools = [spec.name for spec in specs]
        model = self.orchestrator_model
        result.orchestrator_model = model.name
        try:
            for round_ in range(_MAX_ORCHESTRATOR_ROUNDS):
                last = round_ == _MAX_ORCHESTRATOR_ROUNDS - 1
                reply = model.complete(
                    messages, tools=None if last else (specs or None), on_text=on_text
                )
                result.usage = result.usage + reply.usage
                messages.append(reply.message)
                if not reply.message.tool_calls or last:
                    result.reply = reply.message.content or ""
                    break
                for call in reply.message.tool_calls:
                    result.orchestrator_tool_calls.append(call.name)
                    messages.append(
                        Message(
                            role="tool",
                            content=self._answer_tool(call),
                            tool_call_id=call.id,
                            name=call.name,
                        )
                    )
        except ModelError as exc:
            result.orchestrator_error = str(exc)
        result.orchestrator_messages = messages

    def send(
        self,
        message: str,
        *,
        on_text: Callable[[str], None] | None = None,
        on_step: Callable[[TraceStep], None] | None = None,
    ) -> TurnResult:
        """Run one turn: prepare on a genuinely new first turn, then call the orchestrator."""
        started = time.perf_counter()
        # The first turn of this Thread object; a resumed transcript with an assistant
        # message is then reported as prior conversation by the gate.
        first_turn = not self.turns
        result = TurnResult(
            message=message,
            sent_message=message,
            reply="",
            preparation=Preparation.SKIPPED,
            reason=None,
            first_turn=first_turn,
        )
        self._prepare(message, first_turn, result, on_step)
        prepared_at = time.perf_counter()
        self._call_orchestrator(result, on_text)
        done = time.perf_counter()
        self._recalled(result)
        result.goal = self.goal
        result.timings_ms = {
            "preparation_ms": (prepared_at - started) * 1000.0,
            "orchestrator_ms": (done - prepared_at) * 1000.0,
            "total_ms": (done - started) * 1000.0,
        }
        # Keep what the orchestrator actually saw, so later turns still carry the
        # prepared context.
        self.transcript.append(Message(role="user", content=result.sent_message))
        if result.orchestrator_error is None:
            self.transcript.append(Message(role="assistant", content=result.reply))
            self._archive(result)
        self.turns.append(result)
        return result

    def _archive(self, result: TurnResult) -> None:
        """Keep the completed turn in the workspace's past conversations; a failure is a
        note on the turn, never a broken turn."""
        if not self.archive:
            return
        stand_in = isinstance(self._orchestrator_model, OfflineOrchestratorModel)
        try:
            archive_turn(
                self.workspace, self.thread_id, result.message, "" if stand_in else result.reply
            )
        except (SupercontextError, OSError, ValueError) as exc:
            result.notes.append(one_line(f"the turn was not archived: {exc}", 300))

    # -- persistence -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the thread (goal, transcript, markers) as JSON so it can be resumed."""
        target = Path(path)
        data = {
            "thread_id": self.thread_id,
            "goal": self.goal,
            "super_context_enabled": self.enabled,
            "workspace": str(self.workspace.root),
            "turns": self.turn_number,
            "prepared_markers": self.prepared_markers,
            "transcript": [m.to_openai() for m in self.transcript],
        }
        # A unique temporary file, fsynced, mode kept: two saves never collide and a crash
        # leaves the previous save whole.
        return write_atomic(target, json.dumps(data, indent=2, ensure_ascii=False))

    @classmethod
    def load(cls, path: str | os.PathLike[str], **overrides: Any) -> Thread:
        """Resume a saved thread. A transcript with any assistant message is prior
        conversation, so the resumed thread does not scout again.

        ``path`` must be a regular file of at most :data:`MAX_SAVED_THREAD_BYTES`; a FIFO,
        a device, a folder, a larger file or one that is not UTF-8 JSON raises
        :class:`~supercontext_lab.errors.WorkspaceError` naming the file and the cause.
        """
        source = Path(path)
        try:
            # A regular file only, opened without blocking and read to a bound: a FIFO, a
            # device or a huge file given as a saved thread is refused, never waited on.
            raw, more = read_limited(source, MAX_SAVED_THREAD_BYTES)
            if more:
                raise WorkspaceError(
                    f"{source}: cannot read the saved thread (it is larger than "
                    f"{MAX_SAVED_THREAD_BYTES >> 20} MiB)."
                )
            data = json_loads(raw.decode("utf-8"))
        except (PathRefusedError, OSError, ValueError) as exc:
            raise WorkspaceError(
                one_line(f"{source}: cannot read the saved thread ({exc}).")
            ) from None
        # A saved thread is a file a user may edit or receive: check its shape here, so a
        # damaged one fails with a message naming it instead of an AttributeError or a
        # KeyError at the next turn.
        problem = _saved_thread_problem(data)
        if problem is None:
            try:
                transcript = messages_from_openai(data.get("transcript", []))
            except ModelError as exc:
                problem = f"its transcript is invalid ({exc})"
        if problem is not None:
            raise WorkspaceError(
                f"{source}: cannot resume the saved thread: {problem}; save the thread again."
            )
        goal = data.get("goal")
        options: dict[str, Any] = {
            "workspace": data.get("workspace"),
            # The goal goes into every turn's system prompt: a saved one is read as one
            # line with nothing in it passing for the prepared block's structure.
            "goal": one_line(neutralise(goal)) or None if goal is not None else None,
            "transcript": transcript,
            "thread_id": data.get("thread_id"),
        }
        options.update(overrides)
        thread = cls(**options)
        turns = data.get("turns")
        if turns is not None:
            thread._turns_before = turns
        stale = [m["turn"] for m in data.get("prepared_markers", [])]
        if any(not 0 <= turn < thread._turns_before for turn in stale):
            raise WorkspaceError(
                f"{source}: cannot resume the saved thread: its 'prepared_markers' name a "
                f"turn it has not had (it had {thread._turns_before}); save the thread again."
            )
        thread.prepared_markers = [dict(m) for m in data.get("prepared_markers", [])]
        return thread


def _saved_thread_problem(data: Any) -> str | None:
    """Why ``data`` (a decoded saved thread) cannot be resumed, or ``None``."""
    if not isinstance(data, dict):
        return f"it holds a JSON {type(data).__name__}, not an object"
    for key in ("workspace", "goal", "thread_id"):
        if not isinstance(data.get(key), str | None):
            return f"'{key}' must be a string"
    turns = data.get("turns")
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or turns < 0):
        return "'turns' must be a whole number of turns"
    markers = data.get("prepared_markers", [])
    if not isinstance(markers, list) or not all(
        isinstance(m, dict)
        and isinstance(m.get("turn"), int)
        and "has_enough_context" in m
        and isinstance(m["has_enough_context"], bool | None)
        for m in markers
    ):
        return "'prepared_markers' must be a list of {turn, has_enough_context} objects"
    return None
