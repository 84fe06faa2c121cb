"""Hostile notes are read as documents in linear time.

Every note a run quotes goes through ``reading.document.read_document``. markdown-it-py's
own inline parser reads runs of brackets at about 60 KB/s, which a hostile note of a
megabyte would turn into many seconds of a pre-flight; the document reader parses only the
block structure and reads inline text with bounded patterns. Each hostile class of a
megabyte must be read in under two seconds, and in no more than a generous multiple of a
harmless note of the same size (run in a child process with a time limit, so a quadratic
reader fails the test instead of holding the suite).
"""

from __future__ import annotations

import pytest

from .support import timed_in_child

SIZE = 1_000_000
ABSOLUTE_S = 2.0
RELATIVE = 10.0

HOSTILE = {
    "brackets": "[",
    "images": "![",
    "emphasis": "**a ",
    "link openers": "[a](",
    "backticks": "`a",
    "quote markers": "> ",
    "list markers": "- ",
    "table pipes": "| ",
    "headers": "From: x\n",
    "wrote lines": "On Mon, x wrote:\n",
    "chat lines": "[10:24] a: b\n",
    "chat lines with the time after the name": "Sam [10:24]: b\n",
    "a chat app's dated lines": "[11/05/2026, 08:47] Ann Lee: b\n",
    "dated stamps on one line": "[1/1 1:11]   ",
    "a chat app's lines stamped time first": "[08:47, 11/05/2026] Ann Lee: b\n",
    "time-first stamps on one line": "[1:11, 1/1   ",
}

_CHILD = """
import json, sys, time
from supercontext_lab.reading.document import read_document
piece, size = sys.argv[1], int(sys.argv[2])
bad = (piece * (size // len(piece) + 1))[:size]
good = ("The venue is Hall B. Sam booked it on 3 March.\\n\\n" * (size // 48 + 1))[:size]
times = []
for text in (bad, good):
    read_document.cache_clear()
    started = time.process_time()
    read_document(text)
    times.append(time.process_time() - started)
print(json.dumps(times))
"""


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_megabyte_note_is_read_in_linear_time(name: str) -> None:
    piece = HOSTILE[name].encode().decode("unicode_escape")
    bad, good = timed_in_child(_CHILD, piece, str(SIZE), what=f"reading {name}", timeout=60)
    assert bad < ABSOLUTE_S, f"{name}: {bad:.2f} s"
    assert bad <= max(RELATIVE * good, 0.2), f"{name}: {bad:.2f} s against {good:.2f} s"


# What a note's passages are scored by beyond its units: a reply's subject told from the
# thread's first, headings that may name a section, turns that may settle a thread (each
# in the thread's time). A megabyte of each is scored against a request that touches them.
PASSAGE_HOSTILE = {
    "reply subjects": "From: a\nSent: Mon\nSubject: RE: Fwd: RE: topic\n\nbody.\n\n",
    "section headings": "## Root cause\n\nplain line.\n\n",
    "settling turns": "[10:24] sam: not final, no decision, correction instead\n",
    # Settling turns off the request's words that name what the turns before them name.
    "settling turns naming earlier ones": (
        "[11/05 09:10] Ben Ode: the topic is Harbour Room\n"
        "[11/05 09:15] Ann Lee: correction: Harbour Room\n"
    ),
    "quoted replies": "> > > From: a\n> > > Sent: Mon\n> > >\n> > > final: instead\n\n",
    # One e-mail message that opens with a correction, its sentences all on the request.
    "a correcting message of many sentences": "The topic is final instead. ",
}

_PASSAGES_CHILD = """
import json, sys, time
from supercontext_lab.reading.document import read_document
from supercontext_lab.reading.passages import passages
from supercontext_lab.reading.relevance import request_terms
piece, size = sys.argv[1], int(sys.argv[2])
bad = "# Checkout slowness\\n\\nFrom: a\\nSent: Mon\\n\\nCorrection: " + (piece * (size // len(piece) + 1))[:size]
good = ("The venue is Hall B. Sam booked it on 3 March.\\n\\n" * (size // 48 + 1))[:size]
request = request_terms("What caused the checkout slowness, and is the topic final?")
times = []
for text in (bad, good):
    read_document.cache_clear()
    started = time.process_time()
    passages(text, request, limit=4)
    times.append(time.process_time() - started)
print(json.dumps(times))
"""


@pytest.mark.parametrize("name", sorted(PASSAGE_HOSTILE))
def test_a_hostile_megabyte_note_is_scored_in_linear_time(name: str) -> None:
    piece = PASSAGE_HOSTILE[name]
    bad, good = timed_in_child(
        _PASSAGES_CHILD, piece, str(SIZE), what=f"scoring {name}", timeout=60
    )
    assert bad < ABSOLUTE_S, f"{name}: {bad:.2f} s"
    assert bad <= max(RELATIVE * good, 0.2), f"{name}: {bad:.2f} s against {good:.2f} s"


_NESTED_CHILD = """
import json, sys, time
from supercontext_lab.reading.document import read_document
piece = "- a lead\\n  - a sub-item\\n    - a sub-sub-item\\n"
times = []
for size in (250_000, 1_000_000):
    read_document.cache_clear()
    text = (piece * (size // len(piece) + 1))[:size]
    started = time.process_time()
    read_document(text)
    times.append(time.process_time() - started)
print(json.dumps(times))
"""


def test_nested_sub_items_read_with_their_leads_in_linear_time() -> None:
    """A megabyte of sub-items, each labelled by the item above it: four times the text, about four times the time"""
    # markdown-it-py's own parse of nested lists is about 2.7 s a megabyte here, past the
    # absolute bound above; what this round adds (each sub-item's lead) must stay linear.
    quarter, whole = timed_in_child(_NESTED_CHILD, what="reading nested sub-items", timeout=90)
    assert whole <= 6 * max(quarter, 0.05), f"{whole:.2f} s against {quarter:.2f} s"
