"""The LongMemEval benchmark's JSON: a list of questions whose ``haystack_session_ids``,
``haystack_dates`` and ``haystack_sessions`` are the chat sessions.

A session shared by several questions is imported once; a later copy that differs from
the first is left out and said so, since two conversations cannot share an id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..reading import ParsedExport
from .base import Collector, as_list, kind_of, short_digest
from .openai_jsonl import messages_turns

__all__ = ["parse_longmemeval"]


def parse_longmemeval(data: Any, source: str, name: str) -> ParsedExport:
    """LongMemEval's JSON: every question's haystack sessions, each session once."""
    collector = Collector(source, "longmemeval")
    questions = as_list(data, collector, "", "a LongMemEval file")
    seen: dict[str, str] = {}
    for index, question in enumerate(questions, start=1):
        where = f"question {index}"
        if not isinstance(question, Mapping):
            raise collector.error(where, f"must be an object, not {kind_of(question)}")
        if isinstance(question.get("question_id"), str):
            where = f"question {question['question_id']!r}"
        ids = as_list(
            question.get("haystack_session_ids"), collector, where, "haystack_session_ids"
        )
        dates = as_list(question.get("haystack_dates"), collector, where, "haystack_dates")
        sessions = as_list(question.get("haystack_sessions"), collector, where, "haystack_sessions")
        if not len(ids) == len(dates) == len(sessions):
            raise collector.error(
                where,
                f"has {len(ids)} session ids, {len(dates)} dates and {len(sessions)} sessions; "
                "they must be as many",
            )
        for session_id, date, session in zip(ids, dates, sessions, strict=True):
            if not isinstance(session_id, str | int) or isinstance(session_id, bool):
                raise collector.error(
                    where, f"a session id must be a string, not {kind_of(session_id)}"
                )
            key = str(session_id)
            at = f"{where}, session {key!r}"
            turns = messages_turns(as_list(session, collector, at, "a session"), collector, at)
            digest = short_digest(*(f"{t.role}:{t.content}" for t in turns))
            if key in seen:
                if seen[key] != digest:
                    collector.skipped.append(
                        f"{at}: differs from its first copy; the first is kept"
                    )
                continue
            seen[key] = digest
            collector.add(at, key, None, turns, date)
    return collector.result()
