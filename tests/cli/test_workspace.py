"""``supercontext-lab workspace check``: what a folder holds, what it does not read, why."""

from __future__ import annotations

import json
from pathlib import Path

from supercontext_lab.testing import build_workspace, write_file

from .conftest import run_cli


def _near_misses(root: Path) -> Path:
    return build_workspace(
        root,
        {
            "memory/freezer.md": "Box 3 holds the seed samples.\n",
            "memory/global/a.md": "A note.\n",
            "memory/todo.txt": "A text note.\n",
            "Memory/global/b.md": "Wrong case.\n",
            "SKILLS/x/SKILL.md": "---\nname: X\n---\n",
            "PROFILE.md": "# Me\n- I study seeds.\n",
            "evil\x1b[2J.md": "A name with an escape.\n",
        },
    )


def test_check_counts_what_is_read_and_names_what_is_not(tmp_path: Path) -> None:
    out = run_cli("workspace", "check", str(_near_misses(tmp_path)))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"workspace: {tmp_path.resolve()}"
    assert "found: 2 memory notes in memory/ (global 2)" in lines
    assert "found: PROFILE.md" in lines
    assert "found: no MEMORY.md" in lines
    assert "found: 0 installed skills (skills/<name>/SKILL.md)" in lines
    assert "found: no registry.json" in lines
    assert "found: no orchestrator_tools.toml (the built-in catalogue is used)" in lines
    not_read = [line for line in lines if line.startswith("not read: ")]
    assert not_read == [
        "not read: Memory/ is not read: only memory/ is read (the name is case-sensitive); "
        "rename it.",
        "not read: SKILLS/ is not read: only skills/ is read (the name is case-sensitive); "
        "rename it.",
        "not read: evil\\x1b[2J.md is not read: at the top of a workspace only PROFILE.md and "
        "MEMORY.md are read; move a note into memory/ as a .md file, or into files/.",
        "not read: memory/todo.txt is not read: only .md notes are indexed; rename it todo.md.",
    ]
    assert "\x1b" not in out.stdout
    assert lines[-1] == "usable (4 not read, 0 problems)"
    # Nothing is written: the notes are counted, not indexed.
    assert not (tmp_path / ".supercontext").exists()


def test_check_json_gives_the_same_findings(tmp_path: Path) -> None:
    out = run_cli("workspace", "check", "--json", str(_near_misses(tmp_path)))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["usable"] is True
    assert report["found"]["memory_notes"] == {"global": 2}
    assert report["found"]["registry_entries"] is None
    assert len(report["not_read"]) == 4
    # The same line as the text report: a name is shown escaped, on one line.
    assert report["not_read"][2].startswith("evil\\x1b[2J.md is not read")
    assert "\x1b" not in out.stdout
    assert report["problems"] == []


def test_a_part_that_cannot_be_used_makes_the_workspace_unusable(tmp_path: Path) -> None:
    write_file(tmp_path / "registry.json", "{not json")
    out = run_cli("workspace", "check", str(tmp_path))
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert "found: registry.json cannot be used (see the problem below)" in lines
    assert any(line.startswith("problem: registry.json is not valid JSON") for line in lines)
    assert (
        out.stdout.splitlines()[-1] == "not usable: fix the problems above (0 not read, 1 problem)"
    )


def test_a_profile_the_scout_cannot_read_makes_the_workspace_unusable(tmp_path: Path) -> None:
    write_file(tmp_path / "PROFILE.md", b"Caf\xe9: I study seeds.\n")  # Latin-1, not UTF-8
    out = run_cli("workspace", "check", str(tmp_path))
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert "found: PROFILE.md cannot be used (see the problem below)" in lines
    assert any(line.startswith("problem: PROFILE.md") and "UTF-8" in line for line in lines)
    report = json.loads(run_cli("workspace", "check", "--json", str(tmp_path)).stdout)
    assert (report["usable"], report["found"]["profile_md"]) == (False, None)


def test_a_missing_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = run_cli("workspace", "check", str(tmp_path / "nope"))
    assert out.returncode == 2
    assert out.stdout == ""
    assert (
        out.stderr.strip() == f"supercontext-lab: workspace folder not found: {tmp_path / 'nope'}"
    )
