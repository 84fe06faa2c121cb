"""The ``prefetch`` design: a pack built after each turn, sent with the next (SPEC §16).

The reference system's newest memory design never waits for memory on a live turn:
after each turn it refreshes a pack for that thread in the background, and the next turn
is sent the last completed pack, labelled as context from an earlier lookup. The first
turn of a new thread gets nothing. This module is that design in the lab, so it can be
measured beside the others:

* **after a turn** (:meth:`PrefetchCache.schedule`), the pack (:func:`~.pack.run_pack`:
  the gathering round, ranked for the message and fitted to ``pack_tokens``, written by
  the one envelope writer and grounded) is built from that turn's message by a daemon
  worker waiting for work: the turn only hands the job over. The thread's own archived
  turns are not read (a thread never recalls itself, SPEC §15);
* **at the next turn** (:meth:`PrefetchCache.lookup`) the last completed pack of the
  thread is taken from memory, a dictionary read under a lock: nothing waits for a build
  still running. A pack older than ``prefetch_ttl_s`` (60 s, the reference's) since its
  build ended is not sent and is dropped;
* **bounded work**: at most ``prefetch_pending`` builds run or wait in line at once in
  the process; a thread asking while the cap is reached keeps its last pack. A thread has
  at most one build at a time: a message that comes while its build runs or waits is
  built next, the newest one only. A build that fails leaves the last pack in place; one
  that ends after its thread was closed (:meth:`PrefetchCache.drop`) is thrown away;
* **keyed by thread**: the workspace's folder and the thread's id, so one thread is never
  sent another's pack. At most :data:`MAX_THREADS` threads keep a pack; past that the
  oldest idle one is dropped.

The workers are daemon threads that end after a while with nothing to do, and the shared
cache stops taking work and waits a moment for its workers when the process exits, so
none is cut in the middle of a write to the memory index at exit;
:meth:`PrefetchCache.outstanding` lists the builds still running and
:meth:`PrefetchCache.workers` every worker alive, for tests and benchmarks. Not to be
confused with ``prefetch`` in agent.toml, the scout's gather-first round (SPEC §13),
which the pack runs.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Literal

from ..agents.definition import AgentDefinition
from ..scout import ScoutRun
from ..sources.workspace import Workspace
from ..tools import build_scout_registry
from .designs import DEFAULT_PACK_TOKENS, PreflightSettings
from .pack import run_pack

__all__ = [
    "MAX_THREADS",
    "PREFETCH_LABEL",
    "Lookup",
    "PrefetchCache",
    "Prefetched",
    "Scheduled",
    "build_prefetch",
    "shared_cache",
    "start_lookup",
]

_log = logging.getLogger(__name__)

PREFETCH_LABEL = "prefetch (an earlier lookup, no model)"
"""The name a served prefetched pack is recorded with, where a scout run names its model."""
MAX_THREADS = 1024
"""Threads that keep a pack in one cache, at most (the oldest idle one is dropped)."""
_EXIT_WAIT_S = 1.0
_IDLE_S = 120.0
"""A worker with nothing to build for this long ends."""
_LET_THE_TURN_END_S = 0.02
"""How long a new worker waits before it builds: a thread that starts computing at once
keeps the interpreter lock for up to a switch interval (5 ms) each time the turn that
started it needs it back, so the turn would end that much later. No one types the next
message in 20 ms."""

Scheduled = Literal["started", "queued", "refused", "closed"]
"""What :meth:`PrefetchCache.schedule` did: started a worker, queued the message behind
the thread's running build, refused it (the cap on pending work) or refused it because
the cache is closed."""


@dataclass(frozen=True)
class Prefetched:
    """A completed pack of one thread."""

    run: ScoutRun
    turn: int
    """The turn (counted from 0) whose message the pack was built from."""
    built_at: float
    """The cache's clock when the build ended."""
    expires_at: float
    build_ms: float


@dataclass(frozen=True)
class Lookup:
    """What a live turn found: the last completed pack of its thread, or why none."""

    prefetched: Prefetched | None
    why_none: str | None = None
    age_s: float | None = None

    def served(self) -> ScoutRun | None:
        """The pack's run as the turn records it: named :data:`PREFETCH_LABEL`."""
        if self.prefetched is None:
            return None
        return replace(self.prefetched.run, model_name=PREFETCH_LABEL)


@dataclass
class _Job:
    work: Callable[[], ScoutRun]
    turn: int
    ttl_s: float


@dataclass
class _Slot:
    """One thread's place in the cache: its last pack, its next message, its build."""

    entry: Prefetched | None = None
    queued: _Job | None = None
    """The message to build next (the newest one only)."""
    waiting: bool = False
    """In line for a worker."""
    worker: threading.Thread | None = None
    """The worker building it now."""
    touched: float = 0.0

    @property
    def busy(self) -> bool:
        return self.waiting or self.worker is not None


class PrefetchCache:
    """The packs of the threads of one process, keyed by thread (see the module docstring).

    The builds run in a pool of daemon workers that wait for work, so a turn that starts
    one only hands it over: it never waits for a thread to start (which a loaded machine
    can make last milliseconds). A worker with nothing to do for :data:`_IDLE_S` ends.
    ``clock`` (seconds, monotonic) is injectable so a test can age a pack without
    sleeping; ``max_threads`` bounds how many threads keep a pack.
    """

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, max_threads: int = MAX_THREADS
    ) -> None:
        self._clock = clock
        self._max_threads = max_threads
        self._slots: dict[Hashable, _Slot] = {}
        self._ready: deque[tuple[Hashable, _Slot]] = deque()
        self._workers: set[threading.Thread] = set()
        self._builders: set[threading.Thread] = set()
        self._idle = 0
        self._closed = False
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._done = threading.Condition(self._lock)
        self.refused = 0
        """Builds refused because the cap on pending work was reached."""

    # -- the live turn ---------------------------------------------------------------------

    def lookup(self, key: Hashable) -> Lookup:
        """The last completed pack of thread ``key``, or why there is none; an expired pack
        is dropped. Never waits for a build."""
        now = self._clock()
        with self._lock:
            slot = self._slots.get(key)
            if slot is None or slot.entry is None:
                why = (
                    "the first lookup of this thread is still being built"
                    if slot is not None and slot.busy
                    else "no earlier turn of this thread was looked up"
                )
                return Lookup(None, why)
            entry = slot.entry
            if now > entry.expires_at:
                slot.entry = None
                ttl = entry.expires_at - entry.built_at
                return Lookup(None, f"the last lookup expired (older than {ttl:g} s)")
            return Lookup(entry, None, now - entry.built_at)

    # -- after a turn ------------------------------------------------------------------------

    def warm(self) -> None:
        """Have a worker waiting, so the first build of a thread starts none (a thread's
        constructor calls it, before any turn)."""
        with self._lock:
            if not self._closed and self._idle == 0 and not self._workers:
                self._hire()

    def schedule(
        self,
        key: Hashable,
        work: Callable[[], ScoutRun],
        *,
        turn: int,
        ttl_s: float,
        max_pending: int,
    ) -> Scheduled:
        """Build a pack for thread ``key`` in the background with ``work`` (see the module
        docstring); returns at once."""
        job = _Job(work, turn, ttl_s)
        with self._lock:
            if self._closed:
                return "closed"
            self._sweep(key)
            slot = self._slots.get(key)
            if slot is not None and slot.busy:
                slot.queued = job  # the newest message wins
                return "queued"
            if len(self._builders) + len(self._ready) >= max_pending:
                self.refused += 1
                return "refused"
            if slot is None:
                slot = self._slots[key] = _Slot()
            slot.touched, slot.queued, slot.waiting = self._clock(), job, True
            self._ready.append((key, slot))
            if self._idle >= len(self._ready):
                self._work.notify()
            else:
                self._hire()
        return "started"

    def _hire(self) -> None:
        worker = threading.Thread(target=self._serve, name="prefetch", daemon=True)
        self._workers.add(worker)
        worker.start()

    def _serve(self) -> None:
        me = threading.current_thread()
        with self._lock:
            try:
                self._take_work(me)
            finally:
                # However the worker ends, it is no longer counted or waited for.
                self._workers.discard(me)
                self._builders.discard(me)
                self._done.notify_all()

    def _take_work(self, me: threading.Thread) -> None:
        """Build what is in line until the cache closes or the worker idles too long (the
        lock is held, and released while a pack is built)."""
        while True:
            while not self._ready and not self._closed:
                self._idle += 1
                woke = self._work.wait(_IDLE_S)
                self._idle -= 1
                if not woke and not self._ready:
                    break
            if not self._ready or self._closed:
                return
            key, slot = self._ready.popleft()
            job, slot.queued, slot.waiting = slot.queued, None, False
            if job is None or self._slots.get(key) is not slot:
                self._done.notify_all()  # dropped while in line: nothing to wait for
                continue
            slot.worker = me
            self._builders.add(me)
            self._lock.release()
            try:
                run, started, ended = self._build(job)
            finally:
                self._lock.acquire()
                self._builders.discard(me)
                slot.worker = None
            if run is not None and run.ok and self._slots.get(key) is slot:
                slot.entry = Prefetched(
                    run, job.turn, ended, ended + job.ttl_s, (ended - started) * 1000.0
                )
                slot.touched = ended
            if slot.queued is not None and self._slots.get(key) is slot and not self._closed:
                slot.waiting = True
                self._ready.append((key, slot))
            self._done.notify_all()

    def _build(self, job: _Job) -> tuple[ScoutRun | None, float, float]:
        """Run ``job`` (the lock is not held): its run, or ``None`` when it failed."""
        time.sleep(_LET_THE_TURN_END_S)
        started = self._clock()
        try:
            run: ScoutRun | None = job.work()
        except Exception:
            # A failed build only leaves the last pack in place; the live turns of the
            # thread go on whatever happens here.
            _log.warning("A prefetch build failed; the thread keeps its last pack.", exc_info=True)
            run = None
        return run, started, self._clock()

    def _sweep(self, coming: Hashable) -> None:
        """Drop expired packs, and when thread ``coming`` needs a place and there is none,
        the idle thread touched longest ago (the lock is held)."""
        now = self._clock()
        for key, slot in list(self._slots.items()):
            if slot.entry is not None and now > slot.entry.expires_at:
                slot.entry = None
            if slot.entry is None and not slot.busy and key != coming:
                del self._slots[key]
        if coming in self._slots or len(self._slots) < self._max_threads:
            return
        idle = [(slot.touched, key) for key, slot in self._slots.items() if not slot.busy]
        if idle:
            del self._slots[min(idle, key=lambda pair: pair[0])[1]]

    # -- ends --------------------------------------------------------------------------------

    def drop(self, key: Hashable) -> None:
        """Forget thread ``key``: its pack, its queued message; a build still running for
        it is thrown away when it ends."""
        with self._lock:
            slot = self._slots.pop(key, None)
            if slot is not None:
                slot.queued = None

    def wait(self, timeout_s: float, key: Hashable | None = None) -> bool:
        """Wait until thread ``key``'s builds (every thread's, for ``None``) have ended, at
        most ``timeout_s`` seconds; whether they have. For evaluations and tests: a live
        turn never calls it."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while True:
                if key is None:
                    busy = bool(self._builders or self._ready)
                else:
                    slot = self._slots.get(key)
                    busy = slot is not None and slot.busy
                left = deadline - time.monotonic()
                if not busy:
                    return True
                if left <= 0:
                    return False
                self._done.wait(left)

    def outstanding(self) -> list[threading.Thread]:
        """The workers building now (for threads dropped meanwhile too)."""
        with self._lock:
            return [worker for worker in self._builders if worker.is_alive()]

    def workers(self) -> list[threading.Thread]:
        """Every worker alive, building or waiting for work."""
        with self._lock:
            return [worker for worker in self._workers if worker.is_alive()]

    def pending(self) -> int:
        """Builds running or in line."""
        with self._lock:
            return len(self._builders) + len(self._ready)

    def __len__(self) -> int:
        """Threads that keep a pack or have a build running or in line."""
        with self._lock:
            return len(self._slots)

    def close(self, timeout_s: float = _EXIT_WAIT_S) -> bool:
        """Take no more work, drop the builds in line and wait up to ``timeout_s`` for the
        running ones and for every worker to end; whether none is left."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            self._closed = True
            for _, slot in self._ready:
                slot.queued, slot.waiting = None, False
            self._ready.clear()
            self._work.notify_all()
            while self._workers:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._done.wait(left)
        return True


def build_prefetch(
    message: str,
    *,
    workspace: Workspace,
    definition: AgentDefinition,
    conversation_id: str,
    budget: int = DEFAULT_PACK_TOKENS,
) -> ScoutRun:
    """The pack of ``message`` for a thread's next turn: :func:`~.pack.run_pack`, without
    the thread's own archived turns (``conversation_id``)."""
    return run_pack(
        message,
        workspace=workspace,
        definition=definition,
        budget=budget,
        registry=build_scout_registry(workspace, exclude_conversations=[conversation_id]),
    )


def start_lookup(
    cache: PrefetchCache,
    key: Hashable,
    message: str,
    *,
    workspace: Workspace,
    definition: AgentDefinition,
    conversation_id: str,
    settings: PreflightSettings,
    turn: int,
) -> str | None:
    """Start the pack of ``message`` (turn ``turn`` of thread ``key``) for the thread's
    next turn, within ``settings``' TTL and cap; never waits. A note for the turn when
    no lookup could start, else ``None``."""
    budget = settings.pack_tokens
    done = cache.schedule(
        key,
        lambda: build_prefetch(
            message,
            workspace=workspace,
            definition=definition,
            conversation_id=conversation_id,
            budget=budget,
        ),
        turn=turn,
        ttl_s=settings.prefetch_ttl_s,
        max_pending=settings.prefetch_pending,
    )
    if done == "refused":
        return (
            f"prefetch: no lookup started for the next turn ({settings.prefetch_pending} "
            "lookups already running, the cap)"
        )
    if done == "closed":
        return "prefetch: no lookup started for the next turn (the process is ending)"
    return None


_SHARED = PrefetchCache()
# At exit the builds still running are given a moment to end: a daemon thread is stopped
# wherever it is when the interpreter ends.
atexit.register(_SHARED.close)


def shared_cache() -> PrefetchCache:
    """The process's cache, which every :class:`~.thread.Thread` uses unless handed one."""
    return _SHARED
