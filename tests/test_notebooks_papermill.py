"""The notebooks run under papermill with their parameters changed.

Every notebook that depends on a choice (a workspace, a model, a dataset, an agent file)
holds it in one cell tagged ``parameters``; papermill injects the values given with
``-p NAME VALUE`` after that cell, and the rest of the notebook uses them. These tests
check that the cells are there, that each parameter is used after its cell, and run one
notebook through papermill with a changed parameter to see it take effect.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from supercontext_lab.eval import demo_dataset_path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
# Notebook → its parameters. 03 (the flag and the gate) depends on no choice: it is about
# the flag, whatever the workspace or the model.
PARAMETERS = {
    "01_quickstart": {"workspace", "model"},
    "02_anatomy_of_a_bundle": {"workspace"},
    "04_editing_the_scout_live": {"agent_toml", "workspace", "model"},
    "05_recommended_tools_and_skills": {"workspace"},
    "06_a_real_model": {"local_model"},
    "07_comparing_scout_variants": {"dataset", "variant_agent"},
    "09_does_preflight_pay": {"dataset", "model", "limit", "deadline_ms"},
}


def _cells(name: str) -> list[Any]:
    return list(nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4).cells)


def _assigned(source: str) -> set[str]:
    """Names a cell assigns at its top level."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


@pytest.mark.parametrize(("name", "expected"), sorted(PARAMETERS.items()))
def test_one_parameters_cell_whose_values_the_notebook_uses(name: str, expected: set[str]) -> None:
    cells = _cells(name)
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{name}: one cell tagged parameters"
    cell = tagged[0]
    assert cell.cell_type == "code"
    assert _assigned(cell.source) >= expected
    # Every parameter is read by a later cell (Python or a magic's $name / = name).
    later = "\n".join(c.source for c in cells[cells.index(cell) + 1 :] if c.cell_type == "code")
    for parameter in expected:
        assert parameter in later.replace("$", " "), f"{name}: {parameter} is never used"
    # Each default is a plain literal, so papermill can say what it replaces.
    for node in ast.parse(cell.source).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if {t.id for t in targets if isinstance(t, ast.Name)} & expected:
            assert isinstance(node.value, ast.Constant), f"{name}: {ast.unparse(node)}"


def test_no_other_notebook_lacks_its_parameters() -> None:
    tagged = {
        path.stem
        for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")
        if any(
            "parameters" in cell.get("metadata", {}).get("tags", [])
            for cell in nbformat.read(path, as_version=4).cells
        )
    }
    assert tagged == set(PARAMETERS)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_notebook_07_evaluates_the_dataset_given_as_a_parameter(tmp_path: Path) -> None:
    papermill = pytest.importorskip("papermill")
    # Two cases of the shipped dataset, neither among the eight the notebook picks.
    wanted = ("section-32-draft", "hpc-runtime")
    lines = [
        line
        for line in Path(demo_dataset_path()).read_text("utf-8").splitlines(keepends=True)
        if line.strip() and json.loads(line)["id"] in wanted
    ]
    assert len(lines) == 2
    dataset = tmp_path / "two_cases.jsonl"
    dataset.write_text("".join(lines), "utf-8")
    out = tmp_path / "07_out.ipynb"

    papermill.execute_notebook(
        str(NOTEBOOKS / "07_comparing_scout_variants.ipynb"),
        str(out),
        parameters={"dataset": str(dataset)},
        kernel_name="python3",
        cwd=str(tmp_path),
        progress_bar=False,
    )

    cells = nbformat.read(out, as_version=4).cells
    injected = [c for c in cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    assert str(dataset) in injected[0].source

    def printed(cell_id: str) -> str:
        cell = next(c for c in cells if c.get("id") == cell_id)
        return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")

    assert printed("07-004").startswith("2 cases, for example:\n- section-32-draft:")
    assert [line.split()[0] for line in printed("07-006").splitlines()] == list(wanted)
    # The evaluation ran on those two cases under both variants, and %scout_eval on the
    # same file.
    assert printed("07-023").startswith("4 rows; columns:")
    assert "same metrics as evaluate(): True" in printed("07-019")
