"""The harness turn (SPEC §7): a thread, the state it keeps and the order of a turn.

On the first turn of a genuinely new thread with Super Context on, the harness runs the
scout *before* the orchestrator sees the message, prepends the validated envelope under
``## Prepared context (super context)`` (:mod:`.first_turn`), records a "prepared"
marker, hides ``agent_prepare_context`` from the orchestrator for that turn
(:mod:`.orchestrator`) and adopts the bundle's ``proposed_goal`` when the thread has no
goal. Any failure means a cold start: nothing is prepended and the reason is kept on the
:class:`TurnResult`. A thread is saved to and resumed from a JSON file (:mod:`.saved`).

Each completed turn (the message as typed and the reply) is archived into the
workspace's past conversations under the thread's id (SPEC §15), so a later thread can
recall it; the running thread never recalls itself. ``Thread(..., archive=False)`` or
``[memory] archive_threads = false`` turns that off. A reply of the offline orchestrator,
a stand-in that only restates the bundle and the request, is not archived (the user's
message is): quoted later, it would pass for something settled.

With the ``prefetch`` design (:mod:`.prefetch`) the harness prepares no turn before the
orchestrator: after each turn it starts a pack for the thread in the background, from
that turn's message, and each later turn is sent the last one completed, labelled as
context from an earlier lookup. :meth:`Thread.close` forgets the thread's pack.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._text import one_line
from ..agents.definition import AgentDefinition, default_agent_definition
from ..bundle import ContextBundle
from ..config import get_super_context_enabled
from ..conversations import archive_enabled, archive_turn, conversation_id
from ..errors import ConfigError, SupercontextError
from ..gate import (
    ColdStartReason,
    has_prior_conversation,
    structural_skip_reason,
    super_context_skip_reason,
)
from ..models.base import ChatModel, Message
from ..models.offline import OfflineOrchestratorModel
from ..models.routing import ORCHESTRATOR_HINT, resolve_model
from ..routes import get_model_route
from ..scout import ScoutRun, TraceStep, run_scout
from ..sources.demo import open_workspace
from ..sources.workspace import Workspace
from ..tools import build_scout_registry
from .baselines import full_context_room, recall_tools
from .designs import design_for_route, preflight_settings
from .first_turn import prepare_turn, record_turn_recalls
from .orchestrator import call_orchestrator
from .prefetch import Lookup, PrefetchCache, shared_cache, start_lookup
from .preflight import accepted_envelope
from .saved import read_saved_thread, write_saved_thread
from .turn import TurnResult, already_prepared_envelope

__all__ = ["Thread"]


class Thread:
    """One conversation with an orchestrator, with the Super Context pre-flight.

    The Super Context flag is read once, here (``super_context_enabled=None`` reads the
    effective config value), so toggling it affects new threads only. So is whether the
    thread archives its turns into the workspace's past conversations (``archive=None``
    reads ``memory.archive_threads``, default true), and so are the ``[preflight]``
    settings (SPEC §16): ``design`` (:data:`~.designs.DESIGNS`), ``deadline_ms`` and
    ``placement`` (``"prepend"`` or ``"system-tail"``) override them. ``record_recalls``
    counts the memory notes each pre-flight read, for the cached design's "most recalled"
    notes. ``prefetch_cache`` keeps the ``prefetch`` design's packs (default: the
    process's, :func:`~.prefetch.shared_cache`), keyed by the workspace and ``thread_id``.
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
        placement: str | None = None,
        record_recalls: bool = True,
        prefetch_cache: PrefetchCache | None = None,
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
        settings = preflight_settings().with_overrides(
            design=design, deadline_ms=deadline_ms, placement=placement
        )
        if scout_model is None:
            # A scout model handed in is the one to run; a configured route decides the
            # default design (a local route prepares with the pack). A route config.toml
            # cannot give is reported by the turn that needs it, never here.
            with contextlib.suppress(ConfigError):
                settings = design_for_route(
                    settings, get_model_route(self.definition.model.hint).kind
                )
        self.preflight = settings
        self.record_recalls = record_recalls
        self._prefetch = prefetch_cache if prefetch_cache is not None else shared_cache()
        if settings.design == "prefetch" and self.enabled:
            # A worker waits before the first turn: no turn waits for one to start.
            self._prefetch.warm()
        self.turns: list[TurnResult] = []
        self.prepared_markers: list[dict[str, Any]] = []
        self.archive = archive_enabled(archive)
        self._unstored: list[tuple[str, str]] = []
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
        # The prefetch design serves every turn of a thread: only the flag and the role
        # hold it back.
        every_turn = self.preflight.design == "prefetch"
        structural = structural_skip_reason(
            is_orchestrator=self.is_orchestrator,
            first_turn=first_turn or every_turn,
            has_prior_conversation=not every_turn and has_prior_conversation(self.transcript),
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
        bundle = self._preflight(message, first_turn, result, on_step)
        if bundle is None or not result.prepared_for_message:
            # A bundle of an earlier lookup (prefetch) leaves agent_prepare_context free to
            # prepare this message.
            return
        self.prepared_markers.append(
            {"turn": self.turn_number, "has_enough_context": bundle.has_enough_context}
        )
        if self.goal is None and bundle.proposed_goal is not None:
            self.goal = bundle.proposed_goal
            result.goal_from_bundle = True

    def _preflight(
        self,
        message: str,
        first_turn: bool,
        result: TurnResult,
        on_step: Callable[[TraceStep], None] | None,
    ) -> ContextBundle | None:
        """The gate, then the pre-flight of this thread's design, into ``result``."""
        reason = self._skip_reason(message, first_turn)
        earlier: Lookup | None = None
        if reason is None and self.preflight.design == "prefetch":
            earlier = self._prefetch.lookup(self._prefetch_key)
        return prepare_turn(
            message,
            result,
            reason=reason,
            earlier=earlier,
            settings=self.preflight,
            workspace=self.workspace,
            definition=self.definition,
            scout=lambda timeout_s, step: self.run_scout(
                message, on_step=step, timeout_s=timeout_s
            ),
            scout_timeout_s=self.scout_timeout_s,
            on_step=on_step,
            full_context_bytes=lambda: full_context_room(
                self.orchestrator_model, [*self.transcript, Message(role="user", content=message)]
            ),
        )

    def preview(self, message: str) -> TurnResult:
        """The pre-flight ``send`` would run for ``message`` as this thread's next turn,
        without the orchestrator and leaving the thread as it was (no marker, goal,
        transcript or archive): what an MCP client is handed."""
        result = TurnResult.fresh(message, not self.turns)
        self._preflight(message, not self.turns, result, None)
        return result

    def send(
        self,
        message: str,
        *,
        on_text: Callable[[str], None] | None = None,
        on_step: Callable[[TraceStep], None] | None = None,
        on_prepared: Callable[[TurnResult], None] | None = None,
    ) -> TurnResult:
        """Run one turn: prepare on a genuinely new first turn, then call the orchestrator.

        ``on_prepared`` is handed the turn once its preparation is decided (the bundle, or
        why there is none) and before the orchestrator is asked: a chat front end shows
        the bundle there, ahead of the streamed reply."""
        started = time.perf_counter()
        # The first turn of this Thread object; a resumed transcript with an assistant
        # message is then reported as prior conversation by the gate.
        first_turn = not self.turns
        result = TurnResult.fresh(message, first_turn)
        self._prepare(message, first_turn, result, on_step)
        prepared_at = time.perf_counter()
        if on_prepared is not None:
            on_prepared(result)
        call_orchestrator(
            result,
            workspace=self.workspace,
            model=lambda: self.orchestrator_model,
            goal=self.goal,
            transcript=self.transcript,
            prepare_context=self.agent_prepare_context,
            on_text=on_text,
            recall=(
                recall_tools(self.workspace, self.conversation_id)
                if self.preflight.design == "tool-only"
                else None
            ),
        )
        done = time.perf_counter()
        if self.record_recalls:
            record_turn_recalls(self.workspace, result)
        result.goal = self.goal
        result.timings_ms = {
            "preparation_ms": (prepared_at - started) * 1000.0,
            "orchestrator_ms": (done - prepared_at) * 1000.0,
            "total_ms": (done - started) * 1000.0,
        }
        # What the orchestrator saw, so later turns carry a prepended block (a system-tail
        # one is never stored).
        self.transcript.append(Message(role="user", content=result.sent_message))
        if result.orchestrator_error is None:
            self.transcript.append(Message(role="assistant", content=result.reply))
            self._archive(result)
        self.turns.append(result)
        self._prefetch_after(message, result)
        return result

    # -- prefetch ----------------------------------------------------------------------------

    @property
    def _prefetch_key(self) -> tuple[str, str]:
        # The workspace too: two workspaces may hold threads of the same id.
        return (str(self.workspace.root), self.thread_id)

    def _prefetch_after(self, message: str, result: TurnResult) -> None:
        """With the ``prefetch`` design, start the pack of ``message`` for the next turn;
        never waits. A message the gate would not prepare (a greeting, an empty one) starts
        none: the last pack stays."""
        if self.preflight.design != "prefetch" or self._skip_reason(message, False) is not None:
            return
        note = start_lookup(
            self._prefetch,
            self._prefetch_key,
            message,
            workspace=self.workspace,
            definition=self.definition,
            conversation_id=self.conversation_id,
            settings=self.preflight,
            turn=self.turn_number - 1,
        )
        if note is not None:
            result.notes.append(note)

    def wait_for_prefetch(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` seconds for this thread's background lookups to end;
        whether they have. An evaluation calls it between turns, as a user's typing gives
        a build its time; a live turn never waits."""
        return self._prefetch.wait(timeout_s, self._prefetch_key)

    def close(self) -> None:
        """End the thread: its prefetched pack is forgotten (a lookup still running is
        thrown away when it ends)."""
        self._prefetch.drop(self._prefetch_key)

    def __enter__(self) -> Thread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _archive(self, result: TurnResult) -> None:
        """Keep the completed turn in the workspace's past conversations; a failure is a
        note on the turn, never a broken turn."""
        if not self.archive:
            return
        stand_in = isinstance(self._orchestrator_model, OfflineOrchestratorModel)
        reply = "" if stand_in else result.reply
        try:
            stored = archive_turn(
                self.workspace, self.thread_id, result.message, reply, before=self._unstored
            )
        except (SupercontextError, OSError, ValueError) as exc:
            result.notes.append(one_line(f"the turn was not archived: {exc}", 300))
            return
        result.archived = True
        # A first turn that only repeats a stored conversation is held back, and stored
        # with the thread's next turn if there is one.
        self._unstored = [] if stored is not None else [*self._unstored, (result.message, reply)]

    # -- persistence -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the thread (goal, transcript, markers) as JSON so it can be resumed."""
        return write_saved_thread(
            path,
            thread_id=self.thread_id,
            goal=self.goal,
            super_context_enabled=self.enabled,
            workspace=self.workspace.root,
            turns=self.turn_number,
            prepared_markers=self.prepared_markers,
            transcript=self.transcript,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str], **overrides: Any) -> Thread:
        """Resume a saved thread. A transcript with any assistant message is prior
        conversation, so the resumed thread does not scout again.

        ``path`` must be a regular file of at most
        :data:`~supercontext_lab.harness.saved.MAX_SAVED_THREAD_BYTES`; a FIFO, a device,
        a folder, a larger file or one that is not UTF-8 JSON raises
        :class:`~supercontext_lab.errors.WorkspaceError` naming the file and the cause.
        """
        saved = read_saved_thread(path)
        thread = cls(**{**saved.options, **overrides})
        if saved.turns is not None:
            thread._turns_before = saved.turns
        thread.prepared_markers = saved.markers_within(thread._turns_before)
        return thread
