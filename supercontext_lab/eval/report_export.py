"""The report as files: JSON for programs, CSV for spreadsheets.

A CSV cell may hold text from the dataset or from a run (case ids, expectations,
problems), so every cell goes through :func:`csv_cell`: text that a spreadsheet would run
as a formula is written as text instead. JSON keeps every character as it is, except the
bytes of a name that are not UTF-8, which are escaped (:func:`~.results.encodable`) as in
every export.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._atomic import write_atomic
from .._text import escape_undecodable
from .report_display import NOT_APPLICABLE
from .results import CaseResult, encodable
from .scores import CaseScores, applicable

if TYPE_CHECKING:
    from .summary import VariantReport

__all__ = [
    "CASE_COLUMNS",
    "case_row",
    "csv_cell",
    "csv_text",
    "json_text",
    "shown_case_row",
    "shown_value",
]

# A cell starting with one of these is a formula to a spreadsheet (CSV injection, OWASP):
# =, +, - and @, a tab, a line break, NUL, and their full-width forms.
_FORMULA_STARTS = (
    "=",
    "+",
    "-",
    "@",
    "\t",
    "\r",
    "\n",
    "\0",
    "\uff1d",
    "\uff0b",
    "\uff0d",
    "\uff20",
)


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: text that a spreadsheet would read as a formula gets a
    leading ``'`` (shown as text, as OWASP advises against CSV injection), and bytes that
    are not UTF-8 are escaped; numbers, booleans and ``None`` are written as they are."""
    if not isinstance(value, str):
        return value
    text = escape_undecodable(value)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_STARTS) else text


CASE_COLUMNS = (
    "id",
    "variant",
    "repeat",
    "status",
    "valid",
    "skill_precision",
    "skill_recall",
    "tool_precision",
    "tool_recall",
    "goal_correct",
    "has_enough_correct",
    "mention_rate",
    "forbidden_mention_rate",
    "grounded_rate",
    "invented_names",
    "gathered_mention_rate",
    "bullet_precision",
    "missed_mentions",
    "forbidden_mentions",
    "missed_skills",
    "unexpected_skills",
    "missed_tools",
    "unexpected_tools",
    "model_calls",
    "tokens",
    "elapsed_ms",
    "envelope_chars",
    "cache_hits",
    "from_cache",
    "problems",
)


def case_row(result: CaseResult) -> dict[str, Any]:
    """One run as a flat row of :data:`CASE_COLUMNS`: scores, misses and costs."""
    scores = result.scores.to_dict()
    row: dict[str, Any] = {
        "id": result.id,
        "variant": result.variant,
        "repeat": result.repeat,
        "status": result.status,
        "model_calls": result.model_calls,
        "tokens": result.tokens,
        "elapsed_ms": round(result.elapsed_ms, 3),
        "envelope_chars": len(result.envelope) if result.envelope is not None else None,
        "cache_hits": result.cache_hits,
        "from_cache": result.from_cache,
        "problems": " | ".join(result.problems),
    }
    for column in CASE_COLUMNS:
        if column not in row:
            value = scores.get(column)
            row[column] = "; ".join(value) if isinstance(value, list) else value
    return {column: row[column] for column in CASE_COLUMNS}


def shown_case_row(row: Mapping[str, Any], scores: CaseScores) -> dict[str, Any]:
    """A :func:`case_row` as a person reads it: each rate of 0 of 0 ``"–"``
    (:func:`~.scores.applicable`) instead of SPEC §11's 1.0 (or 0.0)."""
    counts = scores.rate_counts()
    return {
        column: value if applicable(counts.get(column)) else NOT_APPLICABLE
        for column, value in row.items()
    }


def shown_value(variant: VariantReport, name: str) -> Any:
    """A variant's metric as a person reads it in CSV: ``"–"`` for a rate of 0 of 0
    (:meth:`~.summary.VariantReport.shown`), else its value."""
    value = variant.shown(name)
    return NOT_APPLICABLE if value is None else value


def csv_text(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    path: str | os.PathLike[str] | None = None,
) -> str:
    """``rows`` as CSV text under a header of ``columns``, every cell a :func:`csv_cell`;
    also written to ``path`` when given. Nothing but rows: a spreadsheet or a
    ``csv.DictReader`` would read a note as one more row (the few-cases note is in the
    text, HTML, Markdown and JSON forms)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({column: csv_cell(row[column]) for column in columns} for row in rows)
    text = buffer.getvalue()
    if path is not None:
        write_atomic(path, text)
    return text


def json_text(data: Any, path: str | os.PathLike[str] | None = None, *, indent: int = 2) -> str:
    """``data`` as JSON text (:func:`~.results.encodable`); also written to ``path`` when
    given."""
    text = json.dumps(encodable(data), ensure_ascii=False, indent=indent) + "\n"
    if path is not None:
        write_atomic(path, text)
    return text
