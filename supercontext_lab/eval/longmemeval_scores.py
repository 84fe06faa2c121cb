"""LongMemEval's scores (SPEC §15): per question, then per variant and question type.

See :mod:`.longmemeval` for what each score counts.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._text import one_line
from ..bundle.records import find_attributions
from ..reading.facts import note_sentences
from .longmemeval_question import ABSTENTION, LongMemEvalQuestion, LongMemEvalSet
from .metrics import RunMeasure, aggregate
from .report_display import NOT_APPLICABLE
from .scores import ratio

if TYPE_CHECKING:
    from .results import CaseResult

__all__ = [
    "TURN_UNIT_WORDS",
    "answer_in",
    "longmemeval_metrics",
    "longmemeval_text",
    "normalise_answer",
    "question_scores",
]

TURN_UNIT_WORDS = 4
"""The fewest words a unit of an answer-bearing turn must have to count as quoting it."""
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION = str.maketrans(dict.fromkeys(string.punctuation + "‘’“”–—…", " "))


def normalise_answer(text: str) -> str:
    """``text`` as answers are compared: case folded, punctuation and the articles a, an
    and the removed, spacing collapsed."""
    folded = text.casefold().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", folded).split())


def answer_in(answer: str, text: str) -> bool:
    """Whether the normalised ``answer`` is in the normalised ``text``, on word bounds."""
    wanted = normalise_answer(answer)
    return bool(wanted) and f" {wanted} " in f" {normalise_answer(text)} "


def _cited(bundle: Mapping[str, Any] | None) -> set[str]:
    summary = str((bundle or {}).get("summary") or "")
    return {
        a.source.ref
        for a in find_attributions(summary)
        if a.source.kind == "transcript" and a.source.ref
    }


def _quotes_a_turn(turns: Sequence[str], summary: str) -> bool | None:
    """Whether ``summary`` quotes a unit of one of ``turns`` (``None`` when none)."""
    if not turns:
        return None
    held = f" {normalise_answer(summary)} "
    for turn in turns:
        for unit in note_sentences(turn):
            wanted = normalise_answer(unit)
            if len(wanted.split()) >= TURN_UNIT_WORDS and f" {wanted} " in held:
                return True
    return False


def question_scores(question: LongMemEvalQuestion, result: CaseResult) -> dict[str, Any]:
    """One run of ``question`` scored: the evidence sessions it cites and whether its
    summary holds the answer (``None`` for what the question is not scored on)."""
    summary = str((result.bundle or {}).get("summary") or "")
    cited = _cited(result.bundle)
    evidence = None if question.abstention else sorted(set(question.evidence) & cited)
    return {
        "id": question.id,
        "type": question.group,
        "variant": result.variant,
        "repeat": result.repeat,
        "evidence_cited": evidence,
        "evidence_expected": None if question.abstention else len(set(question.evidence)),
        "answer_in_bundle": answer_in(question.answer, summary) if question.scores_answer else None,
        "answer_turn_in_bundle": _quotes_a_turn(question.answer_turns, summary),
        "has_enough_context": (result.bundle or {}).get("has_enough_context"),
    }


def _group_metrics(
    rows: Sequence[dict[str, Any]], measures: Sequence[RunMeasure]
) -> dict[str, Any]:
    evidence = [r for r in rows if r["evidence_expected"] is not None]
    answers = [r for r in rows if r["answer_in_bundle"] is not None]
    turns = [r for r in rows if r["answer_turn_in_bundle"] is not None]
    base = aggregate(list(measures))
    return {
        "questions": len(rows),
        "evidence_recall": ratio(
            sum(len(r["evidence_cited"]) for r in evidence),
            sum(r["evidence_expected"] for r in evidence),
        ),
        "evidence_cases": len(evidence),
        "answer_in_bundle": ratio(sum(1 for r in answers if r["answer_in_bundle"]), len(answers)),
        "answer_cases": len(answers),
        "answer_turn_in_bundle": ratio(
            sum(1 for r in turns if r["answer_turn_in_bundle"]), len(turns)
        ),
        "answer_turn_cases": len(turns),
        **{name: base[name] for name in _BASE_METRICS},
    }


_BASE_METRICS = ("valid_rate", "has_enough_accuracy", "grounded_rate", "tokens_mean")


def longmemeval_metrics(
    questions: LongMemEvalSet, results: Sequence[CaseResult]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per variant, per question type (and ``all``): ``evidence_recall``,
    ``answer_in_bundle`` and the usual ``valid_rate``, ``has_enough_accuracy``,
    ``grounded_rate`` and ``tokens_mean``, with how many questions each counts."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    variants = list(dict.fromkeys(r.variant for r in results))
    for variant in variants:
        rows: dict[str, list[dict[str, Any]]] = {}
        measures: dict[str, list[RunMeasure]] = {}
        for result in results:
            question = questions.questions.get(result.id)
            if result.variant != variant or question is None:
                continue
            for group in (question.group, "all"):
                rows.setdefault(group, []).append(question_scores(question, result))
                measures.setdefault(group, []).append(result.measure())
        order = sorted(g for g in rows if g not in ("all", ABSTENTION))
        order += [g for g in (ABSTENTION, "all") if g in rows]
        out[variant] = {group: _group_metrics(rows[group], measures[group]) for group in order}
    return out


def longmemeval_text(metrics: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """The per-type metrics as aligned plain text, one table per variant."""
    columns = (
        "questions",
        "evidence_recall",
        "answer_in_bundle",
        "answer_turn_in_bundle",
        "has_enough_accuracy",
    )
    counts = {
        "evidence_recall": "evidence_cases",
        "answer_in_bundle": "answer_cases",
        "answer_turn_in_bundle": "answer_turn_cases",
    }
    blocks = []
    for variant, groups in metrics.items():
        rows: list[tuple[str, ...]] = [("type", *columns)]
        for group, values in groups.items():
            cells = [group]
            for column in columns:
                value = values[column]
                if column == "questions":
                    cells.append(str(value))
                elif column in counts and values[counts[column]] == 0:
                    # No question of this type is scored on it: the rate's SPEC value (1.0
                    # for 0 of 0) is no measurement.
                    cells.append(NOT_APPLICABLE)
                else:
                    cells.append(f"{value:.3f}")
            rows.append(tuple(cells))
        widths = [max(len(row[i]) for row in rows) for i in range(len(columns) + 1)]
        lines = [f"LongMemEval by question type: {one_line(variant, 60)}"]
        for number, row in enumerate(rows):
            lines.append(
                "  ".join(
                    [row[0].ljust(widths[0])]
                    + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
                ).rstrip()
            )
            if number == 0:
                lines.append("  ".join("-" * width for width in widths))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
