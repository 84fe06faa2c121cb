"""LongMemEval's official JSON: every question's haystack sessions, each session once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supercontext_lab.conversations import parse_export
from supercontext_lab.eval import demo_dataset_path

from ..conftest import Ran, assert_refused, stored

SAMPLE = Path(demo_dataset_path()).parent / "public" / "longmemeval_sample.json"


def _question(qid: str, sessions: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": "Where did I meet Sophia?",
        "answer": "a coffee shop",
        "question_date": "2023/05/25 (Thu) 15:35",
        "haystack_dates": ["2023/05/20 (Sat) 02:25"] * len(sessions),
        "haystack_session_ids": list(sessions),
        "haystack_sessions": list(sessions.values()),
        "answer_session_ids": list(sessions)[:1],
    }


SHARED = [
    {"role": "user", "content": "I met Sophia at a coffee shop in the city.", "has_answer": True},
    {"role": "assistant", "content": "That sounds like a lovely place to meet."},
]
OTHER = [{"role": "user", "content": "Remind me to water the plants."}]


def test_sessions_shared_by_questions_are_imported_once() -> None:
    text = json.dumps(
        [_question("q1", {"s1": SHARED, "s2": OTHER}), _question("q2", {"s1": SHARED})]
    )
    parsed = parse_export(text, name="lme")
    assert parsed.format == "longmemeval"
    assert [c.id for c in parsed.conversations] == ["s1", "s2"]
    first = parsed.conversations[0]
    assert first.date == "2023-05-20T02:25"
    assert first.title == "I met Sophia at a coffee shop in the city."
    # The benchmark's answer marks are ground truth: they never reach the workspace.
    assert all("has_answer" not in json.dumps(turn.to_dict()) for turn in first.turns)
    assert parsed.skipped == ()


def test_a_session_repeated_with_other_turns_keeps_the_first_and_says_so() -> None:
    text = json.dumps([_question("q1", {"s1": SHARED}), _question("q2", {"s1": OTHER})])
    parsed = parse_export(text)
    assert parsed.conversations[0].turns[0].content.startswith("I met Sophia")
    assert parsed.skipped == (
        "question 'q2', session 's1': differs from its first copy; the first is kept",
    )


def test_the_shipped_sample_imports_every_session(cli: Callable[..., Ran], workspace: Path) -> None:
    ran = cli("memory", "import", str(SAMPLE), "--workspace", str(workspace), "--json")
    report = ran.json()
    records = json.loads(SAMPLE.read_text(encoding="utf-8"))
    sessions = {sid for record in records for sid in record["haystack_session_ids"]}
    assert set(report["added"]) == sessions
    turns = sum(len(s) for record in records for s in record["haystack_sessions"])
    assert report["turns_indexed"] == turns
    assert {info.source for info in stored(workspace).conversations()} == {"longmemeval"}


def test_bad_longmemeval_files_are_one_line(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    short = _question("q1", {"s1": SHARED})
    short["haystack_dates"] = []
    turn = _question("q2", {"s1": [{"role": "user", "content": "x"}, "oops"]})
    cases = {
        "object.json": ({"question_id": "q"}, "a LongMemEval file must be a list"),
        "lengths.json": ([short], "question 'q1': has 1 session ids, 0 dates and 1 sessions"),
        "turn.json": ([turn], "question 'q2', session 's1': message 2 must be an object"),
        "ids.json": (
            [{**short, "haystack_session_ids": [None], "haystack_dates": ["x"]}],
            "a session id must be a string",
        ),
    }
    for name, (data, needle) in cases.items():
        ran = cli(
            "memory",
            "import",
            str(write(name, data)),
            "--workspace",
            str(workspace),
            "--format",
            "longmemeval",
        )
        assert_refused(ran, name, needle)
