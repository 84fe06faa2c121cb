"""Scoring one run's bundle against its case's expectations (SPEC §11).

:func:`score_case` turns one envelope into :class:`CaseScores`: counts per expectation
the case sets, and the misses in words. The per-variant metrics these counts add up to
are :mod:`.metrics`; the rules of one run are here:

* mentions match case-insensitively anywhere in the envelope;
* a summary bullet (as :attr:`~supercontext_lab.bundle.ContextBundle.bullets` reads
  them) is on topic when it holds one of the expected mentions, matched the same way, or
  cites one of the case's expected ``sources``; counted on the cases that set mentions,
  like the mention rate;
* skill ids and tool names are compared case-insensitively, each counted once per run
  and reported as first spelt;
* ``goal_correct`` compares ``has_goal`` with ``proposed_goal is not None``;
* a run without a valid envelope recommends nothing, mentions nothing and is wrong for
  goal and has-enough (it gave no answer to be right with);
* the grounding check's counts (SPEC §13) are kept as they are, and the expected
  mentions are also looked for in what the model was given (its prompt and every tool
  result);
* an empty ratio (0/0) counts as 1.0, except the forbidden mentions' (0.0), as SPEC §11
  says: that is the value every API and the JSON ``metrics`` return. A person reading a
  report is told otherwise: a rate of 0 of 0 is not applicable (:func:`applicable`), and
  every renderer (text, HTML, Markdown, the widget, CSV) shows it as "–", with no interval,
  and leaves it out of the spread across repeats and of the best value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..bundle.records import Source, find_attributions, split_summary
from .dataset import Expectations

__all__ = ["CaseScores", "applicable", "ratio", "score_case"]


def ratio(numerator: int, denominator: int, *, empty: float = 1.0) -> float:
    """``numerator / denominator``, or ``empty`` when the denominator is 0 (SPEC §11: 1.0,
    and 0.0 for ``forbidden_mention_rate``). Reports show such a rate as "–"
    (:func:`applicable`)."""
    return numerator / denominator if denominator else empty


def applicable(counts: tuple[int, int] | None) -> bool:
    """Whether a rate of ``counts`` (``(k, n)``: k of n) means anything to a reader; the
    one rule every renderer follows. A rate of 0 of 0 does not: its value is SPEC §11's
    (1.0, or 0.0 for forbidden mentions), but shown as 1.000 [0.000, 1.000] a design that
    recommends no tool would read as perfectly precise. Renderers show it as "–" with no
    interval and leave it out of the spread across repeats and of the best value. A value
    with no counts (``None``: not a ratio, or a rate with no counts kept) is shown as it
    is."""
    return counts is None or counts[1] != 0


def _norm(items: Iterable[str]) -> list[str]:
    """The items trimmed, without empty ones and case-insensitive repeats, spelt as first
    written: matching ignores case, but a reader sees "2Dt", not "2dt"."""
    seen: set[str] = set()
    kept: list[str] = []
    for item in items:
        shown = item.strip()
        key = shown.casefold()
        if key and key not in seen:
            seen.add(key)
            kept.append(shown)
    return kept


@dataclass(frozen=True)
class CaseScores:
    """How one run's bundle fared against its case's expectations.

    Counts are ``None`` when the case does not set that expectation.
    """

    valid: bool
    skills_matched: int | None = None
    skills_recommended: int | None = None
    skills_expected: int | None = None
    tools_matched: int | None = None
    tools_recommended: int | None = None
    tools_expected: int | None = None
    goal_correct: bool | None = None
    has_enough_correct: bool | None = None
    mentions_found: int | None = None
    mentions_expected: int | None = None
    forbidden_found: int | None = None
    forbidden_expected: int | None = None
    missed_skills: tuple[str, ...] = ()
    unexpected_skills: tuple[str, ...] = ()
    missed_tools: tuple[str, ...] = ()
    unexpected_tools: tuple[str, ...] = ()
    missed_mentions: tuple[str, ...] = ()
    forbidden_mentions: tuple[str, ...] = ()
    bullets: int | None = None
    """Bullets the grounding check read (``None`` when the model wrote no envelope)."""
    bullets_supported: int | None = None
    invented_names: int = 0
    gathered_found: int | None = None
    """Expected mentions present in what the model was given."""
    summary_bullets: int | None = None
    """The summary's bullets (list items), on a case that sets mentions."""
    bullets_on_topic: int | None = None
    """Of :attr:`summary_bullets`, those holding an expected mention or citing an expected
    source."""

    def rate_counts(self) -> dict[str, tuple[int, int]]:
        """Each per-case rate of :meth:`to_dict` the case scores, as the counts it is the
        ratio of, ``(k, n)``: what a renderer asks :func:`applicable`."""
        pairs = {
            "skill_precision": (self.skills_matched, self.skills_recommended),
            "skill_recall": (self.skills_matched, self.skills_expected),
            "tool_precision": (self.tools_matched, self.tools_recommended),
            "tool_recall": (self.tools_matched, self.tools_expected),
            "mention_rate": (self.mentions_found, self.mentions_expected),
            "forbidden_mention_rate": (self.forbidden_found, self.forbidden_expected),
            "grounded_rate": (self.bullets_supported, self.bullets),
            "gathered_mention_rate": (self.gathered_found, self.mentions_expected),
            "bullet_precision": (self.bullets_on_topic, self.summary_bullets),
        }
        return {name: (k, n) for name, (k, n) in pairs.items() if k is not None and n is not None}

    def to_dict(self) -> dict[str, Any]:
        """Per-case rates (``None`` when not scored; a rate of 0 of 0 as SPEC §11 says)
        followed by the raw counts and misses."""
        out: dict[str, Any] = {
            "valid": self.valid,
            "skill_precision": _opt_ratio(self.skills_matched, self.skills_recommended),
            "skill_recall": _opt_ratio(self.skills_matched, self.skills_expected),
            "tool_precision": _opt_ratio(self.tools_matched, self.tools_recommended),
            "tool_recall": _opt_ratio(self.tools_matched, self.tools_expected),
            "goal_correct": self.goal_correct,
            "has_enough_correct": self.has_enough_correct,
            "mention_rate": _opt_ratio(self.mentions_found, self.mentions_expected),
            "forbidden_mention_rate": _opt_ratio(
                self.forbidden_found, self.forbidden_expected, empty=0.0
            ),
            "grounded_rate": _opt_ratio(self.bullets_supported, self.bullets),
            "gathered_mention_rate": _opt_ratio(self.gathered_found, self.mentions_expected),
            "bullet_precision": _opt_ratio(self.bullets_on_topic, self.summary_bullets),
        }
        for key, value in asdict(self).items():
            if key not in out:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseScores:
        """Rebuild scores from :meth:`to_dict` output."""
        names = cls.__dataclass_fields__
        values: dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value
            for key, value in data.items()
            if key in names
        }
        return cls(**values)


def _opt_ratio(
    numerator: int | None, denominator: int | None, *, empty: float = 1.0
) -> float | None:
    """A per-case rate: ``None`` when the case does not set the expectation, else
    :func:`ratio`."""
    if numerator is None or denominator is None:
        return None
    return ratio(numerator, denominator, empty=empty)


def _match(
    recommended: Sequence[str], expected: Sequence[str]
) -> tuple[int, int, int, tuple[str, ...], tuple[str, ...]]:
    got = _norm(recommended)
    want = _norm(expected)
    got_keys = {item.casefold() for item in got}
    want_keys = {item.casefold() for item in want}
    matched = [item for item in got if item.casefold() in want_keys]
    return (
        len(matched),
        len(got),
        len(want),
        tuple(item for item in want if item.casefold() not in got_keys),
        tuple(item for item in got if item.casefold() not in want_keys),
    )


def _bullets(bundle: Mapping[str, Any] | None) -> list[tuple[str, frozenset[Source]]]:
    """The summary's bullets, case folded, with the sources each cites: the items
    :func:`~supercontext_lab.bundle.records.split_summary` reads as list items (what
    ``ContextBundle.bullets`` gives), their continuation lines joined."""
    summary = str((bundle or {}).get("summary") or "")
    return [
        (line.text.casefold(), frozenset(a.source for a in line.attributions))
        for line in split_summary(summary)
        if line.bullet
    ]


def _sources(labels: Sequence[str] | None) -> frozenset[Source]:
    """The expected sources, read as a bundle's attributions are."""
    return frozenset(a.source for label in labels or () for a in find_attributions(f"({label})"))


def score_case(
    expect: Expectations,
    envelope: str | None,
    bundle: Mapping[str, Any] | None,
    *,
    grounding: Mapping[str, Any] | None = None,
    gathered: str | None = None,
) -> CaseScores:
    """Score one run: ``bundle`` is ``ContextBundle.to_dict()`` (``None`` when invalid),
    ``grounding`` the run's ``GroundingReport.to_dict()`` and ``gathered`` the text the
    model was given (both ``None`` when unknown)."""
    valid = envelope is not None and bundle is not None
    values: dict[str, Any] = {"valid": valid}
    if grounding is not None:
        values.update(
            bullets=int(grounding.get("checked", 0)),
            bullets_supported=int(grounding.get("grounded", 0)),
            invented_names=int(grounding.get("invented_names", 0)),
        )
    for kind, section, key, expected in (
        ("skills", "recommended_skills", "skill", expect.skills),
        ("tools", "recommended_tool_calls", "tool", expect.tools),
    ):
        if expected is None:
            continue
        names = [str(item.get(key, "")) for item in (bundle or {}).get(section, [])]
        matched, got, want, missed, extra = _match(names, expected)
        values.update(
            {
                f"{kind}_matched": matched,
                f"{kind}_recommended": got,
                f"{kind}_expected": want,
                f"missed_{kind}": missed,
                f"unexpected_{kind}": extra,
            }
        )
    if expect.has_goal is not None:
        values["goal_correct"] = valid and (
            expect.has_goal == ((bundle or {}).get("proposed_goal") is not None)
        )
    if expect.has_enough_context is not None:
        values["has_enough_correct"] = valid and (
            (bundle or {}).get("has_enough_context") is expect.has_enough_context
        )
    text = (envelope or "").casefold()
    if expect.mentions is not None:
        wanted = _norm(expect.mentions)
        missed = tuple(item for item in wanted if item.casefold() not in text)
        values.update(
            mentions_found=len(wanted) - len(missed),
            mentions_expected=len(wanted),
            missed_mentions=missed,
        )
        bullets = _bullets(bundle)
        answering = _sources(expect.sources)
        values.update(
            summary_bullets=len(bullets),
            bullets_on_topic=sum(
                1
                for bullet, cited in bullets
                if any(item.casefold() in bullet for item in wanted)
                or not cited.isdisjoint(answering)
            ),
        )
        if gathered is not None:
            given = gathered.casefold()
            values["gathered_found"] = sum(1 for item in wanted if item.casefold() in given)
    if expect.must_not_mention is not None:
        banned = _norm(expect.must_not_mention)
        seen = tuple(item for item in banned if item.casefold() in text)
        values.update(
            forbidden_found=len(seen), forbidden_expected=len(banned), forbidden_mentions=seen
        )
    return CaseScores(**values)
