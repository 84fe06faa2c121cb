"""One task of an evaluation: what its result carries, and that a task is plain data that
runs in a session of its own (as on a Dask worker)."""

from __future__ import annotations

import json
import pickle

from supercontext_lab.agents import default_agent_definition
from supercontext_lab.eval import BASELINE, EvalCase, baseline, evaluate
from supercontext_lab.eval.case_task import CaseTask, run_case_task
from supercontext_lab.scout import DEFAULT_SCOUT_TIMEOUT_S
from supercontext_lab.sources.demo import demo_workspace_path


def test_a_result_carries_everything_about_the_run(small_cases: list[EvalCase]) -> None:
    report = evaluate(small_cases[:1], progress=False, cache=False)
    (result,) = report.results
    assert (result.id, result.variant, result.repeat) == ("kernel-decision", BASELINE, 0)
    assert result.ok and result.status == "completed"
    assert result.bundle is not None and result.bundle["proposed_goal"] is None
    assert result.envelope is not None and result.envelope.startswith("[context_bundle]")
    assert result.model_calls == result.trace_summary["model_calls"] >= 2
    assert result.tokens == result.trace_summary["tokens"] > 0
    assert result.elapsed_ms > 0
    assert result.model_name == "offline:scout"
    assert result.definition_hash == default_agent_definition().definition_hash()
    assert result.scores.mentions_expected == 2
    data = result.to_dict()
    assert {"id", "variant", "envelope", "problems", "scores", "trace_summary"} <= set(data)
    json.dumps(data)


def test_a_task_is_plain_data_and_runs_in_a_session_of_its_own(
    small_cases: list[EvalCase],
) -> None:
    case = small_cases[0]
    task = CaseTask(
        index=0,
        case=case,
        variant=baseline().spec(),
        repeat=0,
        workspace=str(demo_workspace_path()),
        demo=True,
        cache_path=None,
        cache_mode="off",
        timeout_s=DEFAULT_SCOUT_TIMEOUT_S,
    )
    shipped = pickle.loads(pickle.dumps(task))
    assert shipped == task
    result = run_case_task(shipped)
    assert (result.id, result.variant, result.repeat) == (case.id, BASELINE, 0)
    assert result.status == "completed" and not result.from_cache
    (evaluated,) = evaluate([case], progress=False, cache=False).results
    assert result.envelope == evaluated.envelope
    assert result.scores == evaluated.scores
