"""The shipped evaluation set built from public notes: it loads, its workspaces are usable,
its expectations point at things that exist, and every shipped note has its source recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supercontext_lab.cli import main
from supercontext_lab.eval import EvalCase, demo_dataset_path, load_dataset
from supercontext_lab.sources.workspace import Workspace

PUBLIC = Path(demo_dataset_path()).parent / "public"
DATASET = PUBLIC / "dataset.jsonl"
SOURCES = PUBLIC / "SOURCES.md"
SAMPLE = PUBLIC / "longmemeval_sample.json"
WORKSPACES = sorted(path for path in PUBLIC.iterdir() if (path / "memory").is_dir())


@pytest.fixture(scope="module")
def cases() -> list[EvalCase]:
    return load_dataset(DATASET)


def _notes(folder: Path) -> dict[Path, str]:
    """The workspace's memory notes, by path, lower-cased (mentions match ignoring case)."""
    return {
        path: path.read_text(encoding="utf-8").casefold()
        for path in sorted((folder / "memory").rglob("*.md"))
    }


def test_the_set_has_three_workspaces_and_every_case_names_one(cases: list[EvalCase]) -> None:
    assert [path.name for path in WORKSPACES] == [
        "govuk-forms",
        "rust-compiler-team",
        "til-notebook",
    ]
    assert len(cases) >= 30
    assert {case.workspace for case in cases} == {path.resolve() for path in WORKSPACES}


def test_the_set_scores_what_it_is_meant_to(cases: list[EvalCase]) -> None:
    expect = [case.expect for case in cases]
    off_topic = [e for e in expect if e.has_enough_context is False]
    assert len(off_topic) >= 5
    assert all(not e.mentions for e in off_topic)
    assert sum(1 for e in expect if e.skills or e.tools) >= 6
    # An empty list scores "recommended nothing": a recommendation there lowers precision.
    assert sum(1 for e in expect if e.skills == ()) >= 3
    assert sum(1 for e in expect if e.must_not_mention) >= 5
    assert all(e.has_goal is not None for e in expect)


@pytest.mark.parametrize("folder", WORKSPACES, ids=lambda path: path.name)
def test_every_workspace_checks_as_usable(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workspace", "check", "--json", str(folder)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["usable"] is True
    assert report["not_read"] == []
    assert report["problems"] == []


def test_every_expected_mention_is_in_a_public_note_of_its_workspace(
    cases: list[EvalCase],
) -> None:
    missing = []
    for case in cases:
        assert case.workspace is not None
        notes = _notes(case.workspace)
        for mention in case.expect.mentions or ():
            if not any(mention.casefold() in text for text in notes.values()):
                missing.append((case.id, mention))
    assert missing == []


def test_every_forbidden_mention_is_in_a_neighbouring_note(cases: list[EvalCase]) -> None:
    """A forbidden string guards against a note that exists: one nowhere in the workspace
    could never be mentioned and would test nothing."""
    absent = []
    for case in cases:
        assert case.workspace is not None
        notes = _notes(case.workspace)
        for banned in case.expect.must_not_mention or ():
            if not any(banned.casefold() in text for text in notes.values()):
                absent.append((case.id, banned))
    assert absent == []


def test_expected_tools_and_skills_exist_in_their_workspace(cases: list[EvalCase]) -> None:
    unknown = []
    for case in cases:
        assert case.workspace is not None
        workspace = Workspace(case.workspace)
        tools = {tool.name for tool in workspace.orchestrator_tools}
        skills = {skill.dir_name for skill in workspace.skills}
        unknown += [(case.id, name) for name in case.expect.tools or () if name not in tools]
        unknown += [(case.id, name) for name in case.expect.skills or () if name not in skills]
    assert unknown == []


def test_sources_names_every_shipped_note_and_skill() -> None:
    sources = SOURCES.read_text(encoding="utf-8")
    unnamed = []
    for folder in WORKSPACES:
        shipped = [*(folder / "memory").rglob("*.md"), *(folder / "skills").glob("*/SKILL.md")]
        unnamed += [
            f"{folder.name}/{path.relative_to(folder).as_posix()}"
            for path in shipped
            if f"`{path.relative_to(folder).as_posix()}`" not in sources
        ]
    assert unnamed == []
    for licence in (PUBLIC / "LICENSES").iterdir():
        assert f"`LICENSES/{licence.name}`" in sources


def test_the_longmemeval_sample_is_in_the_official_format() -> None:
    records = json.loads(SAMPLE.read_text(encoding="utf-8"))
    keys = {
        "question_id",
        "question_type",
        "question",
        "answer",
        "question_date",
        "haystack_dates",
        "haystack_session_ids",
        "haystack_sessions",
        "answer_session_ids",
    }
    assert 1 <= len(records) <= 15
    sources = SOURCES.read_text(encoding="utf-8")
    for record in records:
        assert set(record) == keys
        assert f"`{record['question_id']}`" in sources
        sessions = record["haystack_sessions"]
        assert len(sessions) == len(record["haystack_session_ids"]) == len(record["haystack_dates"])
        assert set(record["answer_session_ids"]) <= set(record["haystack_session_ids"])
        for turn in (turn for session in sessions for turn in session):
            assert turn["role"] in {"user", "assistant"}
            assert isinstance(turn["content"], str)


def test_an_evaluation_indexes_a_copy_never_the_shipped_workspace(
    cases: list[EvalCase], tmp_path: Path
) -> None:
    from supercontext_lab.config import lab_home
    from supercontext_lab.eval import evaluate

    shipped = {folder: (folder / ".supercontext").exists() for folder in WORKSPACES}
    report = evaluate(cases[:1], cache=False, progress=False)
    assert report.results[0].ok
    for folder, had_index in shipped.items():
        assert (folder / ".supercontext").exists() == had_index
    copies = lab_home() / "shipped"
    assert any((copy / ".supercontext").is_dir() for copy in copies.iterdir())
