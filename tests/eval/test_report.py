"""The report: stable text, highlighted HTML, Markdown, CSV and JSON exports."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

from supercontext_lab.eval import EvalCase, EvalReport, Variant, baseline, evaluate
from supercontext_lab.eval.metrics import COUNT_NAMES, METRIC_NAMES, TIMING_METRICS
from supercontext_lab.eval.report_display import format_value
from supercontext_lab.eval.report_export import CASE_COLUMNS
from supercontext_lab.eval.variants import design_variant


@pytest.fixture
def report(small_cases: list[EvalCase], no_memory_variant: Variant) -> EvalReport:
    return evaluate(small_cases[:3], [baseline(), no_memory_variant], progress=False, cache=False)


def test_text_is_stable_and_holds_no_timings(
    report: EvalReport, small_cases: list[EvalCase], no_memory_variant: Variant
) -> None:
    again = evaluate(small_cases[:3], [baseline(), no_memory_variant], progress=False, cache=False)
    assert report.to_text() == again.to_text()
    text = report.to_text()
    assert text.splitlines()[0] == "Scout evaluation: 3 cases x 2 variants"
    assert text.splitlines()[1].split() == ["metric", "baseline", "no_memory_recall"]
    for name in TIMING_METRICS:
        assert name not in text
    for name in (*(set(METRIC_NAMES) - TIMING_METRICS), *COUNT_NAMES):
        assert f"\n{name} " in text
    assert "hits" not in text
    assert repr(report) == text
    assert report._repr_mimebundle_()["text/plain"] == text


def test_html_and_markdown_show_everything_and_mark_the_best(report: EvalReport) -> None:
    html = report.to_html()
    for name in METRIC_NAMES:
        assert f"<th>{name}</th>" in html
    best_mentions = report.best("mention_rate")
    assert best_mentions == {"baseline"}
    row = html.split("<th>mention_rate</th>")[1].split("</tr>")[0]
    assert row.count("scout-eval-best") == 1
    assert row.index("scout-eval-best") < row.index("<td>")  # baseline is the first column
    markdown = report.to_markdown()
    value = format_value(report.metrics("baseline")["mention_rate"])
    assert f"| mention_rate | **{value}** |" in markdown
    bundle = report._repr_mimebundle_(include=["text/html"])
    assert set(bundle) == {"text/html"}
    assert "text/markdown" not in report._repr_mimebundle_(exclude=["text/markdown"])


@pytest.mark.parametrize(
    ("values", "metric", "best"),
    [
        ({"a": 0.5, "b": 0.7}, "mention_rate", {"b"}),
        ({"a": 0.5, "b": 0.7}, "forbidden_mention_rate", {"a"}),
        ({"a": 3.0, "b": 2.0}, "tokens_mean", {"b"}),
        ({"a": 0.5, "b": 0.5}, "mention_rate", set()),
        ({"a": 1.0, "b": 2.0}, "envelope_chars_mean", set()),
        ({"a": 0.5}, "mention_rate", set()),
        ({"a": 0.9, "b": 0.2, "c": 0.9}, "valid_rate", {"a", "c"}),
    ],
)
def test_best(values: dict[str, float], metric: str, best: set[str]) -> None:
    from supercontext_lab.eval import VariantReport

    report = EvalReport(
        cases=[], variants=[VariantReport(n, {metric: v}) for n, v in values.items()], results=[]
    )
    assert report.best(metric) == best


def test_exports(report: EvalReport, tmp_path: Path) -> None:
    data = json.loads(report.to_json(tmp_path / "r.json"))
    assert data == json.loads((tmp_path / "r.json").read_text("utf-8"))
    assert [v["name"] for v in data["variants"]] == ["baseline", "no_memory_recall"]
    assert len(data["cases"]) == 6
    assert data["settings"]["executor"] == "sequential"

    report.to_csv(tmp_path / "cases.csv")
    with (tmp_path / "cases.csv").open(encoding="utf-8", newline="") as handle:
        # Rows only, however few the cases: a note would read as one more row.
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == CASE_COLUMNS
    assert [(r["id"], r["variant"]) for r in rows] == [(r.id, r.variant) for r in report.results]
    bare = next(r for r in rows if r["id"] == "kernel-decision" and r["variant"] != "baseline")
    assert "2Dt" in bare["missed_mentions"]

    metrics_csv = report.to_csv(table="metrics")
    header, *lines = metrics_csv.splitlines()
    assert header.split(",") == ["variant", *METRIC_NAMES, *COUNT_NAMES]
    assert [line.split(",")[0] for line in lines] == ["baseline", "no_memory_recall"]
    with pytest.raises(ValueError, match="'cases' or 'metrics'"):
        report.to_csv(table="runs")


def test_lookups_and_misses(report: EvalReport) -> None:
    assert report.result("kernel-decision", "baseline").id == "kernel-decision"
    with pytest.raises(KeyError, match="no result"):
        report.result("kernel-decision", "baseline", repeat=3)
    with pytest.raises(KeyError, match="baseline, no_memory_recall"):
        report.variant("other")
    misses = dict(report.misses("no_memory_recall"))
    assert "missing mention '2Dt'" in misses["kernel-decision"]


def test_a_rate_of_nothing_keeps_its_spec_value_and_reads_not_applicable(
    small_cases: list[EvalCase],
) -> None:
    """Cold recommends no tool and writes no bullet: its tool precision and grounded rate
    are 0 of 0. As data they keep SPEC §11's 1.0 (JSON metrics and intervals included);
    every table a person reads shows "–" with no interval, never 1.000 [0.000, 1.000]."""
    report = evaluate(
        small_cases, [design_variant("scout"), design_variant("cold")], progress=False
    )
    cold = report.variant("cold")
    for name in ("tool_precision", "skill_precision", "grounded_rate", "bullet_precision"):
        assert cold.metrics[name] == 1.0, name
        assert cold.counts[name][1] == 0 and cold.intervals[name] == (0.0, 1.0), name
        assert not cold.applies(name) and cold.shown(name) is None, name
    assert cold.metrics["tool_recall"] == 0.0  # it was asked for tools, and gave none
    assert cold.shown("tool_recall") == 0.0
    rows = {row[0]: row for row in report.metrics_table(timings=False)}
    assert rows["tool_precision"][2] == "\u2013"
    assert rows["tool_precision"][1] != "\u2013"
    assert "\ntool_precision " in report.to_text()
    interval_rows = {line.split()[0]: line for line in report.intervals_text().splitlines()[2:-1]}
    assert interval_rows["tool_precision"].rstrip().endswith("\u2013")
    assert interval_rows["tool_precision"].count("[") == 1  # the scout's interval only
    assert "\u2013: not applicable" in report.intervals_text()
    assert "1.000 [0.000, 1.000]" not in report.intervals_text()
    assert "<td>\u2013</td>" in report.to_html()
    assert "| \u2013 |" in report.to_markdown()
    # Not the best of anything, though its value, 1.0, is the highest there is.
    assert report.best("tool_precision") == set()
    assert "cold" not in report.best("grounded_rate")
    data = json.loads(report.to_json())
    cold_json = next(v for v in data["variants"] if v["name"] == "cold")
    assert cold_json["metrics"]["tool_precision"] == 1.0
    assert cold_json["intervals"]["tool_precision"] == [0.0, 1.0]
    assert cold_json["counts"]["tool_precision"] == [0, 0]
    metrics_csv = {
        r["variant"]: r for r in csv.DictReader(report.to_csv(table="metrics").splitlines())
    }
    assert metrics_csv["cold"]["tool_precision"] == "\u2013"
    assert metrics_csv["scout"]["tool_precision"] not in ("", "\u2013")
    assert report.metric_rows()[1]["tool_precision"] == 1.0
    cases_csv = list(csv.DictReader(report.to_csv().splitlines()))
    cold_tools = next(
        r for r in cases_csv if r["variant"] == "cold" and r["id"] == "pipeline-rerun"
    )
    assert cold_tools["tool_precision"] == "\u2013" and cold_tools["tool_recall"] == "0.0"
    assert (
        report.case_rows()[report.results.index(report.result("pipeline-rerun", "cold"))][
            "tool_precision"
        ]
        == 1.0
    )


def test_the_spread_leaves_out_the_repeats_where_a_rate_is_nothing(
    small_cases: list[EvalCase],
) -> None:
    report = evaluate(small_cases[:3], [design_variant("cold")], repeats=2, progress=False)
    cold = report.variant("cold")
    assert [m["tool_precision"] for m in cold.per_repeat] == [1.0, 1.0]
    assert "tool_precision" not in cold.spread  # 0 of 0 in both repeats
    assert cold.spread["tool_recall"] == {"stdev": 0.0, "min": 0.0, "max": 0.0}


def test_the_footer_counts_what_each_design_ran(small_cases: list[EvalCase]) -> None:
    report = evaluate(
        small_cases[:2],
        [design_variant(d) for d in ("scout", "pack", "cached", "cold")],
        progress=False,
        cache=False,
    )
    assert report.ran() == (
        "2 ran the scout, 2 ran the pack, 2 read the cached envelope, 2 ran cold (no pre-flight)"
    )
    assert ": 2 ran the scout, 2 ran the pack, " in report.footer()
    assert "8 ran the scout" not in report.footer()


def test_a_table_of_few_cases_says_what_its_intervals_mean(
    small_cases: list[EvalCase],
) -> None:
    report = evaluate(small_cases[:2], progress=False, cache=False)
    note = report.few_cases_note()
    assert note.startswith("Only 2 cases: ") and "[9%, 91%]" in note
    assert report.to_text().splitlines()[-1] == note
    assert f'<p class="scout-eval-note">{note}</p><small>' in report.to_html()
    assert f"\n\n{note}\n\n{report.footer()}" in report.to_markdown()
    # From 20 cases on, the tables carry no note.
    many = [replace(small_cases[i % 6], id=f"case-{i}") for i in range(20)]
    enough = evaluate(many, progress=False, cache=False)
    assert enough.few_cases_note() == ""
    assert "Only " not in enough.to_text() + enough.to_html() + enough.to_markdown()
    assert "Only " not in enough.intervals_text() + enough.latency_text() + enough.to_csv()
    assert enough.to_dict()["few_cases_note"] == ""


def test_under_twenty_cases_every_table_in_every_form_carries_the_note(
    small_cases: list[EvalCase],
) -> None:
    report = evaluate(
        small_cases[:3],
        [design_variant("pack"), design_variant("cold")],
        progress=False,
        cache=False,
        end_to_end=True,
    )
    note = report.few_cases_note()
    assert note.startswith("Only 3 cases: ")
    tables = {
        "text": report.to_text(),
        "intervals": report.intervals_text(),
        "latency": report.latency_text(),
        "paired": report.paired_text(),
    }
    for name, text in tables.items():
        assert text.rstrip("\n").splitlines()[-1] == note, name
    assert "Only " not in report.to_csv(table="cases") + report.to_csv(table="metrics")
    # The lift is over the cases that expect mentions: its table says how few they are.
    lifted = report.variant("pack").lift
    assert lifted is not None
    assert report.replies_text().splitlines()[-1] == report.few_cases_note(lifted.cases)
    assert note in report.to_html() and note in report.to_markdown()
    assert json.loads(report.to_json())["few_cases_note"] == note
