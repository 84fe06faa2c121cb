"""Threads of several messages end to end: each follow-up sent in the same thread, and the
reply metrics of every design per turn, over cold, on the same cases."""

from __future__ import annotations

from typing import Any

import pytest

from supercontext_lab.eval import EvalCase, Expectations, FollowUp, evaluate
from supercontext_lab.eval.dataset import Expectations as Expect
from supercontext_lab.eval.results import CaseResult
from supercontext_lab.eval.scores import score_case
from supercontext_lab.eval.turns import has_follow_ups, per_turn, per_turn_text
from supercontext_lab.eval.variants import design_variant

KERNEL = EvalCase(
    id="kernel",
    message="What did we decide about the dispersal kernel?",
    expect=Expectations(mentions=("2Dt",)),
    follow_ups=(
        FollowUp(
            "At how many sites did it fit the long-distance tail?",
            Expectations(mentions=("34 of the 40 sites",)),
        ),
        FollowUp(
            "What was my summer holiday idea for 2027?",
            Expectations(mentions=("Lofoten",), must_not_mention=("2Dt",)),
            topic_change=True,
        ),
    ),
)
SINGLE = EvalCase(
    id="deadline",
    message="When is the grant renewal due?",
    expect=Expectations(mentions=("2026-12-15",)),
)


@pytest.fixture(scope="module")
def report() -> Any:
    return evaluate(
        [KERNEL, SINGLE],
        [design_variant("pack"), design_variant("prefetch")],
        end_to_end=True,
        cache=False,
        progress=False,
    )


def test_the_follow_ups_are_sent_in_the_first_messages_thread(report: Any) -> None:
    pack, prefetch = report.result("kernel", "pack"), report.result("kernel", "prefetch")
    assert [t["index"] for t in pack.later_turns] == [2, 3]
    assert [t["topic_change"] for t in pack.later_turns] == [False, True]
    # The pack prepared the first turn; its later turns carry it in the thread, unprepared.
    assert pack.turn["prepared_by"] == "pack"
    assert [t["reason"] for t in pack.later_turns] == ["not_first_turn"] * 2
    # Prefetch sends nothing first, then each turn the pack of the message before it.
    assert prefetch.turn["reason"] == "no_earlier_lookup"
    assert [t["prepared_by"] for t in prefetch.later_turns] == ["prefetch"] * 2
    second = prefetch.later_turns[0]
    assert second["reply_scores"] == {
        "found": 1,
        "expected": 1,
        "forbidden": None,
        "forbidden_expected": None,
    }
    # On another topic the pack of the kernel question is stale, and it shows.
    assert prefetch.later_turns[1]["reply_scores"]["forbidden"] == 1
    assert report.result("deadline", "prefetch").later_turns == []
    assert report.to_dict()["cases"][0]["later_turns"][0]["index"] == 2


def test_the_first_turn_metrics_stay_those_of_the_first_turn(report: Any) -> None:
    assert report.metrics("pack")["reply_cases"] == 2
    assert (
        report.metrics("prefetch")["reply_mention_rate"]
        == report.metrics("cold")["reply_mention_rate"]
    )


def test_each_design_gets_its_lift_per_turn_over_cold_on_the_same_cases(report: Any) -> None:
    rows = {(row.group, row.variant): row for row in report.per_turn()}
    groups = list(dict.fromkeys(row.group for row in report.per_turn()))
    assert groups == [
        "turn 1",
        "turn 2",
        "turn 3",
        "later",
        "later, same topic",
        "later, topic changed",
    ]
    # Only the case with follow-ups, in every row and for every design.
    assert {row.cases for row in report.per_turn()} == {1}
    first, later = rows[("turn 1", "prefetch")], rows[("later", "prefetch")]
    assert (first.lift, first.mentions) == (0.0, (0, 1))
    assert rows[("turn 1", "pack")].lift == 1.0
    assert rows[("later, same topic", "prefetch")].lift == 1.0
    assert later.turns == 2 and later.mentions == (1, 2)
    assert rows[("later, topic changed", "prefetch")].forbidden == (1, 1)
    # Cold is not paired with itself.
    assert rows[("later", "cold")].lift_counts == (0, 0)
    text = report.per_turn_text()
    assert "reply_lift by turn" in text and "later, topic changed" in text
    assert text.splitlines()[1].split() == [
        "reply_lift",
        "by",
        "turn",
        "cases",
        "pack",
        "prefetch",
        "cold",
    ]
    data = report.to_dict()["per_turn"]
    assert {"group", "variant", "reply_lift", "intervals", "counts"} <= set(data[0])


def test_an_evaluation_of_bundles_sends_no_follow_up() -> None:
    report = evaluate([KERNEL], [design_variant("pack")], cache=False, progress=False)
    assert report.results[0].later_turns == [] and report.per_turn() == []
    assert report.per_turn_text() == "" and "per_turn" not in report.to_dict()


# --------------------------------------------------------------------------- the grouping


def _turn(found: int | None, expected: int | None, **extra: Any) -> dict[str, Any]:
    scores = {"found": found, "expected": expected, "forbidden": None, "forbidden_expected": None}
    return {"reply_scores": scores, **extra}


def _result(
    case: str, variant: str, first: dict[str, Any], later: list[dict[str, Any]]
) -> CaseResult:
    return CaseResult(
        id=case,
        variant=variant,
        repeat=0,
        status="prepared",
        envelope=None,
        bundle=None,
        problems=[],
        trace_summary={},
        elapsed_ms=0.0,
        tokens=0,
        model_calls=0,
        model_name=variant,
        definition_hash="",
        scores=score_case(Expect(), None, None),
        turn=first,
        later_turns=later,
    )


def test_later_turns_are_pooled_per_case_and_paired_only_where_cold_ran() -> None:
    results = [
        _result("a", "x", _turn(1, 1), [_turn(1, 2, index=2), _turn(2, 2, index=3)]),
        _result("a", "cold", _turn(0, 1), [_turn(0, 2, index=2), _turn(1, 2, index=3)]),
        # Case b has no cold run: it counts in x's rates but not in its lift.
        _result("b", "x", _turn(1, 1), [_turn(0, 1, index=2)]),
        # A case without follow-ups is in no group.
        _result("c", "x", _turn(1, 1), []),
        _result("c", "cold", _turn(0, 1), []),
    ]
    assert has_follow_ups(results)
    rows = {(r.group, r.variant): r for r in per_turn(results, ["x", "cold"])}
    later = rows[("later", "x")]
    assert (later.cases, later.turns, later.mentions) == (2, 3, (3, 5))
    assert later.lift_counts == (3, 4)
    assert later.lift == pytest.approx(3 / 4 - 1 / 4)
    assert rows[("turn 1", "x")].cases == 2
    # No follow-up sets must_not_mention: the forbidden rate does not apply ("–").
    assert rows[("later", "x")].forbidden == (0, 0)
    assert "–" in per_turn_text(list(rows.values()), ["x", "cold"])
    assert per_turn([results[-1]], ["x", "cold"]) == []
