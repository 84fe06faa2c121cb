"""LongMemEval's official JSON as an evaluation set (SPEC §15).

    from supercontext_lab.eval.longmemeval import load_longmemeval, longmemeval_metrics
    from supercontext_lab.eval import evaluate

    questions = load_longmemeval("longmemeval_s.json")
    report = evaluate(questions.cases, progress=False)
    longmemeval_metrics(questions, report.results)["baseline"]["all"]["answer_in_bundle"]

A LongMemEval file is a list of questions, each with the chat sessions it is asked over
(``haystack_session_ids``, ``haystack_dates``, ``haystack_sessions`` of ``{role,
content}`` turns) and what answers it (``answer``, ``answer_session_ids``). Each question
becomes an :class:`~supercontext_lab.eval.EvalCase`: its ``question`` is the first
message of a new thread, on a workspace that holds its sessions as past conversations.
Those workspaces are built in the lab home (``longmemeval/<file digest>/<question id>/``,
built once and reused while the file is unchanged), never in the package nor beside the
dataset; with a ``workspace`` folder instead, every session of the file is imported into
it (each once) and every question runs there.

Scores, beside the usual ones (SPEC §11, §13):

* ``evidence_recall``: the evidence sessions (``answer_session_ids``) the bundle cites as
  ``(transcript: <session id>)``, over the evidence sessions, micro-averaged (for a
  question with one evidence session: whether the bundle cites it);
* ``answer_turn_in_bundle``: the questions whose bundle quotes an answer-bearing turn (a
  turn the file marks ``has_answer``): its summary holds one of the turn's units (a
  sentence, a list item; of :data:`TURN_UNIT_WORDS` words at least) as a bundle quotes
  it, normalised as answers are, over the questions that have such a turn (abstention
  questions have none);
* ``answer_in_bundle``: the questions whose answer, normalised (case folded, articles,
  punctuation and spacing removed, as SQuAD normalises), is in the normalised summary of
  the bundle, over the questions scored. A preference question's answer is a rubric, not
  a text to find, so it is not scored;
* abstention questions (ids ending ``_abs``) expect ``has_enough_context: false`` (and
  are scored on nothing else); every other question expects ``true``.

:func:`longmemeval_metrics` gives them per variant and per question type (abstention
questions as their own type), with ``all`` for every question.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._hashing import fingerprint
from ..config import lab_home
from ..conversations import Conversation
from ..conversations.formats import parse_longmemeval
from ..conversations.reading import decode_export, load_json, read_bytes
from ..conversations.records import conversation_id
from ..errors import ConversationImportError, DatasetError
from ..sources.memory import INDEX_DIR
from ..sources.memory.index import INDEX_FILE
from ..sources.workspace import Workspace
from .dataset import EvalCase, Expectations
from .longmemeval_question import ABSTENTION, PREFERENCE, LongMemEvalQuestion, LongMemEvalSet
from .longmemeval_scores import (
    TURN_UNIT_WORDS,
    answer_in,
    longmemeval_metrics,
    longmemeval_text,
    normalise_answer,
    question_scores,
)

__all__ = [
    "ABSTENTION",
    "PREFERENCE",
    "TURN_UNIT_WORDS",
    "LongMemEvalQuestion",
    "LongMemEvalSet",
    "answer_in",
    "is_longmemeval",
    "load_longmemeval",
    "longmemeval_metrics",
    "longmemeval_text",
    "normalise_answer",
    "question_scores",
]

_MARKER = "longmemeval-source.sha256"
_SNIFF_BYTES = 1 << 16


def is_longmemeval(path: str | os.PathLike[str]) -> bool:
    """Whether the file ``path`` looks like LongMemEval's JSON (a list of questions with
    ``haystack_sessions``), read from its first 64 KB; never raises."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False
    text = decode_export(head).lstrip("\ufeff \t\r\n")
    return text.startswith("[") and '"haystack_sessions"' in text


def _text(record: Mapping[str, Any], key: str, where: str, source: str) -> str:
    value = record.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"{source}: {where}: '{key}' must be a non-empty string.")
    return value


def _questions(data: Any, source: str) -> list[LongMemEvalQuestion]:
    if not isinstance(data, list):
        raise DatasetError(f"{source}: a LongMemEval file is a JSON list of questions.")
    found: list[LongMemEvalQuestion] = []
    seen: set[str] = set()
    for index, record in enumerate(data, start=1):
        where = f"question {index}"
        if not isinstance(record, Mapping):
            raise DatasetError(f"{source}: {where} must be an object.")
        qid = _text(record, "question_id", where, source).strip()
        if qid in seen:
            raise DatasetError(f"{source}: {where}: the question id {qid!r} is used twice.")
        seen.add(qid)
        where = f"question {qid!r}"
        ids = record.get("haystack_session_ids")
        evidence = record.get("answer_session_ids", [])
        if not isinstance(ids, list) or not isinstance(evidence, list):
            raise DatasetError(
                f"{source}: {where}: haystack_session_ids and answer_session_ids must be lists."
            )
        found.append(
            LongMemEvalQuestion(
                id=qid,
                type=_text(record, "question_type", where, source),
                question=_text(record, "question", where, source),
                answer=_text(record, "answer", where, source),
                date=str(record.get("question_date") or ""),
                sessions=tuple(conversation_id(str(s)) for s in ids),
                evidence=tuple(conversation_id(str(s)) for s in evidence),
                answer_turns=_answer_turns(record.get("haystack_sessions")),
            )
        )
    if not found:
        raise DatasetError(f"{source}: the file holds no question.")
    return found


def _answer_turns(sessions: object) -> tuple[str, ...]:
    """The contents of the turns marked ``has_answer`` (the sessions are checked, and
    bounded, where they are parsed as conversations)."""
    if not isinstance(sessions, list):
        return ()
    return tuple(
        turn["content"]
        for session in sessions
        if isinstance(session, list)
        for turn in session
        if isinstance(turn, Mapping)
        and turn.get("has_answer") is True
        and isinstance(turn.get("content"), str)
    )


def _case(question: LongMemEvalQuestion, workspace: Path) -> EvalCase:
    expect = Expectations(has_enough_context=not question.abstention)
    return EvalCase(id=question.id, message=question.question, workspace=workspace, expect=expect)


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:80] or "question"


def _import(root: Path, conversations: Sequence[Conversation]) -> None:
    from ..conversations import store_for

    workspace = Workspace(root)
    store = store_for(workspace, create=True)
    assert store is not None
    store.import_conversations(conversations, workspace.memory, format="longmemeval")
    workspace.memory.close()
    store.close()


def _built(folder: Path, conversations: Sequence[Conversation]) -> Path:
    """``folder``, a workspace holding ``conversations``: reused when it already holds
    these, else built in a temporary folder and renamed into place."""
    digest = fingerprint([c.digest for c in conversations])
    marker = folder / INDEX_DIR / _MARKER
    try:
        if marker.read_text(encoding="utf-8").strip() == digest:
            return folder
    except OSError:
        pass
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        fresh = staging / "workspace"
        fresh.mkdir()
        _import(fresh, conversations)
        # A memory index is bound to the folder it was built for: the one built here
        # would be rebuilt (empty of turns) at the final path, so it is built there.
        for index_file in (fresh / INDEX_DIR).glob(f"{INDEX_FILE}*"):
            index_file.unlink()
        (fresh / INDEX_DIR / _MARKER).write_text(digest + "\n", encoding="utf-8")
        if folder.exists():
            folder.rename(staging / "previous")
        fresh.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _index(folder)
    return folder


def _index(root: Path) -> None:
    """Index the stored turns of the workspace ``root`` in its memory tree."""
    from ..conversations import store_for

    workspace = Workspace(root)
    store = store_for(workspace)
    if store is not None:
        store.ensure_indexed(workspace.memory)
        store.close()
    workspace.memory.close()


def load_longmemeval(
    path: str | os.PathLike[str], *, workspace: str | os.PathLike[str] | None = None
) -> LongMemEvalSet:
    """The questions of the LongMemEval file ``path`` as evaluation cases (see the module
    docstring for where their sessions go). Raises
    :class:`~supercontext_lab.errors.DatasetError` naming the file for anything it
    cannot read."""
    file = Path(path).expanduser()
    source = str(file)
    try:
        data = load_json(decode_export(read_bytes(file)), source)
        parsed = parse_longmemeval(data, source, file.stem)
    except ConversationImportError as exc:
        raise DatasetError(str(exc)) from None
    questions = _questions(data, source)
    by_id = {c.id: c for c in parsed.conversations}
    result = LongMemEvalSet(source, {q.id: q for q in questions})
    if workspace is not None:
        root = Path(workspace).expanduser().resolve()
        if not root.is_dir():
            raise DatasetError(f"{source}: workspace folder '{root}' does not exist.")
        _import(root, parsed.conversations)
        result.cases = [_case(q, root) for q in questions]
        return result
    base = lab_home() / "longmemeval" / f"{file.stem}-{_file_digest(parsed.conversations)}"
    for question in questions:
        held = [by_id[s] for s in dict.fromkeys(question.sessions) if s in by_id]
        folder = _built(base / _safe_name(question.id), held)
        result.cases.append(_case(question, folder))
    return result


def _file_digest(conversations: Sequence[Conversation]) -> str:
    return fingerprint(sorted(c.digest for c in conversations))[:16]
