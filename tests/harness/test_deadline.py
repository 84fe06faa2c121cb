"""The pre-turn deadline's worker: late work is never used, abandoned work is listed."""

from __future__ import annotations

import time

from supercontext_lab.harness.deadline import collector_paused, outstanding, start


def test_work_that_ended_after_its_deadline_is_late_even_if_the_caller_was_busy() -> None:
    def work(left: float) -> str:
        time.sleep(0.05)
        return "late"

    pending = start(work, 10)
    time.sleep(0.2)  # the caller is busy past the deadline; the work has ended by now
    outcome = pending.wait()
    assert outcome.missed and outcome.value is None and outcome.error is None
    assert outcome.late is not None and outcome.late.join(1.0)
    assert outcome.waited_ms >= 200


def test_the_deadline_counts_from_the_instant_given() -> None:
    pending = start(lambda left: left, 500, since=time.perf_counter() - 1.0)
    outcome = pending.wait()
    assert outcome.missed  # already a second past its start: no time left at all
    assert outcome.late is not None and outcome.late.join(1.0)


def test_abandoned_work_is_listed_until_it_ends() -> None:
    pending = start(lambda left: time.sleep(0.2), 1000, name="abandoned")
    pending.abandon()
    assert pending.thread in outstanding()
    pending.thread.join(2.0)
    assert pending.thread not in outstanding()


def test_the_collector_is_paused_for_the_block_and_restored() -> None:
    import gc

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()
