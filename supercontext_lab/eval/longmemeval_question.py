"""A LongMemEval question as its case is scored, and the set of a file's questions
(:mod:`.longmemeval` reads them, :mod:`.longmemeval_scores` scores them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .dataset import EvalCase

__all__ = ["ABSTENTION", "PREFERENCE", "LongMemEvalQuestion", "LongMemEvalSet"]

ABSTENTION = "abstention"
"""The type abstention questions (ids ending ``_abs``) are reported under."""
PREFERENCE = "single-session-preference"


@dataclass(frozen=True)
class LongMemEvalQuestion:
    """One LongMemEval question, as its case is scored."""

    id: str
    type: str
    question: str
    answer: str
    date: str
    sessions: tuple[str, ...]
    """Its haystack sessions, as conversation ids."""
    evidence: tuple[str, ...]
    """The sessions holding the answer, as conversation ids."""
    answer_turns: tuple[str, ...] = ()
    """The texts of the turns the file marks ``has_answer``: the evidence, turn by turn."""

    @property
    def abstention(self) -> bool:
        """Whether the question cannot be answered from its sessions (its id ends ``_abs``)."""
        return self.id.endswith("_abs")

    @property
    def group(self) -> str:
        """The type it is reported under: ``abstention`` or its ``question_type``."""
        return ABSTENTION if self.abstention else self.type

    @property
    def scores_answer(self) -> bool:
        return not self.abstention and self.type != PREFERENCE


@dataclass
class LongMemEvalSet:
    """The questions of a LongMemEval file and their evaluation cases."""

    source: str
    questions: dict[str, LongMemEvalQuestion] = field(default_factory=dict)
    cases: list[EvalCase] = field(default_factory=list)
