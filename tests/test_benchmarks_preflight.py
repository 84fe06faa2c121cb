"""The pre-flight benchmark and the designs table run end to end at a tiny size."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from benchmarks import designs
from benchmarks.report import DESIGNS_BEGIN, DESIGNS_END, REALMODEL_BEGIN, write_performance_doc
from benchmarks.runner import Options, run_all
from supercontext_lab.eval.stats import PairedComparison


def test_the_preflight_benchmark_judges_its_four_targets(tmp_path: Path) -> None:
    options = Options(
        turn_repeats=2,
        turn_warmup=1,
        preflight_repeats=2,
        preflight_deadline_repeats=1,
        results_dir=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        docs_dir=None,
    )
    run_all(options, ["preflight"], log=lambda _: None)
    data = json.loads((options.results_dir / "latest.json").read_text("utf-8"))
    section = data["sections"]["preflight"]
    assert section["pack_prepared_by"] == {"pack": 2}
    assert section["cached_prepared_by"] == {"cached": 2}
    assert [row["deadline_ms"] for row in section["deadlines"]] == [300.0, 1000.0]
    for row in section["deadlines"]:
        assert row["prepared_by"] == {"pack": 1}
        assert row["left_running"] == 0
        # Whatever the machine, the pre-flight never ends before its deadline.
        assert row["overshoot_ms"]["min"] >= 0
    live = section["prefetch_live_turn"]
    assert live["settled"]["prefetch_prepared_by"] == {"prefetch": 2}
    for run in live.values():
        assert run["left_running"] == 0
        assert set(run["harness_ms"]) == {"prefetch", "cold"}
    targets = [t for t in data["targets"] if t["area"] == "Pre-flight designs"]
    assert len(targets) == 4
    assert targets[3]["peer"].startswith("cold p50")
    assert all(t["status"] in {"PASS", "MISS"} for t in targets)


def test_the_designs_table_is_written_per_route_and_kept_by_a_full_run(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text(f"# Performance\n\n{REALMODEL_BEGIN}\nreal\n<!-- realmodel:end -->\n", "utf-8")
    designs.write_block(doc, "offline", "offline table")
    designs.write_block(doc, "local:smollm2", "smollm2 table v1")
    designs.write_block(doc, "local:smollm2", "smollm2 table v2")
    text = doc.read_text("utf-8")
    assert text.count(DESIGNS_BEGIN) == 1 and text.count(DESIGNS_END) == 1
    assert "offline table" in text and "smollm2 table v2" in text and "v1" not in text
    assert text.index("offline table") < text.index("smollm2 table")
    assert "real" in text
    write_performance_doc(doc, "| new |\n", command="python -m benchmarks all", plot_name="s.png")
    rewritten = doc.read_text("utf-8")
    assert "offline table" in rewritten and "smollm2 table v2" in rewritten
    assert REALMODEL_BEGIN in rewritten and "| new |" in rewritten


def test_the_verdict_says_which_design_pays() -> None:
    from supercontext_lab.eval import demo_dataset_path, evaluate, load_dataset

    cases = [c for c in load_dataset(demo_dataset_path()) if c.expect.mentions][:8]
    report = evaluate(cases, designs.variants(None), end_to_end=True, progress=False)
    pairs = {(p.first, p.second): p for p in report.paired if p.second == "cold"}
    text = designs.verdict(report, pairs)
    assert text.startswith("**Pays here**")
    assert "`pack` +" in text and "Does not: `cached`" in text
    # Under the table, the smallest lift these cases can detect (all in the demo's one
    # workspace: one cluster, so what they would detect if they were independent).
    (line, _) = designs.detectable(report)
    assert line.startswith("Detectable: With 8 cases in 1 cluster no clustered standard")
    assert "(`scout`)" in line and "(`cached`)" in line and "(`cold`)" not in line
    # Eight cases: every table of them carries the warning, the turn by turn one with its
    # own smallest group's count.
    from benchmarks.designs_turns import few_cases, turns_table

    assert few_cases(report, None) == ["", report.few_cases_note()]
    turns = turns_table(report)
    smallest = min(row.cases for row in report.per_turn())
    assert report.few_cases_note(smallest) in turns


def _constructed(lifts: dict[str, tuple[float, float, float]]) -> Any:
    """A report with only what the verdict reads: each design's lift, its interval, tokens."""
    variants = {
        design: SimpleNamespace(
            metrics={"reply_lift": lift, "added_prompt_tokens": 500.0},
            intervals={"reply_lift": (low, high)},
        )
        for design, (lift, low, high) in lifts.items()
    }
    return SimpleNamespace(
        variant=variants.__getitem__, metrics=lambda design: variants[design].metrics
    )


def _pair(design: str, only_first: int, only_second: int, p_value: float) -> PairedComparison:
    return PairedComparison(
        first=design,
        second="cold",
        measure="reply_mention_rate",
        cases=33,
        first_complete=only_first + 1,
        second_complete=only_second + 1,
        only_first=only_first,
        only_second=only_second,
        p_value=p_value,
        difference=0.1,
        low=0.02,
        high=0.2,
    )


def test_the_verdict_says_when_the_per_case_test_does_not_agree() -> None:
    report = _constructed(
        {"scout": (0.10, 0.02, 0.22), "pack": (0.30, 0.15, 0.45), "cached": (-0.02, -0.05, 0.0)}
    )
    pairs = {
        ("scout", "cold"): _pair("scout", 5, 0, 0.0625),
        ("pack", "cold"): _pair("pack", 12, 0, 0.0005),
        ("cached", "cold"): _pair("cached", 0, 0, 1.0),
    }
    text = designs.verdict(report, pairs)
    assert text.startswith("**Pays here**") and "Does not: `cached`" in text
    assert (
        "For `scout` the stricter per-case test is not significant: 5 of 33 cases got every "
        "expected mention only with it, 0 only cold (McNemar p 0.062)"
    ) in text
    assert "For `pack`" not in text  # both tests agree: nothing to qualify
