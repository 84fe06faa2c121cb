"""Run every case under every variant and score the bundles.

:func:`evaluate` turns (dataset × variants × repeats) into :class:`CaseTask` records —
plain, picklable data — and hands them to an executor (:mod:`.executors`). Each task runs
the scout once through the explicit path (:func:`~supercontext_lab.scout.run_scout`, no
gate) on the case's workspace and returns a :class:`CaseResult`. Results come back in task
order whatever the executor, so reports do not depend on scheduling.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..config import ModelRoute
from ..errors import WorkspaceError
from ..models.base import ChatModel
from ..models.cache import CachedModel, CacheMode, ResponseCache, default_cache_path
from ..scout import DEFAULT_SCOUT_TIMEOUT_S, run_scout, trace_summary
from ..sources.workspace import Workspace, demo_workspace_path
from .dataset import EvalCase, load_dataset
from .executors import EXECUTORS, ExecutorName, run_tasks
from .metrics import CaseScores, RunMeasure, aggregate, score_case, spread
from .report import EvalReport, VariantReport
from .variants import Variant, VariantSpec, baseline

__all__ = ["CaseResult", "CaseTask", "evaluate", "run_case_task"]

CacheSetting = bool | Literal["readwrite", "replay", "off"]


@dataclass(frozen=True)
class CaseTask:
    """One scout run to do: a case, a variant, a repeat, where and how to cache."""

    index: int
    case: EvalCase
    variant: VariantSpec
    repeat: int
    workspace: str
    demo: bool
    cache_path: str | None
    cache_mode: CacheMode
    timeout_s: float


@dataclass(frozen=True)
class CaseResult:
    """One scored scout run (plain data: it crosses process boundaries)."""

    id: str
    variant: str
    repeat: int
    status: str
    envelope: str | None
    bundle: dict[str, Any] | None
    problems: list[str]
    trace_summary: dict[str, Any]
    elapsed_ms: float
    tokens: int
    model_calls: int
    model_name: str
    definition_hash: str
    scores: CaseScores
    cache_hits: int = 0
    cache_misses: int = 0
    workspace: str = ""

    @property
    def ok(self) -> bool:
        """True when the run produced a valid envelope."""
        return self.scores.valid

    def measure(self) -> RunMeasure:
        return RunMeasure(
            scores=self.scores,
            elapsed_ms=self.elapsed_ms,
            tokens=self.tokens,
            model_calls=self.model_calls,
            envelope_chars=len(self.envelope) if self.envelope is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the CLI's ``cases`` entries are a subset of it)."""
        return {
            "id": self.id,
            "variant": self.variant,
            "repeat": self.repeat,
            "status": self.status,
            "envelope": self.envelope,
            "bundle": self.bundle,
            "problems": list(self.problems),
            "scores": self.scores.to_dict(),
            "trace_summary": dict(self.trace_summary),
            "elapsed_ms": round(self.elapsed_ms, 3),
            "tokens": self.tokens,
            "model_calls": self.model_calls,
            "model": self.model_name,
            "definition_hash": self.definition_hash,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
        }


def _workspace_for(task: CaseTask) -> Workspace:
    # A worker on another machine does not have the client's copy of the demo workspace;
    # it makes its own (the content is the same shipped folder).
    if task.demo and not Path(task.workspace).is_dir():
        return Workspace(demo_workspace_path())
    return Workspace(task.workspace)


def _model_for(spec: VariantSpec) -> tuple[ChatModel, bool]:
    """The variant's model and whether this task owns it (and must close it)."""
    if spec.model_factory is not None:
        return spec.model_factory(), False
    from ..models.routing import model_for_route

    route = ModelRoute.model_validate(spec.route or {})
    return model_for_route(route, role="scout"), True


def run_case_task(task: CaseTask) -> CaseResult:
    """Run and score one task. Module-level and fed plain data so Dask can ship it."""
    definition = task.variant.definition()
    workspace = _workspace_for(task)
    model, owned = _model_for(task.variant)
    cache: ResponseCache | None = None
    cached: CachedModel | None = None
    try:
        runner: ChatModel = model
        if task.cache_mode != "off":
            cache = ResponseCache(task.cache_path)
            cached = CachedModel(model, cache=cache, mode=task.cache_mode, sample=task.repeat)
            runner = cached
        run = run_scout(
            task.case.message,
            workspace=workspace,
            model=runner,
            definition=definition,
            focus=task.case.focus,
            timeout_s=task.timeout_s,
        )
    finally:
        if cache is not None:
            cache.close()
        close = getattr(model, "close", None)
        if owned and callable(close):
            close()
    bundle = run.bundle.to_dict() if run.bundle is not None else None
    return CaseResult(
        id=task.case.id,
        variant=task.variant.name,
        repeat=task.repeat,
        status=run.status,
        envelope=run.envelope,
        bundle=bundle,
        problems=list(run.problems),
        trace_summary=trace_summary(run.trace),
        elapsed_ms=run.elapsed_ms,
        tokens=run.usage.total_tokens,
        model_calls=run.model_calls,
        model_name=run.model_name,
        definition_hash=run.definition_hash,
        scores=score_case(task.case.expect, run.envelope, bundle),
        cache_hits=cached.hits if cached is not None else 0,
        cache_misses=cached.misses if cached is not None else 0,
        workspace=str(workspace.root),
    )


def _cache_mode(cache: CacheSetting) -> CacheMode:
    if cache is True:
        return "readwrite"
    if cache is False:
        return "off"
    if cache in ("readwrite", "replay", "off"):
        return cache
    raise ValueError(f"cache must be True, False, 'readwrite', 'replay' or 'off', not {cache!r}")


def _warm_workspaces(paths: Sequence[str]) -> None:
    # Build each memory index once, here, before workers open the same folder side by side.
    for path in dict.fromkeys(paths):
        Workspace(path).memory  # noqa: B018


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
    ``True`` (read and write the response cache), ``False``, or ``"replay"`` (recorded
    responses only; a missing one raises :class:`~supercontext_lab.errors.CacheError`).
    ``workspace`` is used for cases that name none (default: the demo workspace).
    Results are in a deterministic order whatever the executor.
    """
    cases = load_dataset(dataset) if isinstance(dataset, (str, os.PathLike)) else list(dataset)
    if not cases:
        raise ValueError("the dataset holds no cases")
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, not {executor!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a whole number >= 1, not {concurrency!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number >= 1, not {repeats!r}")
    mode = _cache_mode(cache)
    chosen = _variant_list(variants)
    if workspace is not None:
        root = Path(workspace).expanduser()
        if not root.is_dir():
            raise WorkspaceError(f"workspace folder '{root}' does not exist; pass a folder.")
        default_ws, default_is_demo = str(root.resolve()), False
    elif any(case.workspace is None for case in cases):
        default_ws, default_is_demo = str(demo_workspace_path()), True
    else:
        default_ws, default_is_demo = "", False
    store = str(Path(cache_path) if cache_path is not None else default_cache_path())
    specs = [variant.spec() for variant in chosen]
    tasks: list[CaseTask] = []
    for spec in specs:
        for repeat in range(repeats):
            for case in cases:
                own = case.workspace is not None
                tasks.append(
                    CaseTask(
                        index=len(tasks),
                        case=case,
                        variant=spec,
                        repeat=repeat,
                        workspace=str(case.workspace) if own else default_ws,
                        demo=not own and default_is_demo,
                        cache_path=store if mode != "off" else None,
                        cache_mode=mode,
                        timeout_s=timeout_s,
                    )
                )
    _warm_workspaces([task.workspace for task in tasks])
    started = time.perf_counter()
    results: list[CaseResult] = run_tasks(
        run_case_task,
        tasks,
        executor=executor,
        concurrency=concurrency,
        progress=progress,
        dask_address=dask_address,
    )
    wall_s = time.perf_counter() - started
    reports = []
    for variant in chosen:
        mine = [result for result in results if result.variant == variant.name]
        per_repeat = [
            aggregate([r.measure() for r in mine if r.repeat == repeat])
            for repeat in range(repeats)
        ]
        reports.append(
            VariantReport(
                name=variant.name,
                metrics=aggregate([r.measure() for r in mine]),
                spread=spread(per_repeat) if repeats > 1 else {},
                per_repeat=per_repeat if repeats > 1 else [],
                cache_hits=sum(r.cache_hits for r in mine),
                cache_misses=sum(r.cache_misses for r in mine),
                definition_hash=variant.definition.definition_hash(),
                source=variant.definition.source,
                model=variant.model_label(),
            )
        )
    return EvalReport(
        cases=cases,
        variants=reports,
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
