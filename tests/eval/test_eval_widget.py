"""The comparison widget, driven without a browser: pick cases, filter, export, escape."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import pytest

from supercontext_lab.eval import EvalCase, EvalReport, Expectations, Variant, baseline, evaluate
from supercontext_lab.lab.eval_widget import EvalComparison, chart_png


@pytest.fixture
def report(small_cases: list[EvalCase], no_memory_variant: Variant) -> EvalReport:
    return evaluate(small_cases, [baseline(), no_memory_variant], progress=False, cache=False)


def test_metrics_tab_table_and_chart(report: EvalReport) -> None:
    widget = EvalComparison(report)
    assert widget.tabs.titles == ("Metrics", "Cases", "Export")
    assert widget.metrics_html.value == report.to_html()
    assert widget.chart.format == "png"
    assert bytes(widget.chart.value).startswith(b"\x89PNG\r\n\x1a\n")
    assert repr(widget) == report.to_text()
    assert "12 runs" in widget.header.value


def test_chart_has_error_bars_with_repeats(small_cases: list[EvalCase]) -> None:
    single = evaluate(small_cases[:2], progress=False, cache=False)
    repeated = evaluate(small_cases[:2], repeats=2, progress=False, cache=False)
    assert chart_png(single).startswith(b"\x89PNG")
    assert chart_png(repeated) != chart_png(single)


def test_cases_side_by_side_with_differences_marked(report: EvalReport) -> None:
    widget = EvalComparison(report)
    assert (widget.left.value, widget.right.value) == ("baseline", "no_memory_recall")
    assert widget.repeat.layout.display == "none"
    widget.case_select.value = "grant-reference"
    html = widget.case_html.value
    assert "GR-7731" in html  # the baseline's envelope
    assert 'data-changed="true"' in html  # the summaries differ
    assert "Differences: baseline → no_memory_recall" in html
    assert "missing mentions: GR-7731" in html  # the variant's misses, as spelt
    assert html.count('class="scl-pre"') == 2  # one envelope per variant
    widget.right.value = "baseline"
    assert "identical field by field" in widget.case_html.value


def test_filtering_to_the_cases_that_differ(report: EvalReport) -> None:
    widget = EvalComparison(report)
    assert len(widget.case_select.options) == 6
    widget.only_differences.value = True
    kept = [value for _, value in widget.case_select.options]
    assert "greeting-hi" not in kept  # a greeting needs no memory: same bundle
    assert "kernel-decision" in kept
    widget.right.value = "baseline"  # nothing differs from itself
    assert widget.case_select.options == ()
    assert "filter hides every case" in widget.case_html.value
    widget.only_differences.value = False
    assert len(widget.case_select.options) == 6


def test_export_buttons(report: EvalReport, tmp_path: Path) -> None:
    widget = EvalComparison(report)
    widget.export_base.value = str(tmp_path / "run1")
    widget.csv_button.click()
    widget.json_button.click()
    assert (tmp_path / "run1_cases.csv").read_text("utf-8").startswith("id,variant,repeat,")
    assert (tmp_path / "run1_metrics.csv").read_text("utf-8").startswith("variant,valid_rate,")
    assert json.loads((tmp_path / "run1.json").read_text("utf-8"))["variants"][0]["name"] == (
        "baseline"
    )
    assert str(tmp_path / "run1.json") in widget.export_status.value
    widget.export_base.value = str(tmp_path / "missing" / "folder" / "run")
    widget.csv_button.click()
    assert "could not write the file" in widget.export_status.value
    assert widget.errors.outputs == ()


def test_export_goes_beside_the_notebook_by_default(
    report: EvalReport, lab_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel's working folder: JupyterLab's is the notebook's, where the file browser
    # shows the files. Not the lab home, which a notebook points at a temporary folder.
    work = tmp_path / "notebooks"
    work.mkdir()
    monkeypatch.chdir(work)
    widget = EvalComparison(report)
    assert widget.export_folder.value == str(work / "exports")
    widget.csv_button.click()
    written = [
        work / "exports" / "scout_eval_cases.csv",
        work / "exports" / "scout_eval_metrics.csv",
    ]
    assert all(path.is_file() for path in written)
    assert not (lab_home / "exports").exists()
    # Every file by its whole path.
    for path in written:
        assert str(path) in widget.export_status.value

    chosen = tmp_path / "my exports" / "march"
    widget.export_folder.value = str(chosen)
    widget.export_base.value = "grant"
    widget.json_button.click()
    assert (chosen / "grant.json").is_file()
    assert str(chosen / "grant.json") in widget.export_status.value
    assert widget.errors.outputs == ()


def test_everything_from_the_workspace_and_the_dataset_is_escaped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory" / "global").mkdir(parents=True)
    (ws / "memory" / "global" / "evil.md").write_text(
        'The <script>alert("memo")</script> otter census uses trap <b>CT-9</b>.\n', "utf-8"
    )
    case = EvalCase(
        id="<img src=x onerror=alert(1)>",
        message="Which trap does the <script>otter</script> census use?",
        focus="<iframe>",
        workspace=ws,
        expect=Expectations(mentions=("<b>",)),
    )
    report = evaluate([case], progress=False, cache=False)
    widget = EvalComparison(report)
    html = widget.case_html.value
    for raw in ("<script>", "<img src=x", "<iframe>", "<b>CT-9"):
        assert raw not in html
    assert "&lt;script&gt;alert(&quot;memo&quot;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script>" not in widget.header.value + widget.metrics_html.value


def test_repeats_show_the_repeat_picker(small_cases: list[EvalCase]) -> None:
    report = evaluate(small_cases[:2], repeats=2, progress=False, cache=False)
    widget = EvalComparison(report)
    assert widget.repeat.layout.display == ""
    assert widget.repeat.max == 1
    widget.repeat.value = 1
    assert "kernel-decision" in widget.case_html.value


def test_controls_are_sized_for_their_labels_and_values(report: EvalReport) -> None:
    # ipywidgets' defaults (300px controls, 80px labels) cut the case labels off; the
    # browser test measures the rendered result, this pins the settings.
    widget = EvalComparison(report)
    assert "scl-eval-comparison" in widget._dom_classes
    assert widget.case_select.layout.width == "100%"
    assert widget.export_base.layout.width == "100%"
    assert widget.only_differences.layout.width == "auto"
    for control in (widget.case_select, widget.left, widget.right, widget.export_base):
        assert control.style.description_width == "70px"


def test_the_widget_shows_not_applicable_and_the_few_cases_note(
    small_cases: list[EvalCase],
) -> None:
    from supercontext_lab.eval.variants import design_variant

    report = evaluate(
        small_cases[:2], [design_variant("pack"), design_variant("cold")], progress=False
    )
    assert report.metrics("cold")["tool_precision"] == 1.0  # SPEC §11: 0 of 0
    assert report.variant("cold").shown("tool_precision") is None
    widget = EvalComparison(report)
    assert report.few_cases_note() in widget.metrics_html.value
    # Every table of the statistics too: the intervals and the paired comparisons.
    assert widget.statistics_html.value.count(escape(report.few_cases_note())) == 2
    assert "<td>\u2013</td>" in widget.metrics_html.value
    assert "\u2013: not applicable" in widget.statistics_html.value
    # The chart leaves a rate that does not apply without a bar, and still draws.
    assert bytes(widget.chart.value).startswith(b"\x89PNG")
