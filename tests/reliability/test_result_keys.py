"""The evaluation's result key over a hostile workspace: a tree nested 1,200 folders deep.

The result store keys a run by a fingerprint of its workspace, which walked the folder
recursively: a ``files/`` tree deeper than Python's recursion limit ended ``eval`` with a
RecursionError traceback. The walk must finish, see a change at the bottom, and ``eval``
must run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from supercontext_lab.eval.keys import workspace_fingerprint

from .support import finishes, run_cli, write
from .test_bounded_walks import _nest, _unnest

DEPTH = 1200


@pytest.fixture
def default_recursion_limit() -> Iterator[None]:
    """Python's default limit, whatever a test run before this one left it at."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


@pytest.mark.usefixtures("default_recursion_limit")
def test_a_tree_1200_folders_deep_is_fingerprinted(tmp_path: Path) -> None:
    """workspace_fingerprint of files/ 1,200 folders deep: done, a deep change seen"""
    write(tmp_path / "memory" / "global" / "budget.md", "The grant renewal budget is 40k.\n")
    (tmp_path / "files").mkdir()
    _nest(tmp_path / "files", DEPTH)
    try:
        before = finishes(30, lambda: workspace_fingerprint(tmp_path))
        leaf = tmp_path / "files" / Path(*["d"] * DEPTH) / "leaf.txt"
        with open(leaf, "a", encoding="utf-8") as handle:
            handle.write("changed\n")
        after = finishes(30, lambda: workspace_fingerprint(tmp_path))
    finally:
        _unnest(tmp_path / "files", DEPTH)
    assert before != after


def test_eval_on_a_tree_1200_folders_deep_runs(tmp_path: Path) -> None:
    """supercontext-lab eval on that workspace: exit 0, no RecursionError"""
    root = tmp_path / "ws"
    write(root / "memory" / "global" / "budget.md", "The grant renewal budget is 40k.\n")
    (root / "files").mkdir()
    _nest(root / "files", DEPTH)
    dataset = write(
        tmp_path / "cases.jsonl",
        json.dumps({"id": "deep", "message": "Help me check the grant renewal budget"}) + "\n",
    )
    try:
        done = run_cli(
            "eval", "--dataset", str(dataset), "--workspace", str(root), "--json", timeout=300
        )
    finally:
        _unnest(root / "files", DEPTH)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RecursionError" not in done.stderr
    assert json.loads(done.stdout)["variants"]
