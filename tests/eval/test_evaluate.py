"""evaluate(): variants, executors, repeats, the cache, and the shipped dataset's figures."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab import AgentDefinitionError, CacheError, WorkspaceError
from supercontext_lab.agents import default_agent_definition
from supercontext_lab.eval import (
    BASELINE,
    METRIC_NAMES,
    EvalCase,
    Expectations,
    Variant,
    baseline,
    demo_dataset_path,
    evaluate,
)
from supercontext_lab.eval import session as eval_session
from supercontext_lab.eval.metrics import TIMING_METRICS
from supercontext_lab.models.cache import default_cache_path
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.routes import ModelRoute
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import OpenAITestServer, ScriptedModel

from .conftest import stored_whole, write_variant


def _stable(metrics: dict[str, float | int]) -> dict[str, float | int]:
    return {name: value for name, value in metrics.items() if name not in TIMING_METRICS}


def test_memory_recall_makes_the_difference_and_a_rerun_is_cached(
    no_memory_variant: Variant,
) -> None:
    variants = [baseline(), no_memory_variant]
    started = time.perf_counter()
    first = evaluate(demo_dataset_path(), variants, progress=False)
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    second = evaluate(demo_dataset_path(), variants, progress=False)
    second_s = time.perf_counter() - started

    base, bare = first.metrics(BASELINE), first.metrics("no_memory_recall")
    # The facts the dataset asks for mostly live in memory documents.
    assert base["mention_rate"] - bare["mention_rate"] >= 0.3
    assert base["valid_rate"] == bare["valid_rate"] == 1.0
    assert base["runs"] == bare["runs"] == 40
    for result in first.results:
        if result.variant == "no_memory_recall":
            assert "memory_recall" not in result.trace_summary["tools_used"]
    assert "memory_recall" in first.result("kernel-decision", BASELINE).trace_summary["tools_used"]
    # Memory-only facts: found with memory_recall, lost without it.
    for case_id, fact in [("kernel-decision", "2Dt"), ("grant-reference", "GR-7731")]:
        assert fact in (first.result(case_id, BASELINE).envelope or "")
        assert fact not in (first.result(case_id, "no_memory_recall").envelope or "")
        assert fact in first.result(case_id, "no_memory_recall").scores.missed_mentions

    # The first run filled the cache; the second was served from it entirely: results were
    # reused whole (each model call of theirs counts as a hit), except the runs that
    # searched the web, which ran again on recorded replies.
    assert first.cache_misses == sum(r.model_calls for r in first.results)
    assert first.reused_runs == 0
    assert [r.from_cache for r in second.results] == [stored_whole(r) for r in first.results]
    assert 0 < len(second.results) - second.reused_runs < 10
    assert second.cache_misses == 0
    assert second.cache_hits == sum(r.model_calls for r in second.results) == first.cache_misses
    assert [r.envelope for r in second.results] == [r.envelope for r in first.results]
    for name in second.variant_names:
        assert _stable(second.metrics(name)) == _stable(first.metrics(name))
    print(
        f"\nmention_rate baseline {base['mention_rate']:.3f} vs no_memory_recall "
        f"{bare['mention_rate']:.3f}; first run {first_s:.2f} s ({first.cache_misses} misses), "
        f"second run {second_s:.2f} s ({second.cache_hits} hits)"
    )


def test_the_local_executor_matches_the_sequential_one(
    small_cases: list[EvalCase], no_memory_variant: Variant
) -> None:
    variants = [baseline(), no_memory_variant]
    sequential = evaluate(small_cases, variants, progress=False, cache=False)
    local = evaluate(
        small_cases, variants, executor="local", concurrency=4, progress=False, cache=False
    )
    key = [(r.id, r.variant, r.repeat, r.envelope) for r in sequential.results]
    assert [(r.id, r.variant, r.repeat, r.envelope) for r in local.results] == key
    for name in sequential.variant_names:
        assert _stable(local.metrics(name)) == _stable(sequential.metrics(name))
    assert local.settings["executor"] == "local"


def test_repeats_give_a_spread_and_separate_cache_entries(small_cases: list[EvalCase]) -> None:
    report = evaluate(small_cases[:3], repeats=2, progress=False)
    variant = report.variant(BASELINE)
    assert [(r.id, r.repeat) for r in report.results] == [
        (case.id, repeat) for repeat in (0, 1) for case in small_cases[:3]
    ]
    assert len(variant.per_repeat) == 2
    assert set(variant.spread) == set(METRIC_NAMES)
    # The offline model is deterministic, so the repeats agree exactly.
    assert variant.spread["mention_rate"] == {
        "stdev": 0.0,
        "min": variant.metrics["mention_rate"],
        "max": variant.metrics["mention_rate"],
    }
    # Repeat 1 is a new sample: it is not served repeat 0's replies.
    assert report.cache_hits == 0
    assert report.cache_misses == sum(r.model_calls for r in report.results)
    assert "±0.000" in report.to_text()


def test_replay_needs_recorded_responses(small_cases: list[EvalCase]) -> None:
    with pytest.raises(CacheError, match="No recorded response"):
        evaluate(small_cases[:1], cache="replay", progress=False)
    evaluate(small_cases[:2], progress=False)
    replayed = evaluate(small_cases[:2], cache="replay", progress=False)
    assert replayed.cache_misses == 0
    assert replayed.settings["cache"] == "replay"


def test_no_cache_touches_no_file(small_cases: list[EvalCase]) -> None:
    report = evaluate(small_cases[:1], cache=False, progress=False)
    assert (report.cache_hits, report.cache_misses) == (0, 0)
    assert not default_cache_path().exists()
    assert report.settings["cache_path"] is None


def test_cache_path_and_progress_bar(
    small_cases: list[EvalCase], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "c.sqlite3"
    report = evaluate(small_cases[:2], cache_path=store, progress=True)
    assert store.is_file()
    assert report.settings["cache_path"] == str(store)
    assert "2/2" in capsys.readouterr().err


def _garbage_model() -> ScriptedModel:
    return ScriptedModel(["I would rather chat than write an envelope."])


def test_a_model_factory_variant(small_cases: list[EvalCase]) -> None:
    chatty = Variant("chatty", default_agent_definition(), model_factory=_garbage_model)
    report = evaluate(small_cases[:2], [baseline(), chatty], progress=False, cache=False)
    assert report.metrics("chatty")["valid_rate"] == 0.0
    assert report.metrics("chatty")["mention_rate"] == 0.0
    assert report.metrics(BASELINE)["valid_rate"] == 1.0
    result = report.result("kernel-decision", "chatty")
    assert any("no valid envelope" in problem for problem in result.problems)
    assert report.variant("chatty").model == "_garbage_model"


def test_an_explicit_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory" / "global").mkdir(parents=True)
    (ws / "memory" / "global" / "otter.md").write_text(
        "The otter survey uses camera trap CT-42 at the river mouth.\n", encoding="utf-8"
    )
    data = tmp_path / "cases.jsonl"
    data.write_text(
        json.dumps(
            {
                "id": "otter",
                "message": "Which camera trap does the otter survey use?",
                "workspace": "ws",
                "expect": {"mentions": ["CT-42"], "has_goal": False},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    report = evaluate(data, progress=False, cache=False)
    assert report.metrics(BASELINE)["mention_rate"] == 1.0
    assert report.results[0].workspace == str(ws.resolve())
    # The same case without a workspace of its own uses evaluate(workspace=...).
    case = EvalCase(
        "otter",
        "Which camera trap does the otter survey use?",
        expect=Expectations(mentions=("CT-42",)),
    )
    assert (
        evaluate([case], workspace=ws, progress=False, cache=False).metrics(BASELINE)[
            "mention_rate"
        ]
        == 1.0
    )
    assert evaluate([case], progress=False, cache=False).metrics(BASELINE)["mention_rate"] == 0.0


def test_variants_from_paths_and_their_spec(tmp_path: Path) -> None:
    path = write_variant(tmp_path / "v", "web_fetch")
    variant = Variant.from_path("no-web-fetch", path)
    spec = variant.spec()
    assert spec.definition().definition_hash() == variant.definition.definition_hash()
    assert spec.route == ModelRoute().model_dump()
    assert variant.model_label() == "offline"
    assert baseline().definition.source == "<shipped>"
    with pytest.raises(AgentDefinitionError):
        Variant.from_path("x", tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("make", "error", "needle"),
    [
        (lambda: Variant("", default_agent_definition()), ValueError, "variant name"),
        (lambda: Variant("a b", default_agent_definition()), ValueError, "variant name"),
        (lambda: Variant("ok", "agent.toml"), TypeError, "AgentDefinition"),  # type: ignore[arg-type]
        (
            lambda: Variant("ok", default_agent_definition(), route={"kind": "offline"}),  # type: ignore[arg-type]
            TypeError,
            "ModelRoute",
        ),
    ],
)
def test_bad_variants(make: object, error: type[Exception], needle: str) -> None:
    with pytest.raises(error, match=needle):
        make()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"variants": []}, ValueError, "at least one variant"),
        ({"variants": [baseline(), baseline()]}, ValueError, "two variants are named"),
        ({"variants": ["agent.toml"]}, TypeError, "Variant objects"),
        ({"executor": "cloud"}, ValueError, "executor must be one of"),
        ({"concurrency": 0}, ValueError, "concurrency"),
        ({"repeats": 0}, ValueError, "repeats"),
        ({"repeats": True}, ValueError, "repeats"),
        ({"cache": "sometimes"}, ValueError, "cache must be"),
        ({"workspace": "/no/such/folder"}, WorkspaceError, "does not exist"),
    ],
)
def test_bad_arguments(
    small_cases: list[EvalCase], kwargs: dict[str, object], error: type[Exception], needle: str
) -> None:
    with pytest.raises(error, match=needle):
        evaluate(small_cases[:1], progress=False, **kwargs)  # type: ignore[arg-type]


def test_an_empty_dataset_is_rejected() -> None:
    with pytest.raises(ValueError, match="no cases"):
        evaluate([], progress=False)


def test_a_model_route_on_the_variant_is_used(small_cases: list[EvalCase]) -> None:
    variant = Variant("offline-route", default_agent_definition(), route=ModelRoute(kind="offline"))
    report = evaluate(small_cases[:1], [variant], progress=False, cache=False)
    assert report.results[0].model_name == OfflineScoutModel().name


@pytest.mark.parametrize(("executor", "threads"), [("sequential", 1), ("local", 3)])
def test_one_model_per_thread_and_one_workspace_per_folder(
    small_cases: list[EvalCase], monkeypatch: pytest.MonkeyPatch, executor: str, threads: int
) -> None:
    models: list[tuple[str, OpenAICompatibleModel]] = []
    opened: list[Path] = []
    build = OpenAICompatibleModel.from_route

    def recording_build(route: Any, **options: Any) -> OpenAICompatibleModel:
        model = build(route, **options)
        models.append((threading.current_thread().name, model))
        return model

    class RecordingWorkspace(Workspace):
        def __init__(self, root: Any) -> None:
            super().__init__(root)
            opened.append(self.root)

    monkeypatch.setattr(OpenAICompatibleModel, "from_route", recording_build)
    monkeypatch.setattr(eval_session, "Workspace", RecordingWorkspace)
    with OpenAITestServer(model=OfflineScoutModel()) as server:
        route = ModelRoute(kind="openai", base_url=server.base_url, model="m", timeout_s=10.0)
        report = evaluate(
            small_cases,
            [Variant("served", default_agent_definition(), route=route)],
            executor=executor,  # type: ignore[arg-type]
            concurrency=threads,
            progress=False,
            cache=False,
        )
    assert report.metrics("served")["valid_rate"] == 1.0
    assert len(opened) == 1
    assert 1 <= len(models) <= threads
    assert len({thread for thread, _ in models}) == len(models)
    # The session closed every client it made.
    assert all(model._client.is_closed for _, model in models)
