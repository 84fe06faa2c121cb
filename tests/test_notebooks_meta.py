"""Checks on the teaching notebooks and on the Binder setup.

nbval (part of ``python -m pytest``) runs every notebook in a fresh kernel and compares
the cells tagged ``nbval-check-output`` (cell metadata, so no marker shows in the code a
reader sees). These tests
check what nbval does not: that each committed notebook holds the outputs of one complete
run, in order, without errors, machine paths, memory addresses or widget state; that it
keeps to the notebooks' conventions; and that ``binder/`` can build and start the lab.

Run this file as a script to refresh the committed notebooks (see notebooks/README.md)::

    python tests/test_notebooks_meta.py                 # every notebook
    python tests/test_notebooks_meta.py notebooks/02_anatomy_of_a_bundle.ipynb
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
BINDER = ROOT / "binder"
EXPECTED = (
    "01_quickstart",
    "02_anatomy_of_a_bundle",
    "03_the_flag_and_the_gate",
    "04_editing_the_scout_live",
    "05_recommended_tools_and_skills",
    "06_a_real_model",
    "07_comparing_scout_variants",
    "08_past_conversations",
    "09_does_preflight_pay",
)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CHECK_MARK = "NBVAL_CHECK_OUTPUT"
CHECK_TAG = "nbval-check-output"
TEXT_MIMES = ("text/plain", "text/markdown", "text/html", "text/latex", "application/json")
# A temporary folder that removes itself when the kernel stops (or the cell runs again).
PRIVATE_HOME = (
    'lab_home_folder = tempfile.TemporaryDirectory(prefix="supercontext-nb-")\n'
    'os.environ["SUPERCONTEXT_LAB_HOME"] = lab_home_folder.name\n'
)
# Variables a notebook kernel must not inherit when refreshing: they could change the flag,
# the lab home or reach a network.
_CLEAN_PREFIXES = ("OPENAI_", "OPENHUMAN_", "SUPERCONTEXT_")
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


# --------------------------------------------------------------------------- helpers


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _read(path: Path) -> Any:
    return nbformat.read(path, as_version=4)


def _code_cells(nb: Any) -> list[Any]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def is_check_cell(cell: Any) -> bool:
    """True for a cell whose output nbval compares: tagged ``nbval-check-output``."""
    return CHECK_TAG in cell.get("metadata", {}).get("tags", [])


def _is_parameters(cell: Any) -> bool:
    return "parameters" in cell.get("metadata", {}).get("tags", [])


def _output_texts(output: Any) -> list[str]:
    """Every piece of text an output shows (images and widget views left out)."""
    if output.output_type == "stream":
        return [output.text]
    if output.output_type == "error":
        return [output.ename, output.evalue, *output.traceback]
    data = output.get("data", {})
    texts = []
    for mime in TEXT_MIMES:
        value = data.get(mime)
        if value is not None:
            texts.append(value if isinstance(value, str) else repr(value))
    return texts


def _machine_paths() -> list[str]:
    """Absolute paths that would reveal where a notebook ran."""
    found = {str(ROOT), sys.prefix, sys.base_prefix, tempfile.gettempdir(), str(Path.home())}
    return sorted(path for path in found if len(path) > 1)


_PATH_RE = re.compile(r"(?<![\w.])(/tmp/|/var/folders/|/home/\w|/root/|/Users/\w|[A-Z]:\\\\)")
_ADDRESS_RE = re.compile(r"\b0x[0-9a-fA-F]{4,}")


def clean_notebook(nb: Any) -> Any:
    """Drop what a run leaves that must not be committed: widget state and views, timing.

    Widget views only render while their kernel lives; without them JupyterLab and other
    viewers show each display's text or Markdown fallback instead of an error.
    """
    nb.metadata.pop("widgets", None)
    for cell in _code_cells(nb):
        cell.metadata.pop("execution", None)
        kept = []
        for output in cell.outputs:
            data = output.get("data")
            if data is not None and WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                if not data:
                    continue
            kept.append(output)
        cell.outputs = kept
    return nb


def kernel_env(home: str) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(_CLEAN_PREFIXES) and name not in _PROXY_VARS
    }
    env["SUPERCONTEXT_LAB_HOME"] = home
    env["NO_PROXY"] = "127.0.0.1,localhost,::1"
    return env


def refresh(path: Path, *, timeout_s: int = 300) -> float:
    """Run ``path`` top to bottom in a fresh kernel, clean it, save it; return the seconds."""
    from nbclient import NotebookClient

    nb = _read(path)
    for cell in _code_cells(nb):
        cell.outputs, cell.execution_count = [], None
    with tempfile.TemporaryDirectory(prefix="supercontext-refresh-") as home:
        client = NotebookClient(
            nb,
            timeout=timeout_s,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
            record_timing=False,
            store_widget_state=False,
        )
        started = time.perf_counter()
        client.execute(env=kernel_env(home))
        elapsed = time.perf_counter() - started
    nbformat.write(clean_notebook(nb), path)
    return elapsed


# --------------------------------------------------------------------------- notebooks


@pytest.mark.parametrize("name", EXPECTED)
def test_expected_notebook_exists(name: str) -> None:
    assert (NOTEBOOKS / f"{name}.ipynb").is_file()


NOTEBOOK_PARAMS = [pytest.param(path, id=path.stem) for path in notebook_paths()]


@pytest.mark.parametrize("path", NOTEBOOK_PARAMS)
def test_notebook_is_valid_and_tells_a_story(path: Path) -> None:
    nb = _read(path)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.startswith(f"# {path.stem[:2]} · "), "the title names the number"
    # Short Markdown between the cells: never more than three code cells in a row.
    run = 0
    for cell in nb.cells:
        run = run + 1 if cell.cell_type == "code" else 0
        assert run <= 3, f"{path.name}: more than three code cells without Markdown between"


@pytest.mark.parametrize("path", NOTEBOOK_PARAMS)
def test_a_private_lab_home_comes_first_and_removes_itself(path: Path) -> None:
    nb = _read(path)
    code = _code_cells(nb)
    # First after the parameters cell, if there is one: nothing before it uses the lab.
    home = code[1] if _is_parameters(code[0]) else code[0]
    assert PRIVATE_HOME in home.source
    before = nb.cells[: nb.cells.index(home)]
    explained = " ".join(
        " ".join(cell.source.lower().split()) for cell in before if cell.cell_type == "markdown"
    )
    assert "private lab home" in explained, "a Markdown cell says why before the code cell"
    assert "removed when the kernel stops" in explained
    others = [cell for cell in code if cell is not home]
    assert all("SUPERCONTEXT_LAB_HOME" not in cell.source for cell in others), (
        "the lab home is set once, first"
    )
    assert all("mkdtemp" not in cell.source for cell in code), "a temporary folder that stays"


@pytest.mark.parametrize("path", NOTEBOOK_PARAMS)
def test_a_parameters_cell_holds_plain_assignments_only(path: Path) -> None:
    import ast

    code = _code_cells(_read(path))
    for cell in (cell for cell in code if _is_parameters(cell)):
        assert cell is code[0], "the parameters come first"
        for node in ast.parse(cell.source).body:
            # papermill reads the cell line by line: anything but `name = literal` makes it
            # warn ("Unable to parse line …") and leaves that line out of its help.
            assert isinstance(node, ast.Assign), ast.unparse(node)
            assert all(isinstance(target, ast.Name) for target in node.targets)
            assert isinstance(node.value, ast.Constant), ast.unparse(node)
            assert node.lineno == node.end_lineno, "one line each"
        for line in cell.source.splitlines():
            assert line.count("=") <= 1, f"papermill reads one '=' a line: {line}"


@pytest.mark.parametrize("path", NOTEBOOK_PARAMS)
def test_every_code_cell_ran_once_in_order(path: Path) -> None:
    counts = [cell.execution_count for cell in _code_cells(_read(path))]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: refresh it (see README)"


@pytest.mark.parametrize("path", NOTEBOOK_PARAMS)
def test_outputs_hold_no_error_path_or_address(path: Path) -> None:
    machine = _machine_paths()
    for number, cell in enumerate(_code_cells(_read(path)), start=1):
        for output in cell.outputs:
            assert output.output_type != "error", f"{path.name} cell {number} raised"
            for text in _output_texts(output):
                where = f"{path.name} code cell {number}"
                assert "Traceback (most recent call last)" not in text, where
                assert _PATH_RE.search(text) is None, f"{where}: {_PATH_RE.search(text)}"
                assert not [p for p in machine if p in text], f"{where} shows a machine path"
                assert _ADDRESS_RE.search(text) is None, f"{where} shows a memory address"


@pytest.mark.parametrize("path", NOTEBOOK_PARAMS)
def test_check_cells_have_outputs_to_compare(path: Path) -> None:
    cells = _code_cells(_read(path))
    checked = [cell for cell in cells if is_check_cell(cell)]
    assert len(checked) >= 3, f"{path.name}: mark the deterministic cells for nbval"
    for cell in checked:
        assert cell.outputs, f"{path.name}: a checked cell without output checks nothing"
        # IPython hides a result after a trailing ';' by looking at its input history,
        # which nbval does not keep: under nbval the result shows and the check fails.
        assert not cell.source.rstrip().endswith(";"), "assign the result to _ instead"
    # The marker is metadata a reader does not see, never a comment in the teaching code.
    assert not [cell for cell in cells if CHECK_MARK in cell.source], "use the nbval tag"


@pytest.mark.parametrize("path", NOTEBOOK_PARAMS)
def test_committed_notebook_is_clean(path: Path) -> None:
    nb = _read(path)
    assert "widgets" not in nb.metadata, "widget state is not committed"
    before = nbformat.writes(nb)
    assert nbformat.writes(clean_notebook(nb)) == before, f"{path.name}: refresh it"


def test_sanitizer_masks_what_changes_between_runs() -> None:
    sections = (NOTEBOOKS / "sanitize.cfg").read_text("utf-8").split("\n\n")
    patterns = []
    for section in sections:
        lines = dict(line.split(": ", 1) for line in section.splitlines() if line.startswith("re"))
        patterns.append((re.compile(lines["regex"]), lines["replace"]))

    def sanitize(text: str) -> str:
        for pattern, replace in patterns:
            text = pattern.sub(replace, text)
        return text

    assert sanitize("took 12.5 ms") == sanitize("took 7 ms")
    assert sanitize("at 0x7f3a2c") == sanitize("at 0x10ab")
    assert sanitize("http://127.0.0.1:40123/v1") == sanitize("http://127.0.0.1:5/v1")
    # Markdown displays escape punctuation: the port is masked there too.
    assert sanitize(r"127\.0\.0\.1\:40123") == sanitize(r"127\.0\.0\.1\:5")
    assert sanitize("/tmp/supercontext-nb-abc/config.toml") == sanitize("/tmp/x/config.toml")
    assert sanitize("has_enough_context: true") == "has_enough_context: true"


# --------------------------------------------------------------------------- binder


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


BINDER_EXTRAS = ("jupyter-ai", "mcp")
"""The extras Binder installs beside the runtime (the persona in the demo's chat panel, and
the MCP server beside it)."""


def _runtime_requirements() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    texts = list(project["dependencies"])
    for extra in BINDER_EXTRAS:
        texts += project["optional-dependencies"][extra]
    return {_canonical(req.name): req for req in map(Requirement, texts)}


def _binder_pins() -> dict[str, Requirement]:
    pins: dict[str, Requirement] = {}
    for line in (BINDER / "requirements.txt").read_text("utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        req = Requirement(text)
        name = _canonical(req.name)
        assert name not in pins, f"{req.name} is listed twice"
        pins[name] = req
    return pins


def test_binder_pins_every_runtime_dependency() -> None:
    needed = _runtime_requirements()
    pins = _binder_pins()
    assert sorted(needed) == sorted(pins), "binder/requirements.txt and pyproject.toml differ"
    for name, req in needed.items():
        pin = pins[name]
        specs = list(pin.specifier)
        assert len(specs) == 1, f"{name}: pin exactly one version"
        assert specs[0].operator == "==", f"{name}: pin with ==, not {specs[0].operator}"
        assert req.specifier.contains(specs[0].version, prereleases=True), (
            f"{name}=={specs[0].version} does not satisfy pyproject.toml's {req.specifier}"
        )
        assert str(pin.marker) == str(req.marker), f"{name}: keep the environment marker"


@pytest.mark.parametrize("name", ["postBuild", "start"])
def test_binder_script_is_executable_and_well_formed(name: str) -> None:
    script = BINDER / name
    text = script.read_text("utf-8")
    assert os.access(script, os.X_OK), f"chmod +x binder/{name}"
    assert text.startswith("#!/bin/bash\n")
    assert re.search(r"^set -e$", text, re.MULTILINE), "stop at the first failing command"
    syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr


def test_binder_post_build_installs_the_package() -> None:
    commands = [
        line.strip()
        for line in (BINDER / "postBuild").read_text("utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    extras = ",".join(BINDER_EXTRAS)
    assert f'pip install --no-cache-dir -e ".[{extras}]"' in commands


def test_binder_start_ends_by_running_the_server() -> None:
    lines = [
        line.strip()
        for line in (BINDER / "start").read_text("utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert lines[-1] == 'exec "$@"'


def test_binder_start_selects_a_home_folder_and_the_offline_models(tmp_path: Path) -> None:
    probe = (
        "import os\n"
        "from supercontext_lab import get_model_route, lab_home, super_context_status\n"
        "print(lab_home())\n"
        "print(get_model_route('burst').kind, get_model_route('agentic').kind)\n"
        "print(super_context_status().source, 'OPENAI_API_KEY' in os.environ)\n"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "OPENAI_API_KEY": "sk-not-a-real-key",
        "OPENHUMAN_SUPER_CONTEXT": "off",
    }
    run = subprocess.run(
        ["bash", str(BINDER / "start"), sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    home, routes, flag = run.stdout.splitlines()
    assert Path(home).parent == tmp_path
    assert routes == "offline offline"
    assert flag == "default False"


# --------------------------------------------------------------------------- refresh


def _main(argv: list[str]) -> int:
    paths = [Path(arg).resolve() for arg in argv] or notebook_paths()
    for path in paths:
        print(f"{path.name:42} {refresh(path):6.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
