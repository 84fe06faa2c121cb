"""``supercontext-lab workspace check`` against hostile folders: names that forge report
lines, and parts the check and the scout would read differently.

A file or folder name may hold line breaks, so a name could add lines of its own to the
text report (a fake "usable (0 not read, 0 problems)", a fake "found:" line): every name
shown is escaped to one line. And the check must say what the scout will do, because it
reads the workspace with the scout's own reader: a folder named PROFILE.md that makes
every turn cold makes the workspace not usable, and a FIFO the scout refuses is named.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from supercontext_lab.testing import build_workspace

from .support import MESSAGE, run_cli, write

FORGED = "\nusable (0 not read, 0 problems)\nfound: 9 memory notes (a name holds no slash)\n"


def _forging_names(root: Path) -> Path:
    build_workspace(root, {"memory/global/budget.md": "The grant renewal budget is 40k.\n"})
    write(root / f"notes{FORGED}x.md", "A note at the top.\n")
    write(root / "memory" / f"ns{FORGED}" / "a.md", "A note in a forged namespace.\n")
    write(root / "memory" / "global" / f"b{FORGED}.txt", "Not a .md note.\n")
    write(root / f"skills{FORGED}" / "SKILL.md", "A folder near skills.\n")
    write(root / "files" / f"f{FORGED}.md", "A file.\n")
    return root


def test_names_holding_line_breaks_cannot_add_report_lines(tmp_path: Path) -> None:
    """File and folder names holding line breaks: every name on one line, escaped"""
    root = _forging_names(tmp_path / "ws")
    done = run_cli("workspace", "check", str(root))
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("usable")] == [lines[-1]]
    assert not any(line.startswith("found: 9 memory notes") for line in lines)
    heads = [line.split(":", 1)[0] for line in lines]
    assert set(heads) <= {"workspace", "found", "not read", "problem"} | {lines[-1].split(":")[0]}
    assert sum(line.startswith("found: ") for line in lines) == 9
    assert any("notes\\nusable (0 not read, 0 problems)\\nfound" in line for line in lines)
    # A namespace or key holding a line break could never be cited: it is left out.
    assert "found: 1 memory note in memory/ (global 1)" in lines
    assert any("memory/ns\\nusable" in line for line in lines if line.startswith("not read: "))


def test_the_json_report_holds_the_same_one_line_names(tmp_path: Path) -> None:
    """workspace check --json: each finding one line, the names escaped as in the text"""
    root = _forging_names(tmp_path / "ws")
    report = json.loads(run_cli("workspace", "check", "--json", str(root)).stdout)
    assert all("\n" not in line for line in report["not_read"])
    assert all("\n" not in namespace for namespace in report["found"]["memory_notes"])


def test_the_scout_command_shows_such_names_on_one_line(tmp_path: Path) -> None:
    """supercontext-lab scout on that workspace: its problems one line each"""
    root = _forging_names(tmp_path / "ws")
    done = run_cli("scout", "--workspace", str(root), MESSAGE)
    assert done.returncode == 0, done.stderr
    assert not any(line.startswith("usable") for line in done.stdout.splitlines())
    assert not any(line.startswith("found: 9") for line in done.stdout.splitlines())


# ---------------------------------------------------------------------- 14. one reader


def _folder(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link_to_fifo(path: Path) -> None:
    fifo = path.with_name(".fifo")
    os.mkfifo(fifo)
    path.symlink_to(fifo.name)


TRAPS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "PROFILE.md-folder": ("PROFILE.md", _folder),
    "MEMORY.md-folder": ("MEMORY.md", _folder),
    "PROFILE.md-fifo": ("PROFILE.md", _fifo),
    "MEMORY.md-fifo": ("MEMORY.md", _fifo),
    "PROFILE.md-link-to-a-fifo": ("PROFILE.md", _link_to_fifo),
    "registry.json-fifo": ("registry.json", _fifo),
    "integrations.toml-fifo": ("integrations.toml", _fifo),
    "orchestrator_tools.toml-folder": ("orchestrator_tools.toml", _folder),
}


@pytest.mark.parametrize("trap", list(TRAPS))
def test_the_check_and_the_scout_read_a_part_alike(tmp_path: Path, trap: str) -> None:
    """A part that is a folder, a FIFO or a link to one: the check says what the scout does"""
    name, make = TRAPS[trap]
    root = build_workspace(tmp_path / "ws")
    target = root / name
    if target.exists():
        target.unlink()
    make(target)
    check = run_cli("workspace", "check", "--json", str(root), timeout=30)
    assert check.returncode in (0, 1), check.stderr
    report = json.loads(check.stdout)
    scout = run_cli("scout", "--json", "--workspace", str(root), MESSAGE, timeout=60)
    assert scout.returncode in (0, 2), scout.stderr
    # Usable exactly when the scout can run on it.
    assert report["usable"] is (scout.returncode == 0), (report, scout.stderr)
    if scout.returncode == 0:
        refused = [
            line.removeprefix("workspace: ")
            for line in json.loads(scout.stdout)["problems"]
            if line.startswith(f"workspace: {name}")
        ]
        assert refused and set(refused) <= set(report["not_read"]), (refused, report)
        text = run_cli("workspace", "check", str(root), timeout=30).stdout.splitlines()
        assert f"found: {name} is not read (see below)" in text, text
    else:
        assert any(name in problem for problem in report["problems"]), report
