"""A note of words makes no request "enough" (round 4, class 9).

A note that lists the words people ask ("deadline, booking, cost, appointment, room, …")
holds more than half the key terms of nearly any request. Counted term by term, it made
questions the workspace cannot answer "enough" in 11 of 16 bundles (2 of 16 without it).
Coverage comes from facts that say something, as a sentence, a row or a log line does:
the bundle of such a workspace is as sure as it was without the note, in every layout the
list can take, on the offline scout and on the pack.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.harness import Thread
from supercontext_lab.testing import build_workspace

# Questions about a life the sample workspace knows nothing of.
REQUESTS = (
    "What is the deadline for the ferry booking to the islands?",
    "How much did the sourdough course cost?",
    "When is the dentist appointment and which room?",
    "What did the landlord decide about the boiler contract?",
    "Who is the contact for the car insurance claim?",
    "What version of the tax return form do I need?",
    "When does the gym membership payment renew?",
    "What's the status of the kitchen renovation project?",
    "Which venue did we book for the birthday dinner?",
    "What is the password policy for the bank account?",
    "What time is the piano recital on Saturday?",
    "How many tickets did we get for the football match?",
    "What was agreed about the garden fence with the neighbours?",
    "When is the passport renewal due?",
    "What's the plan for the family holiday in August?",
    "Which plumber gave the lowest price for the boiler?",
)
ASKED = sorted(
    {word for request in REQUESTS for word in request.lower().rstrip("?").replace("'s", "").split()}
)
"""Every word the requests say, the function words among them ("what", "the", "for")."""
LAYOUTS = {
    "one line": ", ".join(ASKED) + "\n",
    "bullets": "".join(f"- {word}\n" for word in ASKED),
    "paragraphs": "".join(", ".join(ASKED[i : i + 10]) + "\n\n" for i in range(0, len(ASKED), 10)),
    "table": "| word |\n| --- |\n" + "".join(f"| {word} |\n" for word in ASKED),
}


def _enough(root: Path, design: str) -> int:
    sure = 0
    for request in REQUESTS:
        turn = Thread(str(root), design=design, archive=False).send(request)
        bundle = turn.bundle
        sure += bool(bundle is not None and bundle.has_enough_context)
    return sure


@pytest.mark.parametrize("design", ["scout", "pack"])
def test_a_note_listing_the_words_people_ask_makes_no_request_enough(
    tmp_path: Path, design: str
) -> None:
    """A note listing every word of 16 requests, in four layouts: not one request more is enough"""
    without = _enough(build_workspace(tmp_path / "plain"), design)
    for name, body in LAYOUTS.items():
        root = build_workspace(tmp_path / name.replace(" ", "-"))
        build_workspace(root, {"memory/misc/words.md": f"# Words\n\n{body}"})
        assert _enough(root, design) == without, name
