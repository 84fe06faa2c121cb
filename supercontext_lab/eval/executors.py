"""Executors: how the tasks of an evaluation are run.

* ``sequential``: one after another, in order (deterministic, easiest to debug);
* ``local``: a thread pool with at most ``concurrency`` tasks at once — scout runs spend
  their time waiting on model servers, so threads are enough on one machine;
* ``dask``: a Dask distributed cluster. ``dask_address=None`` starts a local cluster of
  single-threaded worker processes (and closes it afterwards); a ``"tcp://host:8786"``
  address reaches a running scheduler; a ``distributed.Client`` is used as it is and left
  open. Tasks are submitted with ``pure=False``: identical-looking calls are separate
  samples, not duplicates to be merged.

Whatever the executor, results come back in task order. Progress bars come from
``tqdm.auto`` (a widget in notebooks, text on stderr in terminals). Dask and tqdm are
imported only when used, so importing this module stays light.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import logging
import os
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

__all__ = ["EXECUTORS", "ExecutorName", "run_tasks"]

ExecutorName = Literal["sequential", "local", "dask"]
EXECUTORS: tuple[ExecutorName, ...] = ("sequential", "local", "dask")

T = TypeVar("T")
R = TypeVar("R")


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, enabled: bool, description: str, done: int = 0) -> Any:
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total + done, initial=done, desc=description, unit="run", leave=True)


def _sequential(fn: Callable[[T], R], tasks: Sequence[T], bar: Any) -> list[R]:
    results = []
    for task in tasks:
        results.append(fn(task))
        bar.update(1)
    return results


def _threads(fn: Callable[[T], R], tasks: Sequence[T], bar: Any, concurrency: int) -> list[R]:
    results: dict[int, R] = {}
    with concurrent.futures.ThreadPoolExecutor(
        max_workers=concurrency, thread_name_prefix="scout-eval"
    ) as pool:
        futures = {pool.submit(fn, task): index for index, task in enumerate(tasks)}
        try:
            for future in concurrent.futures.as_completed(futures):
                results[futures[future]] = future.result()
                bar.update(1)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return [results[index] for index in range(len(tasks))]


def _dask(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    bar: Any,
    concurrency: int,
    address: Any,
) -> list[R]:
    try:
        # Typed as Any: distributed's own annotations are partial.
        dd: Any = importlib.import_module("distributed")
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise ImportError(
            "the dask executor needs Dask distributed: pip install 'supercontext-lab[dask]'"
        ) from exc
    cluster = None
    owned = True
    if isinstance(address, dd.Client):
        client, owned = address, False
    elif address is None:
        workers = max(1, min(concurrency, os.cpu_count() or 1, len(tasks)))
        cluster = dd.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            # No dashboard; the scheduler's small HTTP server takes any free loopback port
            # instead of 8787, which another cluster may already hold.
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            # A throwaway cluster's shutdown races (a heartbeat to a scheduler already
            # gone) are logged as errors; task failures still reach the caller as
            # exceptions, so its own logs only add noise.
            silence_logs=logging.CRITICAL,
        )
        client = dd.Client(cluster)
    else:
        client = dd.Client(address)
    try:
        futures = client.map(fn, list(tasks), pure=False)
        try:
            for _ in dd.as_completed(futures):
                bar.update(1)
            gathered: list[R] = client.gather(futures)
        except BaseException:
            client.cancel(futures)
            raise
        return gathered
    finally:
        if owned:
            client.close()
            if cluster is not None:
                cluster.close()


def run_tasks(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    *,
    executor: ExecutorName = "sequential",
    concurrency: int = 8,
    progress: bool = True,
    dask_address: Any = None,
    description: str = "scout eval",
    done: int = 0,
) -> list[R]:
    """Apply ``fn`` to every task with the chosen executor; results in task order.

    ``done`` counts work finished before (results served from a cache): the progress bar
    starts there. The first task that raises stops the run and its exception propagates
    (remaining tasks are cancelled where the executor allows it).
    """
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {executor!r}")
    bar = _bar(len(tasks), progress, description, done)
    try:
        if executor == "sequential" or not tasks:
            return _sequential(fn, tasks, bar)
        if executor == "local":
            return _threads(fn, tasks, bar, concurrency)
        return _dask(fn, tasks, bar, concurrency, dask_address)
    finally:
        bar.close()
