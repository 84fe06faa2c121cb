"""Shared fixtures for the evaluation tests: the shipped dataset and variants."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.agents import default_agent_toml, set_tool_enabled
from supercontext_lab.eval import (
    CaseResult,
    EvalCase,
    Variant,
    demo_dataset_path,
    load_dataset,
)

# A handful of shipped cases covering memory facts, a greeting, tools and skills.
SMALL_IDS = (
    "kernel-decision",
    "reply-jonas-gbif",
    "grant-reference",
    "greeting-hi",
    "pipeline-rerun",
    "hpc-runtime",
)


@pytest.fixture(scope="session")
def demo_cases() -> list[EvalCase]:
    return load_dataset(demo_dataset_path())


@pytest.fixture(scope="session")
def small_cases(demo_cases: list[EvalCase]) -> list[EvalCase]:
    by_id = {case.id: case for case in demo_cases}
    return [by_id[case_id] for case_id in SMALL_IDS]


def write_variant(folder: Path, tool: str, enabled: bool = False) -> Path:
    """An agent.toml beside no prompt.md: the shipped scout with ``tool`` toggled."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "agent.toml"
    path.write_text(set_tool_enabled(default_agent_toml(), tool, enabled), encoding="utf-8")
    return path


@pytest.fixture
def no_memory_variant(tmp_path: Path) -> Variant:
    path = write_variant(tmp_path / "no_memory_recall", "memory_recall")
    return Variant.from_path("no_memory_recall", path)


def stored_whole(result: CaseResult) -> bool:
    """Whether the result cache keeps this demo-workspace run: runs that call a web tool
    are never kept, and in the demo (no search provider configured) a web search is the
    only tool call that fails."""
    return int(result.trace_summary["tool_errors"]) == 0
