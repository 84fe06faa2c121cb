"""``%scout_eval`` in a bare InteractiveShell with the extension loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from supercontext_lab.eval import EvalCase, EvalReport, demo_variant_path
from supercontext_lab.lab.eval_widget import EvalComparison


@pytest.fixture
def dataset(tmp_path: Path, small_cases: list[EvalCase]) -> Path:
    path = tmp_path / "cases.jsonl"
    lines = [json.dumps(case.to_dict()) for case in small_cases[:3]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_extension_registers_the_magic(shell: InteractiveShell) -> None:
    assert "scout_eval" in shell.magics_manager.magics["line"]
    assert "EvalMagics" in shell.magics_manager.registry


def test_scout_eval_stores_the_report_and_returns_the_widget(
    shell: InteractiveShell, dataset: Path
) -> None:
    widget = shell.run_line_magic(
        "scout_eval",
        f'"{dataset}" --agent bare={demo_variant_path()} --agent {demo_variant_path()} '
        "--executor local --concurrency 2 --no-progress --out rep",
    )
    assert isinstance(widget, EvalComparison)
    report = shell.user_ns["rep"]
    assert isinstance(report, EvalReport)
    assert report.variant_names == ["baseline", "bare", "no_memory_recall"]
    assert report.settings["executor"] == "local"
    assert widget.report is report
    # Default name, cache off, repeats.
    shell.run_line_magic("scout_eval", f"{dataset} --no-cache --repeats 2 --no-progress")
    again = shell.user_ns["eval_report"]
    assert again.settings["cache"] == "off" and again.settings["repeats"] == 2


def test_replay_after_recording(shell: InteractiveShell, dataset: Path) -> None:
    shell.run_line_magic("scout_eval", f"{dataset} --no-progress")
    shell.run_line_magic("scout_eval", f"{dataset} --replay --no-progress --out replayed")
    assert shell.user_ns["replayed"].cache_misses == 0


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("/no/such.jsonl", "dataset file not found"),
        ("{ds} --agent /no/agent.toml", "agent definition not found"),
        ("{ds} --agent baseline={variant}", "shipped definition's name"),
        ("{ds} --agent v={variant} --agent v={variant}", "used twice"),
        ("{ds} --agent 'a b={variant}'", "variant name"),
        ("{ds} --executor cloud", "invalid choice"),
        ("{ds} --concurrency 0", "--concurrency must be at least 1"),
        ("{ds} --repeats 0", "--repeats must be at least 1"),
        ("{ds} --repeats many", "invalid int value"),
        ("{ds} --out 9lives", "not a Python variable name"),
        ("{ds} --no-cache --replay", "exclude each other"),
        ("{ds} --dask-address tcp://h:1", "needs --executor dask"),
        ("{ds} --workspace /no/such/dir", "workspace folder not found"),
        ("{ds} --replay", "No recorded response"),
        ("{bad}", "line 1"),
        ("'{ds}", "check the quotes"),
        ("", "the following arguments are required"),
    ],
)
def test_mistakes_are_one_line_usage_errors(
    shell: InteractiveShell, dataset: Path, tmp_path: Path, line: str, needle: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    text = line.format(ds=dataset, variant=demo_variant_path(), bad=bad)
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("scout_eval", text)
    assert needle in str(info.value)
    assert "\n" not in str(info.value)
    assert "eval_report" not in shell.user_ns
