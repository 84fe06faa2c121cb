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
import logging
from pathlib import Path
from typing import Any

import nbformat
import pytest

from supercontext_lab.eval import demo_dataset_path
from supercontext_lab.harness import Thread

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
# Notebook → its parameters. 03 (the flag and the gate) depends on no choice: it is about
# the flag, whatever the workspace or the model.
PARAMETERS = {
    "01_quickstart": {"workspace", "model", "first_message", "second_message"},
    "02_anatomy_of_a_bundle": {"workspace"},
    "04_editing_the_scout_live": {"agent_toml", "workspace", "model"},
    "05_recommended_tools_and_skills": {"workspace"},
    "06_a_real_model": {"local_model"},
    "07_comparing_scout_variants": {"dataset", "variant_agent"},
    "08_past_conversations": {"workspace", "chat_export"},
    "09_does_preflight_pay": {"dataset", "model", "limit", "deadline_ms"},
}


def _cells(name: str) -> list[Any]:
    return list(nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4).cells)


def _cell(cells: list[Any], starts: str) -> Any:
    """The one code cell whose source starts with ``starts``."""
    (cell,) = [c for c in cells if c.cell_type == "code" and c.source.startswith(starts)]
    return cell


def _shown(cell: Any) -> str:
    """Everything a cell printed or displayed as text."""
    parts = []
    for output in cell.outputs:
        if "text" in output:
            parts.append(output.text)
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def _conversations(folder: Path) -> list[tuple[str, list[str]]]:
    """Every conversation stored in the workspace at ``folder``, with its turns' text."""
    from supercontext_lab.conversations import list_conversations, open_store

    store = open_store(folder, create=False)
    if store is None:
        return []
    return [
        (info.id, [turn.content for turn in store.turns(info.id)])
        for info in list_conversations(folder)
    ]


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

    def printed(starts: str) -> str:
        return "".join(o.get("text", "") for o in _cell(cells, starts).outputs if "text" in o)

    assert printed("from supercontext_lab.eval import demo_dataset_path").startswith(
        "2 cases, for example:\n- section-32-draft:"
    )
    subset = printed('picked = ["kernel-decision"').splitlines()
    assert [line.split()[0] for line in subset] == list(wanted)
    # The evaluation ran on those two cases under both variants, and %scout_eval on the
    # same file.
    assert printed("import csv").startswith("4 rows; columns:")
    assert "same metrics as evaluate(): True" in printed('print("same metrics as evaluate()')


def test_notebook_09_with_few_cases_shows_progress_and_says_what_the_intervals_mean(
    tmp_path: Path,
) -> None:
    papermill = pytest.importorskip("papermill")
    out = tmp_path / "09_out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOKS / "09_does_preflight_pay.ipynb"),
        str(out),
        parameters={"limit": 2},
        kernel_name="python3",
        cwd=str(tmp_path),
        progress_bar=False,
    )
    cells = nbformat.read(out, as_version=4).cells
    # The end-to-end cell shows a progress bar over the runs (8 variants x 2 cases).
    assert "scout eval" in _shown(_cell(cells, "from supercontext_lab.eval import"))
    assert "/16 " in _shown(_cell(cells, "from supercontext_lab.eval import"))
    # Its 2-case table carries the report's line on what the intervals mean at that size.
    table = _shown(_cell(cells, "pairs = {pair.first"))
    assert table.rstrip().splitlines()[-1].startswith("Only 2 cases: ")
    assert "[9%, 91%]" in table


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_papermill_reads_every_parameters_cell_without_a_warning(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    papermill = pytest.importorskip("papermill")
    with caplog.at_level(logging.WARNING, logger="papermill"):
        found = papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb"))
    assert set(found) == PARAMETERS[name]
    assert [record.getMessage() for record in caplog.records] == []
    # Each has its help: the comment after its default.
    assert all(parameter["help"] for parameter in found.values())


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_notebook_01_runs_on_a_workspace_and_messages_of_ones_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    papermill = pytest.importorskip("papermill")
    from supercontext_lab.testing import build_workspace

    # The kernel's temporary folders go here, to see that its lab home goes away.
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))

    kelp = build_workspace(
        tmp_path / "kelp-ws",
        {
            "PROFILE.md": "# Profile\n\nI teach marine biology and survey kelp forests.\n",
            "memory/global/urchin-barrens.md": (
                "Urchin barrens at Maria Island cover 38% of the reef since the 2024 survey.\n"
            ),
            "memory/global/kelp-survey.md": (
                "The kelp survey runs every March along the six Maria Island transects.\n"
            ),
        },
    )
    # A past conversation of the user's own, which the notebook must leave as it is.
    Thread(kelp, thread_id="earlier").send("Which quadrats did we skip in 2024?")
    stored = _conversations(kelp)
    out = tmp_path / "01_out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOKS / "01_quickstart.ipynb"),
        str(out),
        parameters={
            "workspace": str(kelp),
            "first_message": "Help me plan the March kelp survey at Maria Island",
            "second_message": "Which transects come first",
        },
        kernel_name="python3",
        cwd=str(tmp_path),
        progress_bar=False,
    )
    cells = nbformat.read(out, as_version=4).cells

    # The folder named is read, never archived into: its conversations are as they were.
    assert _conversations(kelp) == stored == [("earlier", ["Which quadrats did we skip in 2024?"])]
    assert (
        "Workspace: kelp-ws, read where it is; this notebook's threads run with archive=False"
        in (_shown(_cell(cells, "import os")))
    )
    first = _shown(_cell(cells, "%config SupercontextMagics.workspace = setup.folder"))
    assert "workspace: kelp-ws" in first
    assert "This thread is saved" not in first
    assert "every March along the six Maria Island transects" in first
    assert "Maya" not in first and "grant" not in first.lower()
    sent = _shown(_cell(cells, "lab = get_ipython()"))
    assert "Urchin barrens" in sent or "kelp survey runs every March" in sent
    assert sent.rstrip().endswith("Help me plan the March kelp survey at Maria Island")
    assert "Which transects come first" in _shown(_cell(cells, "%chat $second_message"))
    cold = _shown(_cell(cells, "%supercontext off"))
    assert "workspace: kelp-ws" in cold and "super_context_disabled" in cold
    assert "Composer(" in _shown(_cell(cells, "%supercontext on"))
    # The notebook's private lab home was removed when its kernel stopped.
    assert not list(temporary.glob("supercontext-nb-*"))


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_notebook_08_on_a_folder_of_ones_own_stores_and_forgets_in_a_copy(
    tmp_path: Path,
) -> None:
    papermill = pytest.importorskip("papermill")
    from supercontext_lab.testing import build_workspace

    kelp = build_workspace(
        tmp_path / "kelp-ws",
        {"memory/global/kelp-survey.md": "The kelp survey runs every March.\n"},
    )
    Thread(kelp, thread_id="earlier").send("Which quadrats did we skip in 2024?")
    stored = _conversations(kelp)
    out = tmp_path / "08_out.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOKS / "08_past_conversations.ipynb"),
        str(out),
        parameters={"workspace": str(kelp)},
        kernel_name="python3",
        cwd=str(tmp_path),
        progress_bar=False,
    )
    cells = nbformat.read(out, as_version=4).cells

    # Thread one's turn, the imported export and the forgetting all happened in the copy.
    assert "Workspace: a copy of kelp-ws in this notebook's lab home" in _shown(
        _cell(cells, "import os")
    )
    assert "(transcript: budget-call)" in _shown(_cell(cells, "two = Thread(ws"))
    assert "3 conversations from chatgpt (3 added)" in _shown(
        _cell(cells, "from pathlib import Path")
    )
    assert _conversations(kelp) == stored == [("earlier", ["Which quadrats did we skip in 2024?"])]
