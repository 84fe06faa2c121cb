"""What the grounding check reports: its items, lines, badge and dictionary."""

from __future__ import annotations

from supercontext_lab.agents.definition import GroundingMode
from supercontext_lab.scout.grounding_report import ClaimCheck, Dropped, GroundingReport

GOOD = ClaimCheck("The kernel is 2Dt (memory)", ("memory",), 1.0, None)
BAD = ClaimCheck("Bananas (memory)", ("memory",), 0.0, "it states nothing")


def _report(mode: GroundingMode, *, emptied: bool = False) -> GroundingReport:
    return GroundingReport(
        mode=mode,
        claims=(GOOD, BAD),
        dropped=(
            Dropped("bullet", BAD.text, "it states nothing"),
            Dropped("has_enough_context", "true", "no summary line is supported"),
        ),
        corrected=("skill 'kit': installed set to false",),
        envelope="",
        emptied=emptied,
        invented=0,
        elapsed_ms=1.23456,
    )


def test_a_dropped_item_is_told_by_the_mode() -> None:
    item = Dropped("tool", "made_up", "not in the orchestrator's tool catalogue")
    assert item.describe("drop") == (
        "grounding: dropped tool 'made_up': not in the orchestrator's tool catalogue"
    )
    assert item.describe("mark").startswith("grounding: flagged tool 'made_up'")
    enough = Dropped("has_enough_context", "true", "why")
    assert enough.describe("drop") == "grounding: has_enough_context set to false: why"
    assert enough.describe("mark") == "grounding: has_enough_context flagged: why"


def test_the_report_counts_and_lists_what_it_found() -> None:
    report = _report("drop", emptied=True)
    assert (report.grounded, report.checked) == (1, 2)
    assert report.badge == "grounded 1 of 2"
    assert report.changed
    assert report.problems() == [
        "grounding: dropped bullet 'Bananas (memory)': it states nothing",
        "grounding: has_enough_context set to false: no summary line is supported",
        "grounding: skill 'kit': installed set to false",
        "grounding: nothing in the bundle was grounded, so the turn starts cold",
    ]


def test_off_lists_nothing_and_changes_nothing() -> None:
    report = _report("off")
    assert report.problems() == [] and not report.changed
    assert report.badge == "grounded 1 of 2"


def test_the_report_as_a_dictionary() -> None:
    found = _report("mark").to_dict()
    assert found["grounded"] == 1 and found["checked"] == 2
    assert found["elapsed_ms"] == 1.235
    assert found["claims"][1] == {
        "text": "Bananas (memory)",
        "sources": ["memory"],
        "support": 0.0,
        "supported": False,
        "why": "it states nothing",
    }
    assert found["dropped"][0] == {"kind": "bullet", "item": BAD.text, "why": "it states nothing"}
