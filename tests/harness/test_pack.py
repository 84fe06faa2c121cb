"""The pack under a time limit: cut short at its reads, and saying so (the deadline's fallback).

The pack's envelope itself (facts fitted, the relevance rule) is tested with the other
designs in ``test_designs.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from supercontext_lab.harness.pack import build_pack
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace

REQUEST = "Help me check the grant renewal budget"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(build_workspace(tmp_path / "ws"))


def test_a_pack_under_a_time_limit_leaves_a_slow_read_out(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = Workspace.memory.func  # type: ignore[attr-defined]

    def slow(self: Workspace) -> MemoryTree:
        time.sleep(0.5)  # as opening the memory tree of thousands of notes does
        return opened(self)  # type: ignore[no-any-return]

    monkeypatch.setattr(Workspace, "memory", property(slow))
    packed = build_pack(REQUEST, workspace=workspace, timeout_s=0.2)
    # Every recall the round planned waited on the tree; the other reads were done.
    assert packed.cut and set(packed.late) == {"memory_recall"}
    assert packed.late == tuple(read for read in packed.reads if read == "memory_recall")
    # PROFILE.md and MEMORY.md are read without a read: their facts are in the envelope.
    assert packed.facts >= 1 and packed.run.bundle is not None
    done = len(packed.reads) - len(packed.late)
    assert packed.describe() == (
        f"from {done} of {len(packed.reads)} read{'s' * (len(packed.reads) > 1)} "
        f"(memory_recall not done in time), {packed.facts} fact{'s' * (packed.facts > 1)}"
    )
    late = next(step for step in packed.run.trace if step.late)
    assert late.tool == "memory_recall" and not late.ok
    assert late.to_dict()["late"] is True
    # The workspace was not surveyed, and the run says so.
    assert not packed.surveyed and not workspace.surveyed
    assert any("not surveyed for refused files" in line for line in packed.run.problems)


def test_a_pack_without_a_time_limit_reads_everything_and_surveys(workspace: Workspace) -> None:
    packed = build_pack(REQUEST, workspace=workspace)
    assert not packed.cut and packed.late == () and packed.reads
    assert packed.surveyed and workspace.surveyed
    assert not any(step.late for step in packed.run.trace)
    assert not any("not surveyed" in line for line in packed.run.problems)
