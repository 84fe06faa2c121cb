"""The Dask executor gives the sequential executor's results, on local clusters."""

from __future__ import annotations

import pytest

from supercontext_lab import CacheError
from supercontext_lab.eval import EvalCase, Variant, baseline, evaluate
from supercontext_lab.eval.metrics import TIMING_METRICS
from supercontext_lab.eval.results import ResultStore
from supercontext_lab.models.cache import default_cache_path

from .conftest import stored_whole

distributed = pytest.importorskip("distributed")


def _stable(metrics: dict[str, float | int]) -> dict[str, float | int]:
    return {name: value for name, value in metrics.items() if name not in TIMING_METRICS}


def test_dask_metrics_equal_sequential_metrics(
    small_cases: list[EvalCase], no_memory_variant: Variant
) -> None:
    variants = [baseline(), no_memory_variant]
    sequential = evaluate(small_cases, variants, progress=False)
    # Results reused whole would never reach the cluster: keep only the recorded replies.
    with ResultStore(default_cache_path()) as store:
        assert store.clear() == sum(stored_whole(r) for r in sequential.results)
    # No address: the executor starts a LocalCluster of two single-threaded worker
    # processes (they inherit this test's lab home) and closes it afterwards.
    on_dask = evaluate(small_cases, variants, executor="dask", concurrency=2, progress=False)
    assert [(r.id, r.variant, r.envelope) for r in on_dask.results] == [
        (r.id, r.variant, r.envelope) for r in sequential.results
    ]
    for name in sequential.variant_names:
        assert _stable(on_dask.metrics(name)) == _stable(sequential.metrics(name))
    # The workers read the responses the sequential run recorded (same file, same keys).
    assert on_dask.cache_misses == 0
    assert on_dask.cache_hits == sum(r.model_calls for r in on_dask.results)
    assert {r.workspace for r in on_dask.results} == {r.workspace for r in sequential.results}
    assert not any(r.from_cache for r in on_dask.results)
    # The workers stored the results they ran: the next evaluation reuses them.
    again = evaluate(small_cases, variants, executor="dask", concurrency=2, progress=False)
    assert [r.from_cache for r in again.results] == [stored_whole(r) for r in on_dask.results]
    assert again.reused_runs > 0
    assert [r.envelope for r in again.results] == [r.envelope for r in sequential.results]


def test_a_client_or_an_address_reaches_a_running_cluster(small_cases: list[EvalCase]) -> None:
    cases = small_cases[:2]
    sequential = evaluate(cases, progress=False, cache=False)
    with (
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        by_address = evaluate(
            cases,
            executor="dask",
            dask_address=cluster.scheduler_address,
            progress=False,
            cache=False,
        )
        assert [r.envelope for r in by_address.results] == [r.envelope for r in sequential.results]
        with pytest.raises(CacheError, match="No recorded response"):
            evaluate(cases, executor="dask", dask_address=client, cache="replay", progress=False)
        # A client passed in belongs to the caller: it stays open.
        assert client.status == "running"
        by_client = evaluate(cases, executor="dask", dask_address=client, progress=False)
        assert _stable(by_client.metrics("baseline")) == _stable(sequential.metrics("baseline"))
