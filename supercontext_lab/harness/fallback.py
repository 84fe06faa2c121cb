"""What a missed pre-turn deadline leaves on the turn (SPEC §16): its words and records.

When the scout is not done by its deadline, :func:`~.preflight.run_preflight` abandons it
and waits at most :data:`FALLBACK_SLACK_MS` more for the fallback pack. What came of it is
said once, by :func:`deadline_note` (with :func:`fallback_outcome`'s words), and kept as
the ``deadline`` step at the head of the trace (:func:`deadline_step`), on the pack's run
or on the record of the abandoned scout (:func:`abandoned_run`).
"""

from __future__ import annotations

from ..agents.definition import AgentDefinition
from ..models.base import Usage
from ..scout import ScoutRun, ScoutStatus, StopCause, TraceStep
from .pack import Packed

__all__ = [
    "FALLBACK_SLACK_MS",
    "abandoned_run",
    "deadline_note",
    "deadline_step",
    "fallback_outcome",
    "ran_out",
]

FALLBACK_SLACK_MS = 25.0
"""How long past the deadline the harness waits for the fallback pack, which is cut short
to be ready by the deadline itself: the time to hand it over between threads on a busy
machine. A pack not ready by then is abandoned and the turn goes on cold."""


def deadline_note(deadline_ms: float, outcome: str) -> str:
    """The words of a missed deadline, with its figure, and what came of it
    (``outcome``: "the turn went on cold", "the pack prepared the turn from …")."""
    return (
        f"deadline_missed: the scout was not done by its {deadline_ms:g} ms deadline; it was "
        f"abandoned (never waited for) and {outcome}"
    )


def deadline_step(deadline_ms: float, text: str, settled_ms: float) -> TraceStep:
    """The trace's ``deadline`` step: at the deadline, lasting until the turn's
    preparation was settled (the wait for the fallback)."""
    return TraceStep(
        kind="deadline",
        iteration=0,
        started_ms=deadline_ms,
        duration_ms=max(settled_ms - deadline_ms, 0.0),
        ok=False,
        result_preview=text,
    )


def abandoned_run(step: TraceStep, definition: AgentDefinition) -> ScoutRun:
    """The record of a scout abandoned at its deadline: what the turn can say about it
    without touching the run still ending in its worker."""
    text = step.result_preview
    return ScoutRun(
        status=ScoutStatus.INCOMPLETE,
        stopped=StopCause.TIMEOUT,
        reason=text,
        output="",
        envelope=None,
        bundle=None,
        problems=[text],
        trace=[step],
        usage=Usage(),
        model_calls=0,
        elapsed_ms=step.started_ms + step.duration_ms,
        model_name="scout (abandoned at the deadline)",
        definition_hash=definition.definition_hash(),
    )


def ran_out(run: ScoutRun | None, scout_timeout_s: float | None, deadline_ms: float) -> bool:
    """Whether the scout stopped because the deadline's time ran out: its budget was the
    time left, so it is as late as one still running."""
    own = scout_timeout_s is not None and scout_timeout_s * 1000.0 < deadline_ms
    return run is not None and run.stopped is StopCause.TIMEOUT and not own


def fallback_outcome(packed: Packed | None) -> tuple[str, bool]:
    """What the fallback pack came to, in words, and whether it prepares the turn."""
    if packed is None:
        return (
            f"the pack was not ready within {FALLBACK_SLACK_MS:g} ms of it either (the time "
            "was gone); the turn went on cold",
            False,
        )
    if packed.cut and packed.facts == 0:
        # What it did not read it cannot say is missing: nothing is sent.
        return (
            f"the pack, cut short at the deadline, had found nothing yet ({packed.describe()}); "
            "the turn went on cold",
            False,
        )
    cut = ", cut short at the deadline" if packed.cut else ""
    return f"the pack prepared the turn {packed.describe()}{cut}", True
