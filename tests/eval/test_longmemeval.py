"""LongMemEval's official JSON as an evaluation set: workspaces built in the lab home, the
two metrics per question type, abstention, the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.cli import main
from supercontext_lab.config import lab_home
from supercontext_lab.conversations import list_conversations
from supercontext_lab.errors import DatasetError
from supercontext_lab.eval import demo_dataset_path, evaluate
from supercontext_lab.eval.keys import workspace_fingerprint
from supercontext_lab.eval.longmemeval import (
    answer_in,
    is_longmemeval,
    load_longmemeval,
    longmemeval_metrics,
    normalise_answer,
)

SAMPLE = Path(demo_dataset_path()).parent / "public" / "longmemeval_sample.json"


def _question(
    qid: str, kind: str, answer: str, sessions: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    return {
        "question_id": qid,
        "question_type": kind,
        "question": {
            "q-user": "What is the name of my cat?",
            "gift_abs": "What did my dad give me for my birthday?",
            "q-pref": "Any ideas for my meal prep next week?",
        }[qid],
        "answer": answer,
        "question_date": "2023/05/28 (Sun) 16:07",
        "haystack_dates": ["2023/05/20 (Sat) 02:25"] * len(sessions),
        "haystack_session_ids": list(sessions),
        "haystack_sessions": list(sessions.values()),
        "answer_session_ids": list(sessions)[:1],
    }


CAT = [
    {
        "role": "user",
        "content": "By the way, my cat's name is Luna and she loves the garden.",
        "has_answer": True,
    },
    {"role": "assistant", "content": "Luna is a lovely name for a cat."},
]
GIFT = [
    {"role": "user", "content": "My sister gave me a stand mixer for my birthday last month."},
    {"role": "assistant", "content": "What a thoughtful birthday gift from your sister!"},
]
MEALS = [{"role": "user", "content": "I love quinoa with roasted vegetables for meal prep."}]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(
        json.dumps(
            [
                _question("q-user", "single-session-user", "Luna", {"s-cat": CAT, "s-gift": GIFT}),
                _question(
                    "gift_abs", "single-session-user", "You did not mention this.", {"s-gift": GIFT}
                ),
                _question(
                    "q-pref",
                    "single-session-preference",
                    "The user prefers quinoa.",
                    {"s-meals": MEALS},
                ),
            ]
        ),
        encoding="utf-8",
    )
    return path


def test_each_question_runs_on_a_workspace_of_its_sessions_in_the_lab_home(dataset: Path) -> None:
    assert is_longmemeval(dataset) and is_longmemeval(SAMPLE)
    assert not is_longmemeval(demo_dataset_path())
    questions = load_longmemeval(dataset)
    assert [case.id for case in questions.cases] == ["q-user", "gift_abs", "q-pref"]
    for case in questions.cases:
        assert case.workspace is not None
        assert case.workspace.is_relative_to(lab_home() / "longmemeval")
    user, abstention, _ = questions.cases
    assert {c.id for c in list_conversations(user.workspace)} == {"s-cat", "s-gift"}  # type: ignore[arg-type]
    assert [c.id for c in list_conversations(abstention.workspace)] == ["s-gift"]  # type: ignore[arg-type]
    assert user.expect.has_enough_context is True
    assert abstention.expect.has_enough_context is False
    # Nothing is written beside the dataset.
    assert sorted(p.name for p in dataset.parent.iterdir()) == ["lme.json"]
    # Loading again reuses what was built.
    marker = user.workspace / ".supercontext" / "longmemeval-source.sha256"  # type: ignore[operator]
    before = marker.stat().st_mtime_ns
    again = load_longmemeval(dataset)
    assert again.cases[0].workspace == user.workspace
    assert marker.stat().st_mtime_ns == before


def test_with_a_workspace_every_session_is_imported_there_once(
    dataset: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "haystack"
    folder.mkdir()
    questions = load_longmemeval(dataset, workspace=folder)
    assert {case.workspace for case in questions.cases} == {folder.resolve()}
    assert sorted(c.id for c in list_conversations(folder)) == ["s-cat", "s-gift", "s-meals"]


def test_the_metrics_per_question_type(dataset: Path) -> None:
    questions = load_longmemeval(dataset)
    report = evaluate(questions.cases, cache=False, progress=False)
    metrics = longmemeval_metrics(questions, report.results)["baseline"]
    assert list(metrics) == [
        "single-session-preference",
        "single-session-user",
        "abstention",
        "all",
    ]
    user = metrics["single-session-user"]
    assert user["questions"] == 1 and user["evidence_recall"] == 1.0
    assert user["answer_in_bundle"] == 1.0 and user["answer_cases"] == 1
    # The bundle quotes the turn the file marks as holding the answer.
    assert user["answer_turn_in_bundle"] == 1.0 and user["answer_turn_cases"] == 1
    # A question with no marked turn is not scored on it.
    assert metrics["abstention"]["answer_turn_cases"] == 0
    # A preference's answer is a rubric: scored for evidence, not for its text.
    assert metrics["single-session-preference"]["answer_cases"] == 0
    assert metrics["single-session-preference"]["evidence_cases"] == 1
    # An abstention question is right when the bundle says it has not enough context.
    assert metrics["abstention"]["evidence_cases"] == 0
    assert metrics["abstention"]["has_enough_accuracy"] == 1.0
    assert metrics["all"]["questions"] == 3


def test_a_cached_run_is_not_reused_once_the_sessions_change(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    before = workspace_fingerprint(folder)
    path = tmp_path / "one.jsonl"
    path.write_text('{"id": "c", "messages": [{"role": "user", "content": "x"}]}\n', "utf-8")
    from supercontext_lab.conversations import import_conversations

    import_conversations(path, folder)
    after = workspace_fingerprint(folder)
    assert after != before
    path.write_text('{"id": "c", "messages": [{"role": "user", "content": "y"}]}\n', "utf-8")
    import_conversations(path, folder)
    assert workspace_fingerprint(folder) != after


@pytest.mark.parametrize(
    ("answer", "text", "found"),
    [
        ("Luna", "My cat's name is Luna.", True),
        ("a yellow dress", "I got her a Yellow Dress and earrings", True),
        ("+49 (0) 62 32 / 14 23 - 0", "Phone: +49 (0) 62 32 / 14 23 - 0 Email", True),
        ("Transcriptionist.", "6. Online survey taker 7. Transcriptionist 8. Social", True),
        ("5 hours", "it took 15 hours", False),
        ("Luna", "Lunar eclipse", False),
        ("", "anything", False),
    ],
)
def test_answers_are_found_normalised_on_word_bounds(answer: str, text: str, found: bool) -> None:
    assert answer_in(answer, text) is found


def test_normalising_drops_articles_punctuation_and_case() -> None:
    assert normalise_answer("  The Xfinity Center! ") == "xfinity center"


def test_bad_longmemeval_files_are_dataset_errors(tmp_path: Path) -> None:
    twice = [_question("q-user", "single-session-user", "Luna", {"s": CAT})] * 2
    path = tmp_path / "twice.json"
    path.write_text(json.dumps(twice), encoding="utf-8")
    with pytest.raises(DatasetError, match="the question id 'q-user' is used twice"):
        load_longmemeval(path)
    broken = tmp_path / "broken.json"
    broken.write_text('[{"haystack_sessions": [', encoding="utf-8")
    with pytest.raises(DatasetError, match="is not valid JSON"):
        load_longmemeval(broken)


def test_eval_on_the_shipped_sample_reports_per_question_type(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["eval", "--dataset", str(SAMPLE), "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "LongMemEval by question type: baseline" in text
    for kind in ("single-session-user", "single-session-assistant", "abstention", "all"):
        assert f"\n{kind} " in text
    assert main(["eval", "--dataset", str(SAMPLE), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_type = data["longmemeval"]["variants"]["baseline"]
    assert by_type["all"]["questions"] == 12
    # On the offline scout every question's bundle cites its evidence session.
    assert by_type["all"]["evidence_recall"] == 1.0
    assert by_type["all"]["answer_in_bundle"] >= 0.5
    cases = {case["id"]: case for case in data["longmemeval"]["cases"]}
    assert cases["0862e8bf"]["answer_in_bundle"] is True
    assert cases["f4f1d8a4_abs"]["answer_in_bundle"] is None
    # The answer-bearing turn is quoted for most questions (9 of the 11 that have one).
    assert by_type["all"]["answer_turn_cases"] == 11
    assert by_type["all"]["answer_turn_in_bundle"] >= 9 / 11
    # The package is never written to.
    assert not (SAMPLE.parent / ".supercontext").exists()
