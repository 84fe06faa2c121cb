"""Where a scout run or a harness turn is, for someone waiting on it.

A run reports each step as it ends (``on_step`` of :func:`~supercontext_lab.scout.run_scout`
and :meth:`Thread.send <supercontext_lab.harness.Thread.send>`), and the step just ended
says what comes next: after a model call that asked for tools, those tools run; after
the tools, the model is asked again; after an answer, the envelope is parsed and checked;
after the check (or a failed call), the run is over, and a turn asks the orchestrator.
Before the first step, a local model may still be starting its server.

:class:`RunProgress` keeps that phase and the time since the start, and hands a
:class:`Progress` to one listener on every change and once a second in between (from a
thread of its own), so a front end can show it: ``supercontext-lab`` on stderr, the
magics and the composer in the notebook. It only listens; the run is the same with or
without it.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from ..agents.definition import AgentDefinition
from ..errors import SupercontextError
from ..models.base import ChatModel
from ..routes import ModelRoute, get_model_route
from ..scout import TraceStep, prefetch_enabled
from .thread import Thread

__all__ = [
    "ASKING",
    "CHECKING",
    "DONE",
    "GATHERING",
    "ORCHESTRATOR",
    "STARTING_MODEL",
    "Progress",
    "RunProgress",
    "starts_a_server",
]

STARTING_MODEL = "starting the model"
GATHERING = "gathering"
ASKING = "asking the model"
CHECKING = "checking the bundle"
ORCHESTRATOR = "asking the orchestrator"
DONE = "done"


@dataclass(frozen=True)
class Progress:
    """One moment of a run: its phase, what the phase is busy with, the seconds so far."""

    phase: str
    detail: str = ""
    elapsed_s: float = 0.0

    def describe(self) -> str:
        """``asking the model offline:scout (call 1 of up to 8)``: phase and detail."""
        return f"{self.phase} {self.detail}" if self.detail else self.phase

    def line(self) -> str:
        """The description with the whole seconds so far: ``… · 4 s``."""
        return f"{self.describe()} · {self.elapsed_s:.0f} s"


def starts_a_server(route: ModelRoute) -> bool:
    """Whether building a model for ``route`` may start a server first (a ``local``
    route starts llama.cpp's on first use, which takes seconds)."""
    return route.kind == "local"


def _route_label(route: ModelRoute) -> str:
    return route.label or f"local:{route.model or 'smollm2'}"


class RunProgress:
    """The phase of one run or turn and its elapsed time, told to ``listener``.

    Use it as a context manager around the run: entering starts the clock and a ticker
    that repeats the current state every ``interval_s`` seconds, leaving stops both.
    Call one of :meth:`starting_model`, :meth:`scout`, :meth:`scout_of` or
    :meth:`turn_of` before the run, and pass :meth:`on_step` as its ``on_step``. The
    listener is called from the caller's thread and from the ticker, never both at once.
    """

    def __init__(
        self,
        listener: Callable[[Progress], None],
        *,
        interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.listener = listener
        self.interval_s = interval_s
        self.clock = clock
        self.started = clock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._phase, self._detail = STARTING_MODEL, ""
        self._model = "the model"
        self._max_calls = 1
        self._grace = False
        self._calls = 0
        self._in_turn = False
        self._orchestrator = ""

    # -- state ---------------------------------------------------------------------------

    @property
    def current(self) -> Progress:
        """The phase now, with the seconds since the start."""
        return Progress(self._phase, self._detail, self.clock() - self.started)

    def set(self, phase: str, detail: str = "") -> None:
        """Enter ``phase`` and tell the listener at once."""
        with self._lock:
            self._phase, self._detail = phase, detail
            self.listener(self.current)

    def _tick(self) -> None:
        while not self._stop.wait(self.interval_s):
            with self._lock:
                if not self._stop.is_set():
                    self.listener(self.current)

    def __enter__(self) -> RunProgress:
        self.started = self.clock()
        self._stop.clear()
        # The ticker reports in the caller's context (a notebook kernel routes output by
        # it), and never keeps the process alive.
        context = contextvars.copy_context()
        self._ticker = threading.Thread(
            target=context.run, args=(self._tick,), name="run-progress", daemon=True
        )
        self._ticker.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None

    # -- before the run ------------------------------------------------------------------

    def starting_model(self, label: str) -> None:
        """A local model is about to start its server (or find it running)."""
        self._model = label
        self.set(
            STARTING_MODEL, f"{label} (a llama.cpp server on this machine, started on first use)"
        )

    def scout(
        self,
        model: ChatModel,
        definition: AgentDefinition,
        *,
        in_turn: bool = False,
        label: str | None = None,
    ) -> None:
        """The scout is about to run with ``model`` and ``definition``; ``label`` names
        the model as the user named it (default: its own name)."""
        self._expect(label or model.name, definition, in_turn)
        if prefetch_enabled(definition, model):
            self.set(GATHERING, "before the model (the harness's own first reads)")
        else:
            self._asking()

    def scout_of(self, thread: Thread, *, in_turn: bool = False) -> None:
        """``thread`` is about to run its scout. A scout model not built yet is built
        now, unless its route starts a server: then the phase says so, and the thread
        builds it when the run begins (a failure there is the run's, as without progress)."""
        definition = thread.definition
        if not thread.scout_model_built:
            try:
                route = get_model_route(definition.model.hint)
                if starts_a_server(route):
                    self._expect(_route_label(route), definition, in_turn)
                    self.starting_model(_route_label(route))
                    return
                model = thread.scout_model
            except SupercontextError:
                # The run meets the same error and reports it; say only what comes.
                self._expect("the model", definition, in_turn)
                self._asking()
                return
        else:
            model = thread.scout_model
        self.scout(model, definition, in_turn=in_turn)

    def turn_of(self, thread: Thread, message: str) -> None:
        """``thread`` is about to answer ``message``: the scout first when the gate will
        let it run, else the orchestrator straight away."""
        try:
            self._orchestrator = thread.orchestrator_model.name
        except SupercontextError:
            self._orchestrator = ""  # the turn itself reports a broken route
        if thread.skip_reason(message) is None:
            self.scout_of(thread, in_turn=True)
        else:
            self.set(ORCHESTRATOR, self._orchestrator)

    def _expect(self, model: str, definition: AgentDefinition, in_turn: bool) -> None:
        self._model, self._in_turn, self._calls = model, in_turn, 0
        self._max_calls = definition.max_iterations
        self._grace = definition.iteration_policy == "extended"

    def _asking(self) -> None:
        number = self._calls + 1
        if number > self._max_calls:
            self.set(ASKING, f"{self._model} (a last call, for the envelope)")
        else:
            self.set(ASKING, f"{self._model} (call {number} of up to {self._max_calls})")

    def _over(self, why: str = "") -> None:
        """The run is over (``why`` says more, when set): a turn asks its orchestrator
        next, a run alone is done."""
        if self._in_turn:
            self.set(
                ORCHESTRATOR, f"{self._orchestrator} ({why})".strip() if why else self._orchestrator
            )
        else:
            self.set(DONE, f"({why})" if why else "")

    # -- during the run ------------------------------------------------------------------

    def on_step(self, step: TraceStep) -> None:
        """The run's ``on_step``: the step that just ended decides the next phase."""
        if step.kind == "check":
            self._over()
        elif step.kind == "deadline":
            # The scout was abandoned at the pre-turn deadline: the turn goes on now,
            # prepared by the fallback or cold (the step's text says which).
            self._over("the scout missed its deadline")
        elif step.kind == "tool":
            if self._calls >= self._max_calls and not self._grace:
                self._over()  # the iteration cap: no call follows
            else:
                self._asking()
        elif not step.ok:
            self._calls += 1
            failed = "the scout's model failed; the turn goes on cold"
            self._over(failed if self._in_turn else "the model failed")
        else:
            self._calls += 1
            if step.tool_calls:
                self.set(GATHERING, "with " + ", ".join(dict.fromkeys(step.tool_calls)))
            else:
                self.set(CHECKING)
