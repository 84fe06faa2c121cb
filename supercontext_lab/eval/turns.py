"""End to end, turn by turn: each design's reply metrics per turn of the thread.

A case with ``follow_ups`` is a thread of several messages (:mod:`.dataset`); an
end-to-end evaluation sends them one after another in the same thread, under every
variant (:mod:`.case_task`). The first turn is where a pre-flight that waits on the live
turn (``scout``, ``pack``, ``cached``) prepares; ``prefetch`` sends nothing then, and on
each later turn the pack an earlier turn's lookup built. So the reply metrics are given
per group of turns, each over the same cases for every design:

* ``turn 1``: the first turn of the cases that have follow-ups (the same cases as the
  later rows, so the first-turn lift and the later-turn lift are compared on one set);
* ``turn 2``, ``turn 3``, ...: the turns of that index;
* ``later``: every turn after the first, pooled per case;
* ``later, same topic`` and ``later, topic changed``: the later turns split by the
  follow-up's ``topic_change``, where a pack looked up for an earlier message is stale.

Per group and variant: ``reply_mention_rate`` and ``reply_forbidden_rate`` (micro-averaged,
with Wilson intervals) and ``reply_lift`` over ``cold`` (a paired bootstrap over the
cases: a case's turns of the group are summed into one unit, so the cases are what is
resampled). The arithmetic is :mod:`.stats`'; this module only groups the turns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .end_to_end import COLD
from .report_display import NOT_APPLICABLE, text_table
from .results import CaseResult
from .scores import applicable, ratio
from .stats import CaseCounts, format_interval, paired_bootstrap, wilson

__all__ = ["TurnGroupMetrics", "has_follow_ups", "per_turn", "per_turn_text"]

FIRST = "turn 1"
LATER = "later"
SAME_TOPIC = "later, same topic"
TOPIC_CHANGED = "later, topic changed"

Turn = Mapping[str, Any]


@dataclass(frozen=True)
class TurnGroupMetrics:
    """One variant's reply metrics over one group of turns (see the module docstring)."""

    group: str
    variant: str
    cases: int
    """Cases with a turn in the group."""
    turns: int
    mentions: tuple[int, int]
    """Expected mentions found in the replies, of expected."""
    forbidden: tuple[int, int]
    lift: float
    lift_interval: tuple[float, float]
    lift_counts: tuple[int, int]
    """The variant's mentions on the cases paired with cold's (0 of 0 for cold itself)."""

    @property
    def mention_rate(self) -> float:
        return ratio(*self.mentions)

    @property
    def forbidden_rate(self) -> float:
        return ratio(*self.forbidden, empty=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "variant": self.variant,
            "cases": self.cases,
            "turns": self.turns,
            "reply_mention_rate": self.mention_rate,
            "reply_forbidden_rate": self.forbidden_rate,
            "reply_lift": self.lift,
            "intervals": {
                "reply_mention_rate": list(wilson(*self.mentions)),
                "reply_forbidden_rate": list(wilson(*self.forbidden)),
                "reply_lift": list(self.lift_interval),
            },
            "counts": {
                "reply_mention_rate": list(self.mentions),
                "reply_forbidden_rate": list(self.forbidden),
                "reply_lift": list(self.lift_counts),
            },
        }


def has_follow_ups(results: Sequence[CaseResult]) -> bool:
    """Whether any end-to-end result holds a later turn."""
    return any(result.later_turns for result in results)


def _scores(turn: Turn, kind: str) -> CaseCounts | None:
    scores = turn.get("reply_scores") or {}
    found = scores.get("found" if kind == "mentions" else "forbidden")
    expected = scores.get("expected" if kind == "mentions" else "forbidden_expected")
    if not isinstance(found, int) or not isinstance(expected, int):
        return None
    return CaseCounts(found, expected)


def _groups(result: CaseResult) -> dict[str, list[Turn]]:
    """The case's turns by group (a case with no later turn is in none)."""
    if not result.later_turns or result.turn is None:
        return {}
    groups: dict[str, list[Turn]] = {FIRST: [result.turn]}
    for turn in result.later_turns:
        groups.setdefault(f"turn {turn.get('index')}", []).append(turn)
        groups.setdefault(LATER, []).append(turn)
        topic = TOPIC_CHANGED if turn.get("topic_change") else SAME_TOPIC
        groups.setdefault(topic, []).append(turn)
    return groups


def _summed(turns: Sequence[Turn], kind: str) -> CaseCounts | None:
    """A case's counts over its turns of a group (``None`` when none sets them)."""
    counts = [c for turn in turns if (c := _scores(turn, kind)) is not None]
    if not counts:
        return None
    return CaseCounts(sum(c.found for c in counts), sum(c.expected for c in counts))


def _by_case(results: Sequence[CaseResult]) -> dict[str, dict[str, list[Turn]]]:
    """Per group, per ``"case id#repeat"``, the case's turns in it."""
    out: dict[str, dict[str, list[Turn]]] = {}
    for result in results:
        for group, turns in _groups(result).items():
            out.setdefault(group, {})[f"{result.id}#{result.repeat}"] = turns
    return out


def _order(group: str) -> tuple[int, int, str]:
    if group.startswith("turn "):
        return (0, int(group.split()[1]) if group.split()[1].isdigit() else 0, group)
    return (1, [LATER, SAME_TOPIC, TOPIC_CHANGED].index(group), group)


def _total(per_case: Mapping[str, CaseCounts]) -> tuple[int, int]:
    return sum(c.found for c in per_case.values()), sum(c.expected for c in per_case.values())


def per_turn(results: Sequence[CaseResult], variants: Sequence[str]) -> list[TurnGroupMetrics]:
    """Every variant's reply metrics per group of turns, groups in order (see the module
    docstring); empty when no case has a later turn."""
    grouped = {name: _by_case([r for r in results if r.variant == name]) for name in variants}
    cold = grouped.get(COLD, {})
    names = sorted({group for by_group in grouped.values() for group in by_group}, key=_order)
    rows = []
    for group in names:
        theirs = {
            key: c
            for key, turns in cold.get(group, {}).items()
            if (c := _summed(turns, "mentions")) is not None
        }
        for name in variants:
            cases = grouped[name].get(group, {})
            mine = {k: c for k, t in cases.items() if (c := _summed(t, "mentions")) is not None}
            bad = {k: c for k, t in cases.items() if (c := _summed(t, "forbidden")) is not None}
            shared = [] if name == COLD else [key for key in mine if key in theirs]
            lift, low, high = paired_bootstrap(
                [mine[k] for k in shared], [theirs[k] for k in shared]
            )
            rows.append(
                TurnGroupMetrics(
                    group=group,
                    variant=name,
                    cases=len(cases),
                    turns=sum(len(turns) for turns in cases.values()),
                    mentions=_total(mine),
                    forbidden=_total(bad),
                    lift=lift,
                    lift_interval=(low, high),
                    lift_counts=_total({k: mine[k] for k in shared}),
                )
            )
    return rows


def _cell(value: float, counts: tuple[int, int], interval: tuple[float, float] | None) -> str:
    if not applicable(counts):
        return NOT_APPLICABLE
    text = f"{value:+.3f}" if interval is not None and value != 0 else f"{value:.3f}"
    return f"{text} {format_interval(*interval)}" if interval is not None else text


def per_turn_text(rows: Sequence[TurnGroupMetrics], variants: Sequence[str], note: str = "") -> str:
    """The per-turn tables: the lift over cold with its interval, then the mention and
    forbidden rates, one row per group of turns (empty without rows); ``note`` (the
    warning that the cases are few) under them."""
    if not rows:
        return ""
    by = {(row.group, row.variant): row for row in rows}
    groups = list(dict.fromkeys(row.group for row in rows))

    def table(title: str, cell: Callable[[TurnGroupMetrics], str]) -> str:
        lines = [[title, "cases", *variants]]
        for group in groups:
            cases = max(by[(group, name)].cases for name in variants if (group, name) in by)
            lines.append(
                [group, str(cases)]
                + [cell(by[(group, n)]) if (group, n) in by else NOT_APPLICABLE for n in variants]
            )
        return text_table(lines)

    lift = table(
        "reply_lift by turn",
        lambda r: _cell(r.lift, r.lift_counts, r.lift_interval),
    )
    mention = table("reply_mention_rate by turn", lambda r: _cell(r.mention_rate, r.mentions, None))
    forbidden = table(
        "reply_forbidden_rate by turn", lambda r: _cell(r.forbidden_rate, r.forbidden, None)
    )
    return (
        "Turn by turn (the cases with follow-ups; the lift over cold with its paired "
        "bootstrap 95 % interval over cases)\n"
        f"{lift}\n\n{mention}\n\n{forbidden}" + (f"\n{note}" if note else "")
    )
