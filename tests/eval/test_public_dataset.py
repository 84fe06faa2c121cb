"""The shipped evaluation set built from public notes: it loads, its workspaces are usable,
its expectations point at things that exist, and every shipped note has its source recorded.
Beside it, the structures set: published benchmarks' questions over tables, emails, chats and
prose, each case saying how its answer is laid out."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from supercontext_lab.cli import main
from supercontext_lab.eval import EvalCase, demo_dataset_path, load_dataset
from supercontext_lab.eval.dataset import STRUCTURES
from supercontext_lab.sources.workspace import Workspace

PUBLIC = Path(demo_dataset_path()).parent / "public"
DATASET = PUBLIC / "dataset.jsonl"
STRUCTURES_SET = PUBLIC / "structures.jsonl"
SOURCES = PUBLIC / "SOURCES.md"
SAMPLE = PUBLIC / "longmemeval_sample.json"
WORKSPACES = sorted(path for path in PUBLIC.iterdir() if (path / "memory").is_dir())


@pytest.fixture(scope="module")
def cases() -> list[EvalCase]:
    return load_dataset(DATASET)


@pytest.fixture(scope="module")
def structure_cases() -> list[EvalCase]:
    return load_dataset(STRUCTURES_SET)


def _notes(folder: Path) -> dict[Path, str]:
    """The workspace's memory notes, by path, lower-cased (mentions match ignoring case)."""
    return {
        path: path.read_text(encoding="utf-8").casefold()
        for path in sorted((folder / "memory").rglob("*.md"))
    }


def test_the_set_has_three_workspaces_and_every_case_names_one(cases: list[EvalCase]) -> None:
    assert sorted(folder.name for folder in {case.workspace for case in cases} if folder) == [
        "govuk-forms",
        "rust-compiler-team",
        "til-notebook",
    ]
    assert len(cases) >= 30
    assert all(case.workspace is not None for case in cases)


def test_every_shipped_workspace_is_named_by_a_case(
    cases: list[EvalCase], structure_cases: list[EvalCase]
) -> None:
    named = {case.workspace for case in [*cases, *structure_cases]}
    assert named == {path.resolve() for path in WORKSPACES}


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


# --------------------------------------------------------------------------- structures set


def test_the_structures_set_has_sixty_benchmark_questions_or_more(
    structure_cases: list[EvalCase],
) -> None:
    assert len(structure_cases) >= 60
    assert sorted(folder.name for folder in {c.workspace for c in structure_cases} if folder) == [
        "public-chat",
        "public-email",
        "public-prose",
        "public-tables",
    ]
    for case in structure_cases:
        assert case.structure in STRUCTURES
        assert case.expect.has_goal is False
        assert case.expect.has_enough_context is True
        assert case.expect.mentions


def test_each_structure_the_set_claims_has_ten_cases_or_more(
    structure_cases: list[EvalCase],
) -> None:
    counts = Counter(case.structure for case in structure_cases)
    assert {"table", "email", "chat", "prose"} <= set(counts)
    assert {name: n for name, n in counts.items() if n < 10} == {}


def test_each_structure_keeps_to_one_workspace(structure_cases: list[EvalCase]) -> None:
    """A workspace holds documents of one layout, so a figure per structure is a figure per
    kind of note."""
    folders: dict[str | None, set[Path | None]] = {}
    for case in structure_cases:
        folders.setdefault(case.structure, set()).add(case.workspace)
    assert all(len(named) == 1 for named in folders.values())
    assert len({folder for named in folders.values() for folder in named}) == len(folders)


def test_every_structure_answer_is_verbatim_in_exactly_one_note(
    structure_cases: list[EvalCase],
) -> None:
    """The benchmark's answer is written in the note as it is in the case (case and all), and
    in no other note of the workspace: a mention found in a bundle came from the right
    document."""
    wrong = []
    for case in structure_cases:
        assert case.workspace is not None
        notes = [
            path.read_text(encoding="utf-8") for path in (case.workspace / "memory").rglob("*.md")
        ]
        for mention in case.expect.mentions or ():
            holding = sum(mention in text for text in notes)
            if holding != 1:
                wrong.append((case.id, mention, holding))
    assert wrong == []


def test_every_structure_workspace_has_distractors(structure_cases: list[EvalCase]) -> None:
    for folder in {case.workspace for case in structure_cases}:
        assert folder is not None
        assert len(list((folder / "memory").rglob("*.md"))) >= 10


def _email(text: str) -> bool:
    """Headers a line each, a blank line, the message; or a message that came without."""
    head, _, body = text.partition("\n\n")
    if not head.startswith(("From: ", "Subject: ")):
        return text.startswith("Hi")
    return bool(body) and all(
        line.startswith(("From: ", "Date: ", "Subject: ")) for line in head.splitlines()
    )


LAYOUTS: dict[str, Callable[[str], bool]] = {
    "public-tables": lambda text: text.startswith("# ") and "\n| --- |" in text,
    "public-chat": lambda text: all(": " in line for line in text.splitlines()),
    "public-email": _email,
    "public-prose": lambda text: text.startswith("# ") and text.count("\n\n") >= 2,
}


@pytest.mark.parametrize("folder", sorted(LAYOUTS))
def test_structure_notes_keep_their_layout(folder: str) -> None:
    notes = list((PUBLIC / folder / "memory").rglob("*.md"))
    assert notes
    assert [path.name for path in notes if not LAYOUTS[folder](path.read_text("utf-8"))] == []
