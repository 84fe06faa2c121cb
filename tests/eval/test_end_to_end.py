"""Designs as evaluation variants, and ``--end-to-end``: the orchestrator's first reply
scored cold and prepared, with intervals and paired comparisons, from Python, the
command line and the magic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from html import escape
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from supercontext_lab.eval import EvalCase, demo_dataset_path, evaluate, load_dataset
from supercontext_lab.eval.dataset import Expectations
from supercontext_lab.eval.end_to_end import AtTemperature, reply_counts
from supercontext_lab.eval.variants import design_variant
from supercontext_lab.lab.eval_widget import EvalComparison, statistics_html
from supercontext_lab.testing import ScriptedModel

DESIGNS = ("scout", "pack", "cached", "cold")
ROOT = Path(__file__).resolve().parents[2]

# The offline pair on the shipped 40-case dataset, four designs end to end (notebook 09
# with its defaults, and the README's offline table from `python -m benchmarks designs`):
# per design, the reply's expected mentions found of 60, and the lift over cold in
# mentions (cold finds 3 of 60).
OFFLINE_PAIR = {
    "scout": (46, 43),
    "pack": (44, 41),
    "cached": (0, -3),
    "cold": (3, 0),
}


@pytest.fixture
def dataset(tmp_path: Path, small_cases: list[EvalCase]) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n".join(json.dumps(case.to_dict()) for case in small_cases) + "\n", encoding="utf-8"
    )
    return path


def test_designs_as_variants_score_their_bundles(small_cases: list[EvalCase]) -> None:
    report = evaluate(small_cases, [design_variant(d) for d in DESIGNS], progress=False)
    assert report.variant_names == list(DESIGNS)
    assert [variant.design for variant in report.variants] == list(DESIGNS)
    pack, cold = report.metrics("pack"), report.metrics("cold")
    assert pack["model_calls_mean"] == 0 and pack["valid_rate"] == 1.0
    assert cold["valid_rate"] == 0.0 and cold["mention_rate"] == 0.0
    assert report.variant("cached").model.startswith("cached")
    # Every rate has its interval, holding the rate.
    for variant in report.variants:
        for name, (low, high) in variant.intervals.items():
            assert (
                low <= float(variant.metrics[name]) + 1e-9
                and high >= float(variant.metrics[name]) - 1e-9
            )
    # Every two variants are compared.
    assert len(report.paired) == 6
    scout_cold = next(p for p in report.paired if (p.first, p.second) == ("scout", "cold"))
    assert scout_cold.measure == "mention_rate" and scout_cold.difference > 0
    assert "95 % interval" in report.intervals_text()
    assert "McNemar" in report.paired_text()
    data = report.to_dict()
    assert data["variants"][0]["intervals"]["valid_rate"][1] == 1.0
    assert data["paired"][0]["method"].startswith("exact McNemar")


def test_end_to_end_scores_replies_against_cold(small_cases: list[EvalCase]) -> None:
    report = evaluate(
        small_cases,
        [design_variant("pack"), design_variant("cached")],
        progress=False,
        end_to_end=True,
    )
    # A cold variant is added: the reply metrics are paired against it.
    assert report.variant_names == ["pack", "cached", "cold"]
    assert report.end_to_end and report.settings["orchestrator"] == "offline"
    pack, cold = report.metrics("pack"), report.metrics("cold")
    assert pack["reply_cases"] == len(small_cases)
    assert pack["reply_mention_rate"] > cold["reply_mention_rate"]
    assert pack["reply_lift"] == pytest.approx(
        pack["reply_mention_rate"] - cold["reply_mention_rate"]
    )
    low, high = report.variant("pack").intervals["reply_lift"]
    assert low <= pack["reply_lift"] <= high
    assert cold["reply_lift"] == 0.0 and cold["added_prompt_tokens"] == 0.0
    # Paired against itself, cold's lift counts 0 of 0: its value stays 0.0 (with its
    # interval) for programs, and the table a person reads shows "–" with no interval.
    cold_report = report.variant("cold")
    assert cold_report.counts["reply_lift"] == (0, 0)
    assert cold_report.to_dict()["intervals"]["reply_lift"] == [0.0, 0.0]
    assert not cold_report.applies("reply_lift") and report.variant("pack").applies("reply_lift")
    lift_row = next(
        line for line in report.replies_text().splitlines() if line.startswith("reply_lift")
    )
    assert lift_row.rstrip().endswith("\u2013") and lift_row.count("[") == len(report.variants) - 1
    assert pack["added_prompt_tokens"] > 0
    assert pack["time_to_reply_p50_ms"] > 0
    result = report.result("kernel-decision", "pack")
    assert result.turn is not None
    assert result.turn["prepared_by"] == "pack" and result.turn["reply"]
    assert result.turn["reply_scores"]["expected"] == 2
    assert report.result("kernel-decision", "cold").turn["preparation"] == "skipped"
    assert {p.measure for p in report.paired} == {"reply_mention_rate"}
    assert "reply_lift" in report.replies_text()
    html = statistics_html(report)
    assert "End to end" in html and "Paired comparisons" in html
    widget = EvalComparison(report)
    assert "reply_mention_rate" in widget.statistics_html.value
    widget.case_select.value = "kernel-decision"
    assert "Reply (prepared by pack)" in widget.case_html.value


def test_the_lift_over_cases_in_clusters_is_clustered_with_its_mdd(
    small_cases: list[EvalCase],
) -> None:
    # Six cases in three clusters of two (as follow-ups of three conversations would be).
    cases = [
        replace(case, cluster=group)
        for case, group in zip(small_cases, ["x", "x", "y", "y", "z", "z"], strict=True)
    ]
    report = evaluate(cases, [design_variant("pack")], progress=False, end_to_end=True, cache=False)
    pack = report.variant("pack")
    lift = pack.lift
    assert lift is not None and lift.clusters == 3 and lift.se is not None
    assert lift.estimate == pytest.approx(pack.metrics["reply_lift"])
    assert pack.intervals["reply_lift"] == lift.interval()
    text = report.replies_text()
    assert f"  pack  {lift.describe()}" in text
    assert f"in 3 clusters, differences smaller than {lift.mdd():.2f} (pack)" in text
    assert "cannot be told from noise" in text
    paired = report.paired_text()
    assert "in 3 clusters): " in paired and "] clustered; " in paired
    assert report.to_dict()["statistics"]["clusters"] == 3
    assert report.to_dict()["variants"][0]["lift"]["clusters"] == 3
    # On one workspace (the demo), no clustered interval: the bootstrap's, said as such.
    alone = evaluate(
        small_cases, [design_variant("pack")], progress=False, end_to_end=True, cache=False
    )
    text = alone.replies_text()
    assert "in 1 cluster: no clustered interval" in text
    assert "no clustered standard error can be computed" in text
    assert (
        alone.variant("pack").intervals["reply_lift"]
        == (alone.variant("pack").intervals["reply_lift_bootstrap"])
    )


def test_a_variant_named_cold_must_be_the_cold_design(small_cases: list[EvalCase]) -> None:
    with pytest.raises(ValueError, match="cold design"):
        evaluate(
            small_cases[:1],
            [design_variant("pack").renamed("cold")],
            progress=False,
            end_to_end=True,
        )


def test_the_orchestrator_answers_at_temperature_zero() -> None:
    inner = ScriptedModel(["fine"])
    model = AtTemperature(inner)
    model.complete([], temperature=0.7)
    assert inner.calls[0].temperature == 0.0
    assert model.name == inner.name


def test_reply_counts_ignore_case() -> None:
    expect = Expectations(mentions=["2Dt", "34 of the 40 sites"], must_not_mention=["sourdough"])
    counts = reply_counts(expect, "We chose the 2dt kernel. Sourdough aside.")
    assert counts == {"found": 1, "expected": 2, "forbidden": 1, "forbidden_expected": 1}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "supercontext_lab", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )


def test_eval_cli_designs_end_to_end(dataset: Path) -> None:
    out = _cli(
        "eval",
        "--dataset",
        str(dataset),
        "--design",
        "pack",
        "--design",
        "prefetch",
        "--design",
        "cold",
        "--end-to-end",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    names = [variant["name"] for variant in data["variants"]]
    assert names == ["pack", "prefetch", "cold"]
    # The cases' follow-ups were sent in their threads, and the replies scored per turn.
    assert any(case.get("later_turns") for case in data["cases"])
    lifts = {(row["group"], row["variant"]): row["reply_lift"] for row in data["per_turn"]}
    assert lifts[("turn 1", "pack")] > 0 and lifts[("later, same topic", "prefetch")] > 0
    pack = data["variants"][0]
    assert pack["design"] == "pack"
    assert set(pack["intervals"]) >= {"mention_rate", "reply_mention_rate", "reply_lift"}
    assert "reply_lift" in pack["metrics"]
    assert data["paired"][0]["first"] == "pack" and "mcnemar_exact_p" in data["paired"][0]
    assert pack["lift"]["clusters"] == 1 and pack["lift"]["se"] is None
    assert data["few_cases_note"].startswith("Only 6 cases")
    assert data["statistics"]["clusters"] == 1
    assert all("turn" in case for case in data["cases"])
    text = _cli("eval", "--dataset", str(dataset), "--design", "pack", "--end-to-end")
    assert "95 % interval" in text.stdout and "reply_lift" in text.stdout
    assert "reply_lift by turn" in text.stdout
    assert "McNemar exact p" in text.stdout
    assert "could not be told from noise" in text.stdout


def test_eval_cli_runs_each_design_at_each_placement(dataset: Path) -> None:
    out = _cli(
        "eval",
        "--dataset",
        str(dataset),
        *("--design", "pack", "--design", "cold"),
        *("--placement", "prepend", "--placement", "system-tail"),
        "--end-to-end",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [variant["name"] for variant in data["variants"]] == ["pack", "pack-system-tail", "cold"]
    by_name = {variant["name"]: variant for variant in data["variants"]}
    # The same block either way: the placement moves it, it does not change what it holds.
    assert (
        by_name["pack"]["metrics"]["mention_rate"]
        == by_name["pack-system-tail"]["metrics"]["mention_rate"]
    )
    assert by_name["pack-system-tail"]["metrics"]["reply_lift"] > 0


@pytest.mark.parametrize(
    "args",
    [
        ("--design", "fast"),
        ("--design", "pack", "--model", "ollama:a", "--model", "ollama:b"),
        ("--end-to-end", "--model", "ollama:a", "--model", "ollama:b"),
        ("--deadline-ms", "-1"),
        ("--placement", "system-tail"),
        ("--design", "pack", "--placement", "middle"),
    ],
)
def test_eval_cli_refuses_bad_design_options(dataset: Path, args: tuple[str, ...]) -> None:
    out = _cli("eval", "--dataset", str(dataset), *args)
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1


def test_scout_eval_magic_runs_designs_end_to_end(shell: InteractiveShell, dataset: Path) -> None:
    widget = shell.run_line_magic(
        "scout_eval",
        f"{dataset} --design pack --design cold --end-to-end --no-progress --out e2e",
    )
    assert isinstance(widget, EvalComparison)
    report = shell.user_ns["e2e"]
    assert report.variant_names == ["pack", "cold"] and report.end_to_end
    assert "reply_lift" in widget.statistics_html.value
    # The threads with follow-ups, turn by turn, with the warning that their cases are few.
    statistics = widget.statistics_html.value
    assert "Turn by turn" in statistics and "reply_lift by turn" in statistics
    turns = statistics[statistics.index("Turn by turn") :]
    assert escape(report.few_cases_note(min(row.cases for row in report.per_turn()))) in turns
    with pytest.raises(UsageError):
        shell.run_line_magic("scout_eval", f"{dataset} --design fast")
    with pytest.raises(UsageError, match="deadline"):
        shell.run_line_magic("scout_eval", f"{dataset} --deadline-ms -5")
    with pytest.raises(UsageError, match="--placement needs --design"):
        shell.run_line_magic("scout_eval", f"{dataset} --placement system-tail")


def test_scout_thread_magic_takes_a_design(shell: InteractiveShell) -> None:
    shell.run_line_magic("scout_thread", "new --design pack --deadline-ms 900")
    magics = shell.magics_manager.registry["SupercontextMagics"]
    thread = magics.thread
    assert thread.preflight.design == "pack" and thread.preflight.deadline_ms == 900.0
    shell.run_cell_magic("chat", "", "What did we decide about the dispersal kernel?")
    assert thread.turns[0].prepared_by == "pack"
    with pytest.raises(UsageError):
        shell.run_line_magic("scout_thread", "new --design fast")


def _offline_row(report: Any, design: str) -> str:
    """The start of the design's row in the README's offline table, as
    ``benchmarks/designs.py`` writes it (the figures only, not the timings)."""
    variant = report.variant(design)
    m, ci = variant.metrics, variant.intervals
    lift = (
        f"{m['reply_lift']:+.2f} [{ci['reply_lift'][0]:+.2f}, {ci['reply_lift'][1]:+.2f}]"
        if design != "cold"
        else "\u2014"
    )
    return (
        f"| `{design}` | {m['mention_rate']:.0%} [{ci['mention_rate'][0]:.0%}, "
        f"{ci['mention_rate'][1]:.0%}] | {m['reply_mention_rate']:.0%} "
        f"[{ci['reply_mention_rate'][0]:.0%}, {ci['reply_mention_rate'][1]:.0%}] | {lift} |"
    )


def test_the_offline_pair_gives_the_published_figures() -> None:
    """The offline pair is deterministic: the same figures on every run, in a fresh lab
    home, as the README publishes them and notebook 09 prints them. (A run that had
    archived other first turns into the demo workspace before evaluating read them back
    and gave other figures: notebook 09's own threads therefore archive nothing.)"""
    cases = load_dataset(demo_dataset_path())
    assert len(cases) == 40
    report = evaluate(
        cases, [design_variant(d) for d in DESIGNS], end_to_end=True, cache=False, progress=False
    )
    for design, (found, lift) in OFFLINE_PAIR.items():
        metrics = report.metrics(design)
        assert metrics["reply_mention_rate"] == pytest.approx(found / 60), design
        assert metrics["reply_lift"] == pytest.approx(lift / 60), design
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- designs-offline:begin -->")
    table = readme[start : readme.index("<!-- designs-offline:end -->", start)]
    for design in DESIGNS:
        assert _offline_row(report, design) in table, design


def test_the_baselines_and_the_system_tail_placement_end_to_end(
    small_cases: list[EvalCase],
) -> None:
    variants = [
        design_variant("full-context"),
        design_variant("tool-only"),
        design_variant("pack", placement="system-tail"),
        design_variant("cold"),
    ]
    report = evaluate(small_cases, variants, end_to_end=True, progress=False)
    assert report.variant_names == ["full-context", "tool-only", "pack-system-tail", "cold"]
    turns = {(r.variant, r.id): r.turn for r in report.results}
    for case in small_cases:
        tool = turns[("tool-only", case.id)]
        assert tool is not None and tool["orchestrator_tool_calls"][:1] == ["memory_recall"]
        assert turns[("full-context", case.id)]["design"] == "full-context"
    # Each is scored against cold, on the reply.
    assert "reply_lift" in report.metrics("tool-only")
    assert "added_prompt_tokens" in report.metrics("full-context")


def test_reusable_prefix_counts_the_whole_messages_repeated_from_the_start() -> None:
    from supercontext_lab.eval.end_to_end import reusable_prefix_tokens
    from supercontext_lab.models.base import Message

    system, first = Message(role="system", content="s" * 40), Message(role="user", content="u" * 80)
    reply = Message(role="assistant", content="a" * 20)
    tail = Message(role="system", content="block" * 100)
    second = Message(role="user", content="next")
    # Prepended: the whole first turn is the next request's prefix.
    assert reusable_prefix_tokens([system, first, reply], [system, first, reply, second]) == 35
    # A tail block the thread never stored: the prefix ends where it was.
    assert (
        reusable_prefix_tokens([system, first, tail, reply], [system, first, reply, second]) == 30
    )
    assert reusable_prefix_tokens([], [system]) == 0
