"""One task of an evaluation: one case under one variant, run and scored.

A :class:`CaseTask` is plain, picklable data, so any executor (:mod:`.executors`), Dask's
worker processes included, can run it with :func:`run_case_task`. The task runs the scout
once through the explicit path (:func:`~supercontext_lab.scout.run_scout`, no gate), or
through the pre-flight of its variant's design (SPEC §16), or, end to end, as the first
message of a new thread. It returns a scored :class:`~.results.CaseResult` and, when the
run may be reused, keeps it in the result store (:mod:`.results`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..bundle import ContextBundle
from ..harness.designs import PreflightSettings, preflight_settings
from ..harness.preflight import run_preflight
from ..models.base import ChatModel
from ..models.cache import CachedModel, CacheMode
from ..scout import ScoutRun, run_scout, trace_summary
from ..sources.workspace import Workspace
from .dataset import EvalCase
from .results import CaseResult, result_record, storable
from .scores import score_case
from .session import EvalSession, session_for
from .variants import VariantSpec

__all__ = ["CaseTask", "run_case_task"]


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
        design=task.variant.design,
        deadline_ms=task.deadline_ms,
        placement=task.variant.placement,
    )


def _run_turn(
    task: CaseTask, session: EvalSession, workspace: Workspace, scout: ChatModel
) -> tuple[CaseResult, CachedModel | None]:
    """An end-to-end task: the case as the first message of a new thread, then its
    follow-ups in the same thread."""
    from ..harness import Thread
    from ..harness.prefetch import PrefetchCache
    from ..routes import ModelRoute
    from .end_to_end import AtTemperature, reusable_prefix_tokens, turn_record

    inner = session.orchestrator(ModelRoute.model_validate(task.orchestrator or {}))
    cached = _cached_model(session, task, inner)
    # A cache of the task's own: the cap on running lookups is never reached by the tasks
    # running beside it, so a result does not depend on the executor.
    prefetch = PrefetchCache()
    thread = Thread(
        workspace,
        definition=task.variant.definition(),
        scout_model=scout,
        orchestrator_model=AtTemperature(cached or inner, 0.0),
        super_context_enabled=True,
        scout_timeout_s=task.timeout_s,
        design=task.variant.design,
        deadline_ms=task.deadline_ms,
        placement=task.variant.placement,
        record_recalls=False,
        # Evaluations never archive: a case's turn would be a past conversation to the
        # cases after it (SPEC §15).
        archive=False,
        prefetch_cache=prefetch,
    )
    turn = thread.send(task.case.message)
    later = []
    for index, follow_up in enumerate(task.case.follow_ups, start=2):
        # The user's typing gives a background lookup (prefetch) its time; the live turn
        # itself never waits for one.
        thread.wait_for_prefetch(task.timeout_s)
        before = thread.turns[-1].orchestrator_messages
        sent = thread.send(follow_up.message)
        record = turn_record(sent, follow_up.expect)
        record["reusable_prefix_tokens"] = reusable_prefix_tokens(
            before, sent.orchestrator_messages
        )
        later.append({"index": index, "topic_change": follow_up.topic_change, **record})
    # The lookup the last turn started has no turn to serve: none is left running.
    prefetch.close(task.timeout_s)
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
    return replace(result, later_turns=later), cached


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
