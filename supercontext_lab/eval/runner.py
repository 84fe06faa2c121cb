"""Run every case under every variant and score the bundles.

:func:`evaluate` turns (dataset × variants × repeats) into :class:`CaseTask` records —
plain, picklable data — and hands them to an executor (:mod:`.executors`). Each task runs
the scout once through the explicit path (:func:`~supercontext_lab.scout.run_scout`, no
gate) on the case's workspace and returns a :class:`CaseResult`. Results come back in task
order whatever the executor, so reports do not depend on scheduling.

Two caches make a rerun cheap, both in one SQLite file and both switched by ``cache``:

* the response cache (:mod:`supercontext_lab.models.cache`) serves the model's replies;
* the result store (:mod:`.results`, keyed by :mod:`.keys`) serves whole runs: a task whose inputs are all
  unchanged (definition, model, message, focus, workspace content, repeat, package code)
  gets its stored result back, rescored against the case's current expectations, and
  nothing runs at all. Such a result says ``from_cache=True`` and keeps the latency it was
  measured with.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import WorkspaceError
from ..models.base import ChatModel
from ..models.cache import CachedModel, CacheMode, default_cache_path
from ..scout import DEFAULT_SCOUT_TIMEOUT_S, run_scout, trace_summary
from ..sources.demo import demo_workspace_path
from .dataset import EvalCase, load_dataset
from .executors import EXECUTORS, ExecutorName, run_tasks
from .keys import (
    case_result_key,
    model_identity,
    workspace_fingerprint,
)
from .metrics import aggregate, score_case, spread
from .report import EvalReport, VariantReport
from .results import CaseResult, result_from_record, result_record, storable
from .session import EvalSession, session_for
from .variants import Variant, VariantSpec, baseline

__all__ = ["CaseTask", "evaluate", "run_case_task"]

CacheSetting = bool | Literal["readwrite", "replay", "off"]


@dataclass(frozen=True)
class CaseTask:
    """One scout run to do: a case, a variant, a repeat, where and how to cache.

    ``session`` names the evaluation's :class:`EvalSession`; ``result_key`` is the run's
    key in the result store (``None``: not cached at that level).
    """

    index: int
    case: EvalCase
    variant: VariantSpec
    repeat: int
    workspace: str
    demo: bool
    cache_path: str | None
    cache_mode: CacheMode
    timeout_s: float
    session: str = ""
    result_key: str | None = None


def run_case_task(task: CaseTask) -> CaseResult:
    """Run and score one task. Module-level and fed plain data so Dask can ship it.

    In the process that called :func:`evaluate` the task uses that call's
    :class:`~supercontext_lab.eval.session.EvalSession`; elsewhere a session of its own.
    """
    session, owned = session_for(
        task.session, cache_path=task.cache_path, cache_mode=task.cache_mode
    )
    try:
        definition = task.variant.definition()
        workspace = session.workspace(task.workspace, task.demo)
        model: ChatModel = session.model(task.variant)
        cached: CachedModel | None = None
        if session.cache is not None:
            cached = CachedModel(
                model, cache=session.cache, mode=task.cache_mode, sample=task.repeat
            )
            model = cached
        run = run_scout(
            task.case.message,
            workspace=workspace,
            model=model,
            definition=definition,
            focus=task.case.focus,
            timeout_s=task.timeout_s,
        )
        bundle = run.bundle.to_dict() if run.bundle is not None else None
        grounding = run.grounding.to_dict() if run.grounding is not None else None
        gathered = run.gathered
        result = CaseResult(
            id=task.case.id,
            variant=task.variant.name,
            repeat=task.repeat,
            status=str(run.status),
            envelope=run.envelope,
            bundle=bundle,
            problems=list(run.problems),
            trace_summary=trace_summary(run.trace),
            elapsed_ms=run.elapsed_ms,
            tokens=run.usage.total_tokens,
            model_calls=run.model_calls,
            model_name=run.model_name,
            definition_hash=run.definition_hash,
            scores=score_case(
                task.case.expect, run.envelope, bundle, grounding=grounding, gathered=gathered
            ),
            grounding=grounding,
            gathered=gathered,
            cache_hits=cached.hits if cached is not None else 0,
            cache_misses=cached.misses if cached is not None else 0,
            workspace=str(workspace.root),
        )
        if (
            task.result_key is not None
            and task.cache_mode == "readwrite"
            and session.results is not None
            and storable(run)
        ):
            session.results.put(
                task.result_key,
                result_record(result),
                label=f"{task.case.id} / {task.variant.name} / repeat {task.repeat}",
            )
    finally:
        if owned:
            session.close()
    return result


def _cache_mode(cache: CacheSetting) -> CacheMode:
    if cache is True:
        return "readwrite"
    if cache is False:
        return "off"
    if cache in ("readwrite", "replay", "off"):
        return cache
    raise ValueError(f"cache must be True, False, 'readwrite', 'replay' or 'off', not {cache!r}")


def _variant_list(variants: Variant | Sequence[Variant] | None) -> list[Variant]:
    if variants is None:
        return [baseline()]
    items = [variants] if isinstance(variants, Variant) else list(variants)
    if not items:
        raise ValueError("evaluate needs at least one variant, e.g. [baseline()]")
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, Variant):
            raise TypeError(
                f"variants must be Variant objects (Variant.from_path(name, path)), "
                f"not {type(item).__name__}"
            )
        if item.name in seen:
            raise ValueError(f"two variants are named {item.name!r}; give each a unique name")
        seen.add(item.name)
    return items


def _plan(
    session: EvalSession,
    cases: Sequence[EvalCase],
    specs: Sequence[VariantSpec],
    *,
    repeats: int,
    default_workspace: tuple[str, bool],
    cache_path: str | None,
    timeout_s: float,
) -> list[CaseTask]:
    """Every task, with its result-cache key; opens and reads each workspace once."""
    fingerprints: dict[str, str] = {}
    tasks: list[CaseTask] = []
    for spec in specs:
        # A factory's model cannot be identified from outside: no result caching for it.
        keyed = session.results is not None and spec.model_factory is None
        definition = spec.definition().fingerprint() if keyed else ""
        model = model_identity(spec.route or {}) if keyed else {}
        for repeat in range(repeats):
            for case in cases:
                own = case.workspace is not None
                path = str(case.workspace) if own else default_workspace[0]
                demo = not own and default_workspace[1]
                workspace = session.workspace(path, demo, warm=True)
                key = None
                if keyed:
                    if path not in fingerprints:
                        fingerprints[path] = workspace_fingerprint(workspace.root)
                    key = case_result_key(
                        definition=definition,
                        model=model,
                        message=case.message,
                        focus=case.focus,
                        workspace=fingerprints[path],
                        repeat=repeat,
                    )
                tasks.append(
                    CaseTask(
                        index=len(tasks),
                        case=case,
                        variant=spec,
                        repeat=repeat,
                        workspace=path,
                        demo=demo,
                        cache_path=cache_path,
                        cache_mode=session.cache_mode,
                        timeout_s=timeout_s,
                        session=session.id,
                        result_key=key,
                    )
                )
    return tasks


def _stored_results(session: EvalSession, tasks: Sequence[CaseTask]) -> dict[int, CaseResult]:
    """The tasks the result store can answer, by task index."""
    store = session.results
    served: dict[int, CaseResult] = {}
    if store is None:
        return served
    for task in tasks:
        if task.result_key is None:
            continue
        record = store.get(task.result_key)
        if record is not None:
            root = str(session.workspace(task.workspace, task.demo).root)
            served[task.index] = result_from_record(
                record,
                case=task.case,
                variant=task.variant.name,
                repeat=task.repeat,
                key=task.result_key,
                store=store,
                workspace=root,
            )
    return served


def evaluate(
    dataset: str | os.PathLike[str] | Sequence[EvalCase],
    variants: Variant | Sequence[Variant] | None = None,
    *,
    executor: ExecutorName = "sequential",
    concurrency: int = 8,
    repeats: int = 1,
    cache: CacheSetting = True,
    dask_address: Any = None,
    progress: bool = True,
    workspace: str | os.PathLike[str] | None = None,
    timeout_s: float = DEFAULT_SCOUT_TIMEOUT_S,
    cache_path: str | os.PathLike[str] | None = None,
) -> EvalReport:
    """Run every case of ``dataset`` under every variant ``repeats`` times; return the report.

    ``dataset`` is a JSONL path or a list of :class:`EvalCase`; ``variants`` defaults to
    ``[baseline()]``. ``executor`` is ``"sequential"`` (one after another, in order),
    ``"local"`` (threads, at most ``concurrency`` at once) or ``"dask"`` (a Dask cluster:
    ``dask_address`` is a scheduler address or a ``distributed.Client``; ``None`` starts a
    local cluster of ``concurrency`` single-threaded worker processes). ``cache`` is
    ``True`` (read and write the result and response caches), ``False`` (neither), or
    ``"replay"`` (recorded results and responses only; a run that needs a reply that was
    never recorded raises :class:`~supercontext_lab.errors.CacheError`); ``cache_path``
    is their SQLite file (default under the lab home).
    ``workspace`` is used for cases that name none (default: the demo workspace).
    Results are in a deterministic order whatever the executor.
    """
    cases = (
        load_dataset(dataset, allowed_workspaces=[workspace] if workspace else [])
        if isinstance(dataset, (str, os.PathLike))
        else list(dataset)
    )
    _check_settings(cases, executor, concurrency, repeats)
    mode = _cache_mode(cache)
    chosen = _variant_list(variants)
    default_workspace = _default_workspace(cases, workspace)
    store = str(Path(cache_path) if cache_path is not None else default_cache_path())
    with EvalSession(cache_path=store, cache_mode=mode) as session:
        tasks = _plan(
            session,
            cases,
            [variant.spec() for variant in chosen],
            repeats=repeats,
            default_workspace=default_workspace,
            cache_path=store if mode != "off" else None,
            timeout_s=timeout_s,
        )
        started = time.perf_counter()
        results = _results(
            session,
            tasks,
            executor=executor,
            concurrency=concurrency,
            progress=progress,
            dask_address=dask_address,
        )
        wall_s = time.perf_counter() - started
    return EvalReport(
        cases=cases,
        variants=[_variant_report(variant, results, repeats) for variant in chosen],
        results=results,
        settings={
            "executor": executor,
            "concurrency": concurrency,
            "repeats": repeats,
            "cache": mode,
            "cache_path": store if mode != "off" else None,
        },
        wall_s=wall_s,
    )


def _check_settings(
    cases: Sequence[EvalCase], executor: str, concurrency: int, repeats: int
) -> None:
    """Refuse an empty dataset, an unknown executor and counts that are not whole >= 1."""
    if not cases:
        raise ValueError("the dataset holds no cases")
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {executor!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a whole number >= 1, not {concurrency!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number >= 1, not {repeats!r}")


def _default_workspace(
    cases: Sequence[EvalCase], workspace: str | os.PathLike[str] | None
) -> tuple[str, bool]:
    """The workspace of the cases that name none, and whether it is the demo."""
    if workspace is not None:
        root = Path(workspace).expanduser()
        if not root.is_dir():
            raise WorkspaceError(f"workspace folder '{root}' does not exist; pass a folder.")
        return str(root.resolve()), False
    if any(case.workspace is None for case in cases):
        return str(demo_workspace_path()), True
    return "", False


def _results(
    session: EvalSession,
    tasks: Sequence[CaseTask],
    *,
    executor: ExecutorName,
    concurrency: int,
    progress: bool,
    dask_address: Any,
) -> list[CaseResult]:
    """Every task's result, in task order: from the result store, else run."""
    served = _stored_results(session, tasks)
    pending = [task for task in tasks if task.index not in served]
    ran: list[CaseResult] = run_tasks(
        run_case_task,
        pending,
        executor=executor,
        concurrency=concurrency,
        progress=progress,
        dask_address=dask_address,
        done=len(served),
    )
    by_index = {
        **served,
        **{task.index: result for task, result in zip(pending, ran, strict=True)},
    }
    return [by_index[task.index] for task in tasks]


def _variant_report(variant: Variant, results: Sequence[CaseResult], repeats: int) -> VariantReport:
    """One variant's metrics (and their spread over repeats) from its results."""
    mine = [result for result in results if result.variant == variant.name]
    per_repeat = [
        aggregate([r.measure() for r in mine if r.repeat == repeat]) for repeat in range(repeats)
    ]
    return VariantReport(
        name=variant.name,
        metrics=aggregate([r.measure() for r in mine]),
        spread=spread(per_repeat) if repeats > 1 else {},
        per_repeat=per_repeat if repeats > 1 else [],
        cache_hits=sum(r.cache_hits for r in mine),
        cache_misses=sum(r.cache_misses for r in mine),
        reused_runs=sum(1 for r in mine if r.from_cache),
        definition_hash=variant.definition.definition_hash(),
        source=variant.definition.source,
        model=variant.model_label(),
    )
