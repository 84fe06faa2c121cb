"""The ``prefetch`` design: a pack built after each turn in the background, sent with the
next turn, labelled as from an earlier lookup; bounded by a TTL and a cap on pending work,
keyed by thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from supercontext_lab import Thread
from supercontext_lab.gate import ColdStartReason
from supercontext_lab.harness.designs import PreflightSettings
from supercontext_lab.harness.pack import run_pack
from supercontext_lab.harness.prefetch import (
    PREFETCH_LABEL,
    PrefetchCache,
    shared_cache,
    start_lookup,
)
from supercontext_lab.harness.preflight import run_preflight
from supercontext_lab.harness.turn import Preparation
from supercontext_lab.scout import ScoutRun
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace

KERNEL = "What did we decide about the dispersal kernel?"
DEADLINE = "When is the grant renewal due?"
WAIT_S = 30.0


class Clock:
    """A clock the test moves by hand: a pack ages without a sleep."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {
        "PROFILE.md": "# Profile\n\nMaya is an ecologist. She leads the SEEDSCAPE project.\n",
        "memory/global/kernel.md": (
            "Decision: the 2Dt kernel is the primary dispersal kernel, chosen at 34 of the "
            "40 sites.\n"
        ),
        "memory/global/deadline.md": "The grant renewal is due on 2026-12-15 at 14:00 CET.\n",
    }
    return Workspace(build_workspace(tmp_path / "ws", files))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(clock: Clock) -> Iterator[PrefetchCache]:
    made = PrefetchCache(clock=clock)
    yield made
    # No background worker outlives a test.
    assert made.close(WAIT_S)
    assert made.outstanding() == [] and made.workers() == []


def _thread(workspace: Workspace, cache: PrefetchCache, **options: object) -> Thread:
    return Thread(
        workspace,
        design="prefetch",
        scout_model=ScriptedModel([], name="must-not-be-called"),
        orchestrator_model=ScriptedModel(["ok"] * 8, name="orchestrator"),
        super_context_enabled=True,
        archive=False,
        record_recalls=False,
        prefetch_cache=cache,
        **options,  # type: ignore[arg-type]
    )


def _pack(workspace: Workspace, message: str) -> Callable[[], ScoutRun]:
    return lambda: run_pack(message, workspace=workspace)


# --------------------------------------------------------------------------- the turns


def test_the_first_turn_gets_nothing_and_waits_for_nothing(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    thread = _thread(workspace, cache)
    result = thread.send(KERNEL)
    assert (result.preparation, result.reason) == (
        Preparation.SKIPPED,
        ColdStartReason.NO_EARLIER_LOOKUP,
    )
    assert result.sent_message == KERNEL and result.envelope is None
    assert result.design == "prefetch" and result.prepared_by is None
    assert "agent_prepare_context" in result.orchestrator_tools


def test_the_second_turn_gets_the_pack_of_the_first_labelled_as_an_earlier_lookup(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    thread = _thread(workspace, cache)
    thread.send(KERNEL)
    assert thread.wait_for_prefetch(WAIT_S)
    result = thread.send(DEADLINE)
    assert result.prepared and result.prepared_by == "prefetch"
    assert result.envelope is not None and "2Dt" in result.envelope
    # The pack was looked up for the first message, and the orchestrator is told so.
    sent = result.sent_message
    assert "context from an earlier lookup" in sent
    assert "not for this one" in sent
    assert sent.endswith("\n---\n" + DEADLINE)
    assert result.scout is not None and result.scout.model_name == PREFETCH_LABEL
    assert any("message of turn 1" in note for note in result.notes)
    # Not prepared for this message: the orchestrator may still prepare it, and no
    # "prepared" marker holds the explicit path back.
    assert not result.prepared_for_message
    assert "agent_prepare_context" in result.orchestrator_tools
    assert thread.prepared_markers == []


def test_each_turn_gets_the_pack_of_the_turn_before(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    thread = _thread(workspace, cache)
    thread.send(KERNEL)
    thread.wait_for_prefetch(WAIT_S)
    thread.send(DEADLINE)
    thread.wait_for_prefetch(WAIT_S)
    third = thread.send("Anything else?")
    assert third.envelope is not None and "2026-12-15" in third.envelope
    assert any("message of turn 2" in note for note in third.notes)


def test_a_thread_with_super_context_off_is_never_sent_a_pack(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    thread = _thread(workspace, cache)
    thread.enabled = False
    thread.send(KERNEL)
    assert len(cache) == 0  # no lookup started
    later = thread.send(DEADLINE)
    assert later.reason is ColdStartReason.SUPER_CONTEXT_DISABLED and not later.prepared


def test_a_greeting_starts_no_lookup_and_is_sent_nothing(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    thread = _thread(workspace, cache)
    thread.send(KERNEL)
    thread.wait_for_prefetch(WAIT_S)
    thanks = thread.send("Thanks!")
    assert thanks.reason is ColdStartReason.CONTEXT_FREE_GREETING and not thanks.prepared
    thread.wait_for_prefetch(WAIT_S)
    after = thread.send(DEADLINE)
    # The greeting built nothing: the pack of the kernel question is still the last one.
    assert after.envelope is not None and "2Dt" in after.envelope


def test_a_pack_older_than_the_ttl_is_not_sent(
    workspace: Workspace, cache: PrefetchCache, clock: Clock
) -> None:
    thread = _thread(workspace, cache)
    assert thread.preflight.prefetch_ttl_s == 60.0
    thread.send(KERNEL)
    thread.wait_for_prefetch(WAIT_S)
    clock.now += 59.0
    assert cache.lookup((str(workspace.root), thread.thread_id)).prefetched is not None
    clock.now += 2.0
    result = thread.send(DEADLINE)
    assert result.reason is ColdStartReason.NO_EARLIER_LOOKUP
    assert result.reason_detail is not None and "expired (older than 60 s)" in result.reason_detail
    assert result.sent_message == DEADLINE


def test_the_ttl_is_a_setting(workspace: Workspace, cache: PrefetchCache, clock: Clock) -> None:
    thread = _thread(workspace, cache)
    thread.preflight = PreflightSettings(design="prefetch", prefetch_ttl_s=5.0)
    thread.send(KERNEL)
    thread.wait_for_prefetch(WAIT_S)
    clock.now += 6.0
    assert thread.send(DEADLINE).reason is ColdStartReason.NO_EARLIER_LOOKUP


# --------------------------------------------------------------------------- the thread key


def test_threads_never_see_each_others_packs(workspace: Workspace, cache: PrefetchCache) -> None:
    first, second = _thread(workspace, cache), _thread(workspace, cache)
    first.send(KERNEL)
    first.wait_for_prefetch(WAIT_S)
    other = second.send(DEADLINE)
    assert other.reason is ColdStartReason.NO_EARLIER_LOOKUP
    assert first.send(DEADLINE).prepared_by == "prefetch"


def test_the_same_thread_id_in_another_workspace_is_another_thread(
    workspace: Workspace, cache: PrefetchCache, tmp_path: Path
) -> None:
    elsewhere = Workspace(build_workspace(tmp_path / "other", {"MEMORY.md": "- A note.\n"}))
    here = _thread(workspace, cache, thread_id="same-id")
    here.send(KERNEL)
    here.wait_for_prefetch(WAIT_S)
    there = _thread(elsewhere, cache, thread_id="same-id")
    assert there.send(KERNEL).reason is ColdStartReason.NO_EARLIER_LOOKUP


def test_a_closed_thread_drops_its_pack(workspace: Workspace, cache: PrefetchCache) -> None:
    with _thread(workspace, cache, thread_id="closing") as thread:
        thread.send(KERNEL)
        thread.wait_for_prefetch(WAIT_S)
        assert len(cache) == 1
    assert len(cache) == 0
    again = _thread(workspace, cache, thread_id="closing")
    assert again.send(DEADLINE).reason is ColdStartReason.NO_EARLIER_LOOKUP


def test_the_lookup_never_reads_the_threads_own_archived_turns(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    thread = _thread(workspace, cache)
    thread.archive = True
    thread.send("What did we decide about the Lofoten sourdough trip?")
    thread.wait_for_prefetch(WAIT_S)
    run = thread.send(DEADLINE).scout
    assert run is not None
    reads = [step for step in run.trace if step.kind == "tool"]
    assert reads and all(thread.conversation_id not in step.result for step in reads)


# --------------------------------------------------------------------------- bounded work


def _blocked(release: threading.Event, run: ScoutRun) -> Callable[[], ScoutRun]:
    def work() -> ScoutRun:
        release.wait(WAIT_S)
        return run

    return work


def test_the_cap_on_pending_work_refuses_a_lookup_and_leaves_none_running(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    release = threading.Event()
    run = run_pack(KERNEL, workspace=workspace)
    options = {"ttl_s": 60.0, "max_pending": 2}
    assert cache.schedule("a", _blocked(release, run), turn=0, **options) == "started"  # type: ignore[arg-type]
    assert cache.schedule("b", _blocked(release, run), turn=0, **options) == "started"  # type: ignore[arg-type]
    assert cache.schedule("c", _blocked(release, run), turn=0, **options) == "refused"  # type: ignore[arg-type]
    # A thread with a build running queues its newer message instead of a second worker.
    assert cache.schedule("a", _blocked(release, run), turn=1, **options) == "queued"  # type: ignore[arg-type]
    assert cache.pending() == 2 and cache.refused == 1
    assert cache.lookup("a").prefetched is None
    release.set()
    assert cache.wait(WAIT_S)
    assert cache.outstanding() == []
    done = cache.lookup("a").prefetched
    assert done is not None and done.turn == 1
    assert cache.lookup("c").prefetched is None


def test_a_thread_at_the_cap_keeps_its_last_pack_and_says_why(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    release = threading.Event()
    run = run_pack(DEADLINE, workspace=workspace)
    thread = _thread(workspace, cache)
    thread.preflight = PreflightSettings(design="prefetch", prefetch_pending=1)
    first = thread.send(KERNEL)
    thread.wait_for_prefetch(WAIT_S)
    assert first.notes == []
    cache.schedule("someone else", _blocked(release, run), turn=0, ttl_s=60.0, max_pending=1)
    second = thread.send(DEADLINE)
    assert any("1 lookups already running" in note for note in second.notes)
    release.set()
    cache.wait(WAIT_S)
    assert "2Dt" in (thread.send("And then?").envelope or "")


def test_only_the_newest_queued_message_is_built(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    began, release = threading.Event(), threading.Event()
    built: list[str] = []

    def work(message: str) -> Callable[[], ScoutRun]:
        def build() -> ScoutRun:
            began.set()
            release.wait(WAIT_S)
            built.append(message)
            return run_pack(message, workspace=workspace)

        return build

    cache.schedule("t", work("one"), turn=0, ttl_s=60.0, max_pending=4)
    assert began.wait(WAIT_S)
    # While "one" is being built, "two" waits in line, and "three" takes its place.
    for turn, message in enumerate(["two", "three"], start=1):
        assert cache.schedule("t", work(message), turn=turn, ttl_s=60.0, max_pending=4) == "queued"
    release.set()
    cache.wait(WAIT_S)
    assert built == ["one", "three"]
    last = cache.lookup("t").prefetched
    assert last is not None and last.turn == 2


def test_a_failed_build_keeps_the_last_pack(workspace: Workspace, cache: PrefetchCache) -> None:
    cache.schedule("t", _pack(workspace, KERNEL), turn=0, ttl_s=60.0, max_pending=4)
    cache.wait(WAIT_S)

    def broken() -> ScoutRun:
        raise OSError("the disk went away")

    cache.schedule("t", broken, turn=1, ttl_s=60.0, max_pending=4)
    cache.wait(WAIT_S)
    kept = cache.lookup("t").prefetched
    assert kept is not None and kept.turn == 0


def test_a_build_ending_after_its_thread_closed_is_thrown_away(
    workspace: Workspace, cache: PrefetchCache
) -> None:
    release = threading.Event()
    run = run_pack(KERNEL, workspace=workspace)
    cache.schedule("t", _blocked(release, run), turn=0, ttl_s=60.0, max_pending=4)
    cache.drop("t")
    assert cache.pending() == 1  # still running, no longer the thread's
    release.set()
    assert cache.wait(WAIT_S)
    assert cache.lookup("t").prefetched is None and len(cache) == 0


def test_a_closed_cache_takes_no_more_work(workspace: Workspace, cache: PrefetchCache) -> None:
    assert cache.close(WAIT_S)
    settings = PreflightSettings(design="prefetch")
    note = start_lookup(
        cache,
        "t",
        KERNEL,
        workspace=workspace,
        definition=_thread(workspace, cache).definition,
        conversation_id="t",
        settings=settings,
        turn=0,
    )
    assert note is not None and "process is ending" in note
    assert cache.pending() == 0


def test_threads_past_the_limit_drop_the_oldest_idle_one(
    workspace: Workspace, clock: Clock
) -> None:
    small = PrefetchCache(clock=clock, max_threads=2)
    for key in ("a", "b", "c"):
        clock.now += 1.0
        small.schedule(key, _pack(workspace, KERNEL), turn=0, ttl_s=60.0, max_pending=4)
        small.wait(WAIT_S)
    assert len(small) == 2
    assert small.lookup("a").prefetched is None
    assert small.lookup("c").prefetched is not None
    assert small.close(WAIT_S) and small.workers() == []


# --------------------------------------------------------------------------- elsewhere


def test_the_explicit_path_has_no_thread_and_so_no_earlier_lookup(
    workspace: Workspace,
) -> None:
    def scout(timeout_s: float | None, on_step: object) -> ScoutRun:
        raise AssertionError("the prefetch design runs no scout")

    done = run_preflight(
        KERNEL,
        settings=PreflightSettings(design="prefetch"),
        workspace=workspace,
        definition=_thread(workspace, PrefetchCache()).definition,
        scout=scout,
    )
    assert done.envelope is None and done.reason is ColdStartReason.NO_EARLIER_LOOKUP


def test_a_thread_uses_the_shared_cache_by_default(workspace: Workspace) -> None:
    thread = Thread(
        workspace,
        design="prefetch",
        orchestrator_model=ScriptedModel(["ok"] * 2, name="orchestrator"),
        super_context_enabled=True,
        archive=False,
        record_recalls=False,
    )
    thread.send(KERNEL)
    assert thread.wait_for_prefetch(WAIT_S)
    assert thread.send(DEADLINE).prepared_by == "prefetch"
    thread.close()
    assert shared_cache().wait(WAIT_S) and shared_cache().outstanding() == []
