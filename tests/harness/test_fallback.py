"""What a missed deadline leaves on the turn: the fallback's words, its records."""

from __future__ import annotations

from supercontext_lab.agents.definition import default_agent_definition
from supercontext_lab.harness.fallback import (
    FALLBACK_SLACK_MS,
    abandoned_run,
    deadline_note,
    deadline_step,
    fallback_outcome,
    ran_out,
)
from supercontext_lab.harness.pack import Packed
from supercontext_lab.scout import StopCause


def _packed(late: tuple[str, ...], facts: int) -> Packed:
    step = deadline_step(50, "x", 60)
    run = abandoned_run(step, default_agent_definition())
    return Packed(run, ("memory_recall", "memory_flavour"), late, facts, surveyed=False)


def test_the_fallback_is_said_as_it_happened() -> None:
    assert FALLBACK_SLACK_MS == 25
    assert fallback_outcome(None) == (
        "the pack was not ready within 25 ms of it either (the time was gone); the turn went "
        "on cold",
        False,
    )
    assert fallback_outcome(_packed(("memory_recall",), 0)) == (
        "the pack, cut short at the deadline, had found nothing yet (from 1 of 2 reads "
        "(memory_recall not done in time), 0 facts); the turn went on cold",
        False,
    )
    assert fallback_outcome(_packed(("memory_recall",), 3)) == (
        "the pack prepared the turn from 1 of 2 reads (memory_recall not done in time), "
        "3 facts, cut short at the deadline",
        True,
    )
    # A pack that read everything and found nothing still says what it looked for.
    assert fallback_outcome(_packed((), 0)) == (
        "the pack prepared the turn from 2 of 2 reads, 0 facts",
        True,
    )
    assert deadline_note(50, "the turn went on cold") == (
        "deadline_missed: the scout was not done by its 50 ms deadline; it was abandoned "
        "(never waited for) and the turn went on cold"
    )


def test_the_deadline_step_lasts_until_the_turn_was_settled() -> None:
    step = deadline_step(50, "said", 73.5)
    assert (step.kind, step.started_ms, step.duration_ms, step.ok) == ("deadline", 50, 23.5, False)
    assert deadline_step(50, "said", 49.0).duration_ms == 0.0
    run = abandoned_run(step, default_agent_definition())
    assert run.trace == [step] and run.problems == ["said"] and run.elapsed_ms == 73.5
    assert run.stopped is StopCause.TIMEOUT and run.envelope is None


def test_a_scout_that_ran_out_of_the_deadlines_time_is_late() -> None:
    timed_out = abandoned_run(deadline_step(50, "x", 50), default_agent_definition())
    assert ran_out(timed_out, None, 50)
    assert ran_out(timed_out, 0.05, 50)  # its own limit is the deadline's
    assert not ran_out(timed_out, 0.01, 50)  # its own, shorter limit: a cold start of its own
    assert not ran_out(None, None, 50)
    timed_out.stopped = None
    assert not ran_out(timed_out, None, 50)
