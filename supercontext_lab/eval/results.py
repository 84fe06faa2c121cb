"""Case results: what one scored run is, and the store that keeps them whole.

:class:`CaseResult` is one scored scout run. :class:`ResultStore` owns the
``case_results`` table of the cache file (the response cache owns the ``responses``
table of the same file) and keeps results by the keys of :mod:`.keys`, so an unchanged
case is not even run again; :func:`result_record` is what is stored of a result and
:func:`result_from_record` turns it back into one, rescored.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._bounded import json_loads
from .._erasure import tags_in
from .._hashing import canonical_json
from .._sqlite import SqliteStore
from .._text import escape_undecodable
from ..scout import ScoutRun, StopCause
from .dataset import EvalCase
from .keys import OUTSIDE_TOOLS
from .metrics import RunMeasure
from .scores import CaseScores, score_case

__all__ = [
    "CaseResult",
    "ResultStore",
    "encodable",
    "result_from_record",
    "result_record",
    "storable",
]


def encodable(value: Any) -> Any:
    """``value`` (JSON-shaped: dicts, lists, strings, numbers) with every string's lone
    surrogates escaped (:func:`~supercontext_lab._text.escape_undecodable`): a file name
    that is not UTF-8 is shown as ``caf\\xe9`` by every export instead of failing it."""
    if isinstance(value, str):
        return escape_undecodable(value)
    if isinstance(value, dict):
        return {encodable(key): encodable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [encodable(item) for item in value]
    return value


_CASE_RESULTS = """
    CREATE TABLE IF NOT EXISTS case_results(
        key TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        result TEXT NOT NULL,
        created REAL NOT NULL
    ) WITHOUT ROWID
"""


class ResultStore(SqliteStore):
    """Case results by key, in the SQLite file at ``path`` (the response cache's file)."""

    WHAT: ClassVar[str] = "result store"
    TABLES: ClassVar[Mapping[str, tuple[str, Sequence[str]]]] = {
        "case_results": (_CASE_RESULTS, ("key", "label", "result", "created"))
    }

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored case result (a JSON object) for ``key``, or ``None``."""
        row = self.fetch_one("SELECT result FROM case_results WHERE key = ?", (key,))
        if row is None:
            return None
        try:
            record = json_loads(str(row[0]))
        except ValueError as exc:
            raise self.damaged(key, exc) from exc
        if not isinstance(record, dict):
            raise self.damaged(key, ValueError("not a JSON object"))
        return record

    def put(self, key: str, record: Mapping[str, Any], *, label: str = "") -> None:
        """Store a case result (JSON-ready) under ``key``; ``label`` says what it is, for
        anyone reading the file. It is tagged with the past conversations it quotes (what
        the run gathered holds their turns' keys), so forgetting one erases it."""
        text = canonical_json(dict(record))
        self.write_tagged(
            "INSERT OR REPLACE INTO case_results(key, label, result, created) VALUES (?, ?, ?, ?)",
            (key, label, text, time.time()),
            table="case_results",
            key=key,
            tags=tags_in([text]),
        )

    def __len__(self) -> int:
        row = self.fetch_one("SELECT count(*) FROM case_results")
        return int(row[0]) if row is not None else 0

    def clear(self) -> int:
        """Delete every stored case result; returns how many there were."""
        return self.write("DELETE FROM case_results")


_TEXT_FIELDS = (
    "id",
    "envelope",
    "bundle",
    "problems",
    "trace_summary",
    "model_name",
    "workspace",
    "grounding",
    "gathered",
)


@dataclass(frozen=True)
class CaseResult:
    """One scored scout run (plain data: it crosses process boundaries)."""

    id: str
    variant: str
    repeat: int
    status: str
    envelope: str | None
    bundle: dict[str, Any] | None
    problems: list[str]
    trace_summary: dict[str, Any]
    elapsed_ms: float
    tokens: int
    model_calls: int
    model_name: str
    definition_hash: str
    scores: CaseScores
    cache_hits: int = 0
    cache_misses: int = 0
    workspace: str = ""
    grounding: dict[str, Any] | None = None
    """The run's grounding report (``GroundingReport.to_dict()``), when it had an envelope."""
    gathered: str = ""
    """What the model was given (its prompt and the tool results), for the gathered rate."""
    from_cache: bool = False
    """True when the result came from the result store instead of a run (its latency and
    trace are those of the run that was stored)."""
    turn: dict[str, Any] | None = None
    """An end-to-end run's first turn (``eval --end-to-end``): the design that prepared
    it, the orchestrator's reply, its prompt tokens and the time to the reply."""
    later_turns: list[dict[str, Any]] = field(default_factory=list)
    """The case's follow-ups, end to end, in the same thread: each as :attr:`turn` is,
    with its ``index`` (2 for the second message) and ``topic_change``."""

    def __post_init__(self) -> None:
        # What a run read may hold names that are not UTF-8 (lone surrogates), which no
        # store, file or terminal can write: they are kept escaped from here on.
        for name in _TEXT_FIELDS:
            value = getattr(self, name)
            escaped = encodable(value)
            if escaped != value:
                object.__setattr__(self, name, escaped)

    @property
    def ok(self) -> bool:
        """True when the run produced a valid envelope."""
        return self.scores.valid

    def measure(self) -> RunMeasure:
        return RunMeasure(
            scores=self.scores,
            elapsed_ms=self.elapsed_ms,
            tokens=self.tokens,
            model_calls=self.model_calls,
            envelope_chars=len(self.envelope) if self.envelope is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the CLI's ``cases`` entries are a subset of it)."""
        return {
            "id": self.id,
            "variant": self.variant,
            "repeat": self.repeat,
            "status": self.status,
            "envelope": self.envelope,
            "bundle": self.bundle,
            "problems": list(self.problems),
            "scores": self.scores.to_dict(),
            "trace_summary": dict(self.trace_summary),
            "elapsed_ms": round(self.elapsed_ms, 3),
            "tokens": self.tokens,
            "model_calls": self.model_calls,
            "model": self.model_name,
            "definition_hash": self.definition_hash,
            "cache_hits": self.cache_hits,
            "cache_misses": self.cache_misses,
            "from_cache": self.from_cache,
            **({"turn": dict(self.turn)} if self.turn is not None else {}),
            **({"later_turns": [dict(t) for t in self.later_turns]} if self.later_turns else {}),
        }


def storable(run: ScoutRun) -> bool:
    """Whether a run's result may be reused: it ended the way the same inputs would end it
    again (not on a model error or a timeout, which a rerun may not meet), and it did not
    read the web, whose answers the key cannot see."""
    if run.stopped in (StopCause.MODEL_ERROR, StopCause.TIMEOUT):
        return False
    return not any(
        step.kind == "tool" and step.tool in OUTSIDE_TOOLS and not step.refused
        for step in run.trace
    )


def result_record(result: CaseResult) -> dict[str, Any]:
    """What the result store stores of a run: everything but what the task supplies (id,
    variant, repeat, workspace) and what is recomputed (scores, cache counts)."""
    return {
        "status": result.status,
        "envelope": result.envelope,
        "bundle": result.bundle,
        "problems": list(result.problems),
        "trace_summary": dict(result.trace_summary),
        "elapsed_ms": result.elapsed_ms,
        "tokens": result.tokens,
        "model_calls": result.model_calls,
        "model_name": result.model_name,
        "definition_hash": result.definition_hash,
        "grounding": result.grounding,
        "gathered": result.gathered,
    }


def _typed(record: dict[str, Any], key: str, *kinds: type) -> Any:
    value = record[key]
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        names = " or ".join(kind.__name__ for kind in kinds)
        raise TypeError(f"{key} is {type(value).__name__}, not {names}")
    return value


def result_from_record(
    record: dict[str, Any],
    *,
    case: EvalCase,
    variant: str,
    repeat: int,
    key: str,
    store: ResultStore,
    workspace: str,
) -> CaseResult:
    """A stored run as the result of ``case`` under ``variant``, scored against the case's
    (current) expectations.
    Each model call of the stored run counts as a cache hit: none reached the model."""
    try:
        envelope = _typed(record, "envelope", str, type(None))
        bundle = _typed(record, "bundle", dict, type(None))
        problems = _typed(record, "problems", list)
        model_calls = _typed(record, "model_calls", int)
        result = CaseResult(
            id=case.id,
            variant=variant,
            repeat=repeat,
            status=_typed(record, "status", str),
            envelope=envelope,
            bundle=bundle,
            problems=[str(problem) for problem in problems],
            trace_summary=_typed(record, "trace_summary", dict),
            elapsed_ms=float(_typed(record, "elapsed_ms", int, float)),
            tokens=_typed(record, "tokens", int),
            model_calls=model_calls,
            model_name=_typed(record, "model_name", str),
            definition_hash=_typed(record, "definition_hash", str),
            scores=score_case(
                case.expect,
                envelope,
                bundle,
                grounding=_typed(record, "grounding", dict, type(None)),
                gathered=_typed(record, "gathered", str),
            ),
            grounding=_typed(record, "grounding", dict, type(None)),
            gathered=_typed(record, "gathered", str),
            cache_hits=model_calls,
            cache_misses=0,
            workspace=workspace,
            from_cache=True,
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise store.damaged(key, exc) from exc
    return result
