"""The unseen workspaces: fourteen users' workspaces and questions, five with a ChatGPT export.
The set loads, every expectation points at text and documents that exist, and an
evaluation reads the export as the workspace's past conversations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supercontext_lab.bundle.records import find_attributions
from supercontext_lab.eval import EvalCase, Variant, demo_dataset_path, evaluate, load_dataset
from supercontext_lab.routes import ModelRoute

UNSEEN = Path(demo_dataset_path()).parent / "unseen"
DATASET = UNSEEN / "dataset.jsonl"


@pytest.fixture(scope="module")
def cases() -> list[EvalCase]:
    return load_dataset(DATASET)


def _texts(workspace: Path) -> str:
    notes = [p.read_text(encoding="utf-8") for p in sorted(workspace.rglob("*.md"))]
    chats = [p.read_text(encoding="utf-8") for p in sorted(workspace.glob("imports/*"))]
    return "\n".join([*notes, *chats]).casefold()


def _conversation_ids(workspace: Path) -> set[str]:
    return {
        str(conversation["id"])
        for export in sorted(workspace.glob("imports/*.json"))
        for conversation in json.loads(export.read_text(encoding="utf-8"))
    }


def test_fourteen_workspaces_each_with_one_question_nothing_answers(cases: list[EvalCase]) -> None:
    by_workspace: dict[str, list[EvalCase]] = {}
    for case in cases:
        assert case.workspace is not None and case.structure is not None
        by_workspace.setdefault(case.workspace.name, []).append(case)
    assert sorted(by_workspace) == [
        "bookkeeping-practice",
        "clinical",
        "construction",
        "ecommerce-ops",
        "events-office",
        "family-law",
        "game-studio",
        "grant-office",
        "letting-agency",
        "newsroom",
        "parks-operations",
        "school-head-of-year",
        "sre",
        "vet-clinic",
    ]
    for mine in by_workspace.values():
        assert len(mine) >= 9
        assert [c.expect.has_enough_context for c in mine].count(False) == 1


def test_every_mention_and_source_exists_in_its_workspace(cases: list[EvalCase]) -> None:
    for case in cases:
        assert case.workspace is not None
        text = _texts(case.workspace)
        for mention in case.expect.mentions or ():
            assert mention.casefold() in text, (case.id, mention)
        if case.expect.mentions:
            assert case.expect.sources, case.id
        for label in case.expect.sources or ():
            (attribution,) = find_attributions(f"({label})")
            source = attribution.source
            if source.kind == "transcript":
                assert source.ref in _conversation_ids(case.workspace), (case.id, label)
            else:
                assert source.memory_document is not None, (case.id, label)
                namespace, key = source.memory_document
                assert (case.workspace / "memory" / namespace / f"{key}.md").is_file(), label


def test_an_evaluation_reads_the_shipped_export_as_past_conversations(
    cases: list[EvalCase],
) -> None:
    # The answer is said only in an imported ChatGPT conversation, never in a note.
    (case,) = [c for c in cases if c.id == "gs-loc-total"]
    assert case.workspace is not None and case.expect.mentions
    notes = "\n".join(p.read_text(encoding="utf-8") for p in case.workspace.rglob("*.md"))
    assert all(m.casefold() not in notes.casefold() for m in case.expect.mentions)
    report = evaluate([case], [Variant.baseline(ModelRoute())], cache=False, progress=False)
    (result,) = report.results
    envelope = (result.envelope or "").casefold()
    assert all(m.casefold() in envelope for m in case.expect.mentions)
    assert "(transcript: 1a61dbe2-2e44-458b-ae97-ba94d0eda82f)" in envelope
    # The package itself is never written to: the export was imported into the copy.
    assert not (case.workspace / ".supercontext").exists()
