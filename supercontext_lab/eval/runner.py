"""Run every case under every variant and score the bundles.

:func:`evaluate` turns (dataset × variants × repeats) into :class:`~.case_task.CaseTask`
records — plain, picklable data — and hands them to an executor (:mod:`.executors`),
which runs each with :func:`~.case_task.run_case_task` on the case's workspace. Results
come back in task order whatever the executor, so reports do not depend on scheduling;
they add up to one :class:`~.summary.VariantReport` per variant (:mod:`.summary`).

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
from pathlib import Path
from typing import Any, Literal

from ..errors import WorkspaceError
from ..harness.designs import check_deadline_ms
from ..models.cache import CacheMode, default_cache_path
from ..models.routing import ORCHESTRATOR_HINT
from ..routes import ModelRoute, get_model_route
from ..scout import DEFAULT_SCOUT_TIMEOUT_S
from ..sources.demo import demo_workspace_path
from .case_task import CaseTask, run_case_task
from .clusters import case_clusters
from .dataset import EvalCase, load_dataset
from .end_to_end import COLD
from .executors import EXECUTORS, ExecutorName, run_tasks
from .keys import (
    case_result_key,
    model_identity,
    recall_identity,
    workspace_fingerprint,
)
from .report import EvalReport
from .results import CaseResult, result_from_record
from .session import EvalSession
from .summary import paired_comparisons, variant_report, with_replies
from .variants import Variant, VariantSpec, baseline, design_variant

__all__ = ["CaseTask", "evaluate", "run_case_task"]

CacheSetting = bool | Literal["readwrite", "replay", "off"]


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
    end_to_end: bool = False,
    orchestrator: dict[str, Any] | None = None,
    deadline_ms: float | None = None,
) -> list[CaseTask]:
    """Every task, with its result-cache key; opens and reads each workspace once.

    Whole turns (``end_to_end``), runs under a deadline and the designs that run no scout
    are not stored whole (a turn's reply is not part of a stored result, whether a
    deadline is met depends on the machine, and a pack or a cached envelope costs less
    than a lookup); their model replies still go through the response cache.
    """
    fingerprints: dict[str, str] = {}
    tasks: list[CaseTask] = []
    for spec in specs:
        # A factory's model cannot be identified from outside: no result caching for it.
        keyed = (
            session.results is not None
            and spec.model_factory is None
            and spec.design == "scout"
            and not end_to_end
            and deadline_ms is None
        )
        definition = spec.definition().fingerprint() if keyed else ""
        model = model_identity(spec.route or {}) if keyed else {}
        recall = recall_identity() if keyed else "off"
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
                        recall=recall,
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
                        end_to_end=end_to_end,
                        orchestrator=orchestrator,
                        deadline_ms=deadline_ms,
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
    end_to_end: bool = False,
    orchestrator: ModelRoute | None = None,
    deadline_ms: float | None = None,
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

    Pre-flight designs (SPEC §16): a variant's ``design`` (:func:`~.variants.design_variant`)
    decides how each case is prepared; ``deadline_ms`` is the ``scout`` design's pre-turn
    deadline. With ``end_to_end`` each case is the first message of a new thread, answered
    by the ``orchestrator`` route (default: the configured ``agentic`` one) at
    temperature 0 (:mod:`.end_to_end`); a ``cold`` variant is added when none is given,
    and the reply metrics are paired against it. Every rate has its 95 % interval and
    every two variants their paired comparison (:mod:`.stats`).
    """
    cases = (
        load_dataset(dataset, allowed_workspaces=[workspace] if workspace else [])
        if isinstance(dataset, (str, os.PathLike))
        else list(dataset)
    )
    _check_settings(cases, executor, concurrency, repeats)
    mode = _cache_mode(cache)
    chosen = _variant_list(variants)
    if deadline_ms is not None:
        check_deadline_ms(deadline_ms)
    route: dict[str, Any] | None = None
    if end_to_end:
        chosen = _with_cold(chosen)
        route = (orchestrator or get_model_route(ORCHESTRATOR_HINT)).model_dump()
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
            end_to_end=end_to_end,
            orchestrator=route,
            deadline_ms=deadline_ms,
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
    reports = [variant_report(variant, results, repeats) for variant in chosen]
    clusters = case_clusters(cases)
    if end_to_end:
        reports = with_replies(reports, results, clusters)
    return EvalReport(
        cases=cases,
        variants=reports,
        results=results,
        paired=paired_comparisons(reports, results, end_to_end=end_to_end, clusters=clusters),
        settings={
            "executor": executor,
            "concurrency": concurrency,
            "repeats": repeats,
            "cache": mode,
            "cache_path": store if mode != "off" else None,
            **(
                {"end_to_end": True, "orchestrator": _route_label(route)}
                if end_to_end and route is not None
                else {}
            ),
            **({"deadline_ms": deadline_ms} if deadline_ms is not None else {}),
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


def _with_cold(variants: list[Variant]) -> list[Variant]:
    """``variants`` with a ``cold`` one, which end-to-end metrics are paired against."""
    cold = [variant for variant in variants if variant.name == COLD]
    if cold and cold[0].design != "cold":
        raise ValueError(
            f"a variant named {COLD!r} must be the cold design in an end-to-end evaluation; "
            "rename it"
        )
    return variants if cold else [*variants, design_variant("cold")]


def _route_label(route: dict[str, Any]) -> str:
    parsed = ModelRoute.model_validate(route)
    if parsed.kind in ("offline", "baseline"):
        return "offline"
    return parsed.label or f"{parsed.kind}:{parsed.model}"
