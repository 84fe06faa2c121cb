"""A pre-turn deadline: run the scout in a worker and stop waiting for it on time.

:func:`run_before` starts the work in a thread of its own and waits for it until the
deadline, never longer: a result that comes later is never waited for and never used,
even when it ended before the caller came to wait (the caller was busy past the deadline).
The work is handed the time left, so it bounds itself by the same deadline (the scout
gives each model call and each tool read the time left of its run, and an HTTP request
past it times out and closes its connection): a worker that missed the deadline ends
shortly after it, and nothing it started outlives it. :func:`outstanding` lists the
workers that missed their deadline and have not ended yet, so tests and benchmarks can
check that none is left behind. :func:`collector_paused` keeps the cyclic garbage collector
from stopping every thread while a deadline is waited for.
"""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = [
    "Late",
    "Outcome",
    "Pending",
    "collector_paused",
    "outstanding",
    "run_before",
    "start",
]

T = TypeVar("T")

# Workers that missed their deadline, until they end (a weak set: an ended thread that
# nothing refers to any more simply leaves it).
_LATE: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
_LATE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Late:
    """A worker that missed its deadline; ``thread`` ends by itself shortly after it."""

    thread: threading.Thread
    deadline_ms: float

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the worker to end (at most ``timeout`` seconds); whether it has."""
        self.thread.join(timeout)
        return not self.thread.is_alive()


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What :func:`run_before` saw by the deadline.

    ``value`` is the work's result when it finished in time (``None`` otherwise), and
    ``error`` the exception it raised in time; ``late`` is set when it had not finished;
    ``waited_ms`` is how long the caller waited.
    """

    value: T | None
    error: BaseException | None
    late: Late | None
    waited_ms: float

    @property
    def missed(self) -> bool:
        return self.late is not None


class Pending(Generic[T]):
    """Work started by :func:`start`, running in its own daemon thread until it ends."""

    def __init__(
        self, work: Callable[[float], T], deadline_ms: float, name: str, since: float | None
    ) -> None:
        self.deadline_ms = deadline_ms
        self._started = time.perf_counter() if since is None else since
        self._seconds = deadline_ms / 1000.0
        self._ended: float | None = None
        self._done = threading.Event()
        self._box: dict[str, object] = {}
        self.thread = threading.Thread(
            target=self._target, args=(work,), name=f"{name}-deadline", daemon=True
        )
        self.thread.start()

    def _left(self) -> float:
        return self._seconds - (time.perf_counter() - self._started)

    def _target(self, work: Callable[[float], T]) -> None:
        try:
            self._box["value"] = work(max(self._left(), 0.001))
        except BaseException as exc:  # handed to the caller, never lost in a thread
            self._box["error"] = exc
        finally:
            self._ended = time.perf_counter()
            self._done.set()

    def wait(self) -> Outcome[T]:
        """Wait until the work ends or the deadline passes, whichever comes first. Work
        that ended after its deadline is late, whenever the caller came to wait: its
        result is not used."""
        finished = self._done.wait(max(self._left(), 0.0))
        waited = (time.perf_counter() - self._started) * 1000.0
        ended = self._ended
        if not finished or ended is None or ended - self._started > self._seconds:
            self.abandon()
            return Outcome(None, None, Late(self.thread, self.deadline_ms), waited)
        error = self._box.get("error")
        return Outcome(
            self._box.get("value"),  # type: ignore[arg-type]
            error if isinstance(error, BaseException) else None,
            None,
            waited,
        )

    def abandon(self) -> None:
        """Stop caring for the work: its result is never used, and until it ends by
        itself its thread is listed by :func:`outstanding`."""
        if self.thread.is_alive():
            with _LATE_LOCK:
                _LATE.add(self.thread)


def start(
    work: Callable[[float], T],
    deadline_ms: float,
    *,
    name: str = "preflight",
    since: float | None = None,
) -> Pending[T]:
    """Start ``work(seconds_left)`` in a new daemon thread, due ``deadline_ms`` after
    ``since`` (a ``time.perf_counter()`` instant; default now); the caller may do other
    things before :meth:`Pending.wait`."""
    return Pending(work, deadline_ms, name, since)


def run_before(
    work: Callable[[float], T], deadline_ms: float, *, name: str = "preflight"
) -> Outcome[T]:
    """Run ``work(seconds_left)`` in a new daemon thread and wait for it at most
    ``deadline_ms`` milliseconds from now (see the module docstring)."""
    return start(work, deadline_ms, name=name).wait()


def outstanding() -> list[threading.Thread]:
    """The workers that missed their deadline and are still running."""
    with _LATE_LOCK:
        return [thread for thread in list(_LATE) if thread.is_alive()]


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, on again after it if it was on.

    A full collection holds every thread of the process while it walks the heap: 120 ms
    in a process holding 3,000 notes' index and a loaded embedding model, several times
    a 50 ms deadline's slack (``python -m benchmarks semantic --deadline-ms 50``: the
    pre-flight's p95 was 2.6-3.2× the deadline with it, 1.35× without). What the block
    leaves to collect is collected by the first collection after it. Pre-flights that
    overlap (an evaluation's) each turn it back on when they end, so it is never left off.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
