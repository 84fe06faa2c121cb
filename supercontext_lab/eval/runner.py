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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ..bundle import ContextBundle
from ..errors import WorkspaceError
from ..harness.designs import PreflightSettings, check_deadline_ms, preflight_settings
from ..harness.preflight import run_preflight
from ..models.base import ChatModel
from ..models.cache import CachedModel, CacheMode, default_cache_path
from ..models.routing import ORCHESTRATOR_HINT
from ..routes import ModelRoute, get_model_route
from ..scout import DEFAULT_SCOUT_TIMEOUT_S, ScoutRun, run_scout, trace_summary
from ..sources.demo import demo_workspace_path
from ..sources.workspace import Workspace
from .dataset import EvalCase, load_dataset
from .end_to_end import COLD, paired_counts, reply_metrics
from .executors import EXECUTORS, ExecutorName, run_tasks
from .keys import (
    case_result_key,
    model_identity,
    workspace_fingerprint,
)
from .metrics import aggregate, rate_counts, score_case, spread
from .report import EvalReport, VariantReport
from .results import CaseResult, result_from_record, result_record, storable
from .session import EvalSession, session_for
from .stats import CaseCounts, PairedComparison, compare_pair, wilson
from .variants import Variant, VariantSpec, baseline, design_variant

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
    end_to_end: bool = False
    """Run the whole first turn (:mod:`.end_to_end`), not the pre-flight alone."""
    orchestrator: dict[str, Any] | None = None
    """The orchestrator's route of an end-to-end task (``None``: the configured one)."""
    deadline_ms: float | None = None
    """The pre-turn deadline of the ``scout`` design (SPEC §16)."""


def _result(
    task: CaseTask,
    run: ScoutRun | None,
    *,
    envelope: str | None,
    bundle: ContextBundle | None,
    elapsed_ms: float,
    workspace: Workspace,
    cached: Sequence[CachedModel | None] = (),
    status: str | None = None,
    turn: dict[str, Any] | None = None,
) -> CaseResult:
    """The scored result of one task from what prepared it (``run`` ``None``: nothing)."""
    shown = bundle.to_dict() if bundle is not None else None
    grounding = run.grounding.to_dict() if run is not None and run.grounding is not None else None
    gathered = run.gathered if run is not None else ""
    counters = [model for model in cached if model is not None]
    return CaseResult(
        id=task.case.id,
        variant=task.variant.name,
        repeat=task.repeat,
        status=status or (str(run.status) if run is not None else "cold"),
        envelope=envelope,
        bundle=shown,
        problems=list(run.problems) if run is not None else [],
        trace_summary=trace_summary(run.trace if run is not None else []),
        elapsed_ms=elapsed_ms,
        tokens=run.usage.total_tokens if run is not None else 0,
        model_calls=run.model_calls if run is not None else 0,
        model_name=run.model_name if run is not None else task.variant.design,
        definition_hash=task.variant.definition().definition_hash(),
        scores=score_case(
            task.case.expect,
            envelope,
            shown,
            grounding=grounding,
            gathered=gathered if run is not None else None,
        ),
        grounding=grounding,
        gathered=gathered,
        cache_hits=sum(model.hits for model in counters),
        cache_misses=sum(model.misses for model in counters),
        workspace=str(workspace.root),
        turn=turn,
    )


def _cached_model(session: EvalSession, task: CaseTask, model: ChatModel) -> CachedModel | None:
    if session.cache is None:
        return None
    return CachedModel(model, cache=session.cache, mode=task.cache_mode, sample=task.repeat)


def _settings(task: CaseTask) -> PreflightSettings:
    # The [preflight] table's budgets and fallback, the variant's design and the
    # evaluation's deadline.
    return preflight_settings().with_overrides(
        design=task.variant.design, deadline_ms=task.deadline_ms
    )


def _run_turn(
    task: CaseTask, session: EvalSession, workspace: Workspace, scout: ChatModel
) -> tuple[CaseResult, CachedModel | None]:
    """An end-to-end task: the case as the first message of a new thread."""
    from ..harness import Thread
    from ..routes import ModelRoute
    from .end_to_end import AtTemperature, turn_record

    inner = session.orchestrator(ModelRoute.model_validate(task.orchestrator or {}))
    cached = _cached_model(session, task, inner)
    thread = Thread(
        workspace,
        definition=task.variant.definition(),
        scout_model=scout,
        orchestrator_model=AtTemperature(cached or inner, 0.0),
        super_context_enabled=True,
        scout_timeout_s=task.timeout_s,
        design=task.variant.design,
        deadline_ms=task.deadline_ms,
        record_recalls=False,
        # Evaluations never archive: a case's turn would be a past conversation to the
        # cases after it (SPEC §15).
        archive=False,
    )
    turn = thread.send(task.case.message)
    result = _result(
        task,
        turn.scout,
        envelope=turn.envelope,
        bundle=turn.bundle,
        elapsed_ms=turn.timings_ms.get("preparation_ms", 0.0),
        workspace=workspace,
        cached=[cached],
        status=str(turn.preparation),
        turn=turn_record(turn, task.case.expect),
    )
    return result, cached


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
        cached = _cached_model(session, task, model)
        model = cached or model
        if task.end_to_end:
            result, _ = _run_turn(task, session, workspace, model)
            return replace(
                result,
                cache_hits=result.cache_hits + (cached.hits if cached else 0),
                cache_misses=result.cache_misses + (cached.misses if cached else 0),
            )
        if task.variant.design != "scout" or task.deadline_ms is not None:
            scout_model = model

            def scout(timeout_s: float | None, on_step: Any) -> ScoutRun:
                return run_scout(
                    task.case.message,
                    workspace=workspace,
                    model=scout_model,
                    definition=definition,
                    focus=task.case.focus,
                    timeout_s=task.timeout_s if timeout_s is None else timeout_s,
                    on_step=on_step,
                )

            done = run_preflight(
                task.case.message,
                settings=_settings(task),
                workspace=workspace,
                definition=definition,
                scout=scout,
                focus=task.case.focus,
            )
            return _result(
                task,
                done.run,
                envelope=done.envelope,
                bundle=done.bundle,
                elapsed_ms=done.elapsed_ms,
                workspace=workspace,
                cached=[cached],
                status=None if done.run is not None else "cold",
            )
        run = run_scout(
            task.case.message,
            workspace=workspace,
            model=model,
            definition=definition,
            focus=task.case.focus,
            timeout_s=task.timeout_s,
        )
        result = _result(
            task,
            run,
            envelope=run.envelope,
            bundle=run.bundle,
            elapsed_ms=run.elapsed_ms,
            workspace=workspace,
            cached=[cached],
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
    reports = [_variant_report(variant, results, repeats) for variant in chosen]
    if end_to_end:
        reports = _with_replies(reports, results)
    return EvalReport(
        cases=cases,
        variants=reports,
        results=results,
        paired=_paired(reports, results, end_to_end=end_to_end),
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


def _with_replies(
    reports: list[VariantReport], results: Sequence[CaseResult]
) -> list[VariantReport]:
    """The reports with the end-to-end metrics and their intervals (against ``cold``)."""
    cold = [result for result in results if result.variant == COLD]
    out = []
    for report in reports:
        mine = [result for result in results if result.variant == report.name]
        metrics, intervals = reply_metrics(mine, cold)
        out.append(
            replace(
                report,
                metrics={**report.metrics, **metrics},
                intervals={**report.intervals, **intervals},
            )
        )
    return out


def _bundle_counts(results: Sequence[CaseResult]) -> dict[str, CaseCounts]:
    """Per ``"case id#repeat"``, the bundle's expected mentions found of expected."""
    return {
        f"{result.id}#{result.repeat}": CaseCounts(s.mentions_found, s.mentions_expected)
        for result in results
        if (s := result.scores).mentions_found is not None and s.mentions_expected is not None
    }


def _paired(
    reports: Sequence[VariantReport], results: Sequence[CaseResult], *, end_to_end: bool
) -> list[PairedComparison]:
    """Every two variants compared on the same cases (:func:`~.stats.compare_pair`): on
    the reply's mentions end to end, else on the bundle's."""
    names = [report.name for report in reports]
    by_variant = {name: [r for r in results if r.variant == name] for name in names}
    if end_to_end:
        measure, counts = "reply_mention_rate", paired_counts(by_variant)
    else:
        measure = "mention_rate"
        counts = {name: _bundle_counts(mine) for name, mine in by_variant.items()}
    pairs = []
    for index, first in enumerate(names):
        for second in names[index + 1 :]:
            compared = compare_pair(first, second, measure, counts)
            if compared is not None:
                pairs.append(compared)
    return pairs


def _variant_report(variant: Variant, results: Sequence[CaseResult], repeats: int) -> VariantReport:
    """One variant's metrics (and their spread over repeats) from its results, with the
    95 % interval of each rate."""
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
        intervals={
            name: wilson(k, n) for name, (k, n) in rate_counts([r.measure() for r in mine]).items()
        },
        design=variant.design,
    )
