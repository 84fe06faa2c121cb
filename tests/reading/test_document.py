"""A note read as a document: each structure a reader uses becomes units that keep it."""

from __future__ import annotations

import pytest

from supercontext_lab.reading.document import MAX_UNIT_CHARS, read_document
from supercontext_lab.reading.passages import passages
from supercontext_lab.reading.relevance import coverage, request_terms

SCHEDULE = """# Release plan

## Windows

| Release | Window | Checks |
| --- | --- | --- |
| Release 13 | freeze 1 day | smoke tests |
| Release 14 | freeze ±2 days | load test + DR drill |
| Release 15 | no freeze | none |
"""


def test_a_table_row_is_read_with_its_header() -> None:
    units = read_document(SCHEDULE).units
    assert [u.kind for u in units] == ["row", "row", "row"]
    row = units[1]
    assert row.quoted == "Release 14 — Window: freeze ±2 days; Checks: load test + DR drill"
    assert row.heading == "Release plan › Windows"
    assert row.lines == (8, 8)
    found = passages(SCHEDULE, request_terms("What checks does Release 14 need?"))
    assert found[0].text.startswith("Release 14 — ")


def test_a_row_numbered_by_its_first_cell_keeps_every_header() -> None:
    note = "| # | Office | Officer |\n|---|---|---|\n| 1 | Governor | Susana Martinez |\n"
    assert read_document(note).units[0].quoted == "#: 1; Office: Governor; Officer: Susana Martinez"


EMAIL = """From: Sam Lee <sam@example.org>
Sent: Tuesday, 3 March 2026 10:04
Subject: RE: review date

Any chance of the week after? The 21st works for me.

> On Mon, 2 Mar 2026, Priya Shah <priya@example.org> wrote:
> Could we hold the review on the 14th?
"""


def test_an_email_thread_is_messages_with_sender_date_and_quote_level() -> None:
    units = read_document(EMAIL).units
    assert [u.kind for u in units] == ["message"] * 4
    subject, ask, answer, quoted = units
    assert subject.text == "Subject: RE: review date"
    assert ask.quoted.endswith("Any chance of the week after?")
    assert answer.quoted == "Sam Lee (Tuesday, 3 March 2026 10:04): The 21st works for me."
    assert answer.depth == 0
    # The quoted history is the earlier message's, not the reply's.
    assert quoted.context == "Priya Shah (Mon, 2 Mar 2026)"
    assert quoted.depth == 1
    assert "From:" not in " ".join(u.text for u in units)


def test_a_chat_that_corrects_itself_quotes_its_last_word_first() -> None:
    note = (
        "# Offsite\n\n"
        "[10:20] sam: For the offsite budget I propose 40k for venue, travel and catering.\n"
        "[10:21] priya: 40k for the offsite budget looks fine for venue and travel.\n"
        "[10:24] lee: lunch is sorted\n"
        "[10:25] sam: OK, final: 90k instead, the board approved it.\n"
    )
    units = read_document(note).units
    assert [u.kind for u in units] == ["turn"] * 4
    assert units[0].context == "sam (10:20)"
    assert units[3].settles and not units[0].settles
    found = passages(note, request_terms("What is the offsite budget?"))
    assert "90k" in found[0].text


def test_a_replys_subject_is_no_unit_of_its_own() -> None:
    note = (
        "From: Sam Lee\nSent: Tuesday, 3 March 2026 10:04\nSubject: RE: Fwd: Review date\n\n"
        "The 21st works.\n\n"
        "From: Priya Shah\nSent: Monday, 2 March 2026 09:00\nSubject: Fwd: review   DATE\n\n"
        "Any chance of the week after?\n\n"
        "From: Priya Shah\nSent: Monday, 2 March 2026 08:00\nSubject: Budget\n\n"
        "Is 40k enough?\n"
    )
    subjects = [u.text for u in read_document(note).units if u.text.startswith("Subject:")]
    # "RE:" and "Fwd:" before the same subject say nothing new; another subject does.
    assert subjects == ["Subject: RE: Fwd: Review date", "Subject: Budget"]


def test_a_top_posted_reply_settles_the_message_it_quotes() -> None:
    # Newest on top: the quoted message below the reply is older, so the reply that says
    # it settles the date is the thread's last word, though it comes first in the note.
    note = (
        "From: Sam Lee\nSent: Wednesday, 4 March 2026 16:00\nSubject: RE: review\n\n"
        "Confirmed: the review is on 28 April.\n\n"
        "> From: Priya Shah\n> Sent: Tuesday, 3 March 2026 09:00\n> Subject: review\n>\n"
        "> Could we hold the design review on 21 April or 22 April, in the big room?\n"
    )
    found = passages(note, request_terms("When is the design review?"), limit=2)
    assert "28 April" in found[0].text


def test_a_log_entry_that_settles_something_else_is_not_lifted() -> None:
    note = (
        "# Call log, March\n\n"
        "- 3/10 2:00p - Lauren - left a message about the replenishment letter for the trust.\n"
        "- 3/18 4:30p - Thomas - told him the bank deadline is settled: April 11.\n"
    )
    request = request_terms("Do I need to send Lauren a replenishment letter in March?")
    found = passages(note, request)
    assert "replenishment" in found[0].text
    assert all("bank deadline" not in passage.text for passage in found)


def test_a_heading_alone_makes_no_unit_an_answer() -> None:
    note = (
        "# Budget, deadline and submission of the grant\n\n"
        "Run wipe-shared-drive on the team folder every Friday.\n"
    )
    assert passages(note, request_terms("What is the grant budget deadline?")) == []


@pytest.mark.parametrize(
    ("line", "settles"),
    [
        ("[10:25] sam: OK, final: 90k instead.", True),
        ("[10:25] carla: the publisher asked about the Sunday slot. No decision.", False),
        ("[10:25] sam: not confirmed yet, still waiting.", False),
        ("- 05/16: correction run on the overtime story.", False),
        ("The correction of May 14 still stings.", False),
    ],
)
def test_only_a_turn_or_message_that_says_so_settles(line: str, settles: bool) -> None:
    (unit,) = read_document(line).units
    assert unit.settles is settles


def test_turns_under_a_speaker_line() -> None:
    note = "**Priya**, 12:20\nThe venue is Hall B.\n\n**Sam**, 12:22\nBooked it.\n"
    units = read_document(note).units
    assert [u.quoted for u in units] == [
        "Priya (12:20): The venue is Hall B.",
        "Sam (12:22): Booked it.",
    ]


def test_a_log_line_is_one_unit_with_its_date_and_subject() -> None:
    note = (
        "# QC log\n"
        "- 03/02: batch B-12 failed QC. pH 7.9, out of spec. Re-run with fresh buffer on 03/09.\n"
        "- 03/04: batch B-13 passed QC.\n"
    )
    first = read_document(note).units[0]
    assert first.kind == "item"
    assert first.text == (
        "03/02: batch B-12 failed QC. pH 7.9, out of spec. Re-run with fresh buffer on 03/09."
    )
    assert first.date == "03/02"
    plain = "2026-03-01 deploy db-east failed\n2026-03-02 rollback done by Sam\n"
    assert [u.text for u in read_document(plain).units] == plain.strip().split("\n")


def test_an_identifier_finds_its_own_line_only() -> None:
    note = (
        "- batch B-12 failed QC on pH.\n"
        "- batch B-7 has 12 samples left.\n"
        "- 12 boxes of B-3 arrived.\n"
    )
    request = request_terms("Why did B-12 fail?")
    found = passages(note, request)
    assert [p.text for p in found] == ["batch B-12 failed QC on pH."]
    assert coverage(request, ["batch B-12 failed QC on pH."]).enough
    assert not coverage(request, ["12 boxes of B-3 arrived."]).enough


@pytest.mark.parametrize(
    "sentence",
    [
        "The panel cites Sect. 4.2 and the memo of 01/22.",
        "Samples are in Rm. 4 of the annexe.",
        "See Ref. No. 12 for the full protocol.",
        "Compare the earlier result, cf. 3 weeks ago.",
        "The review is on Tues. 03/09 at noon.",
        "The hearing is in Dept. 14, at 8:30.",
        "Judge Castellanos sits in Dept. 14.",
    ],
)
def test_an_abbreviation_the_table_does_not_know_does_not_cut(sentence: str) -> None:
    note = f"{sentence} The next sentence stands alone."
    assert [u.text for u in read_document(note).units] == [
        sentence,
        "The next sentence stands alone.",
    ]


def test_submit_matches_submission_so_enough_is_right() -> None:
    request = request_terms("When do I have to submit my thesis?")
    fact = "Thesis submission deadline: 30 June 2027 (memory: phd/deadlines)"
    assert coverage(request, [fact]).enough


def test_a_unit_longer_than_the_limit_is_cut_into_sentences_never_inside_one() -> None:
    item = "- " + " ".join(f"Step {n} is done." for n in range(60)) + "\n"
    units = read_document(item).units
    assert len(units) == 60
    assert all(len(u.text) <= MAX_UNIT_CHARS for u in units)


def test_a_sub_item_is_read_with_the_item_above_it() -> None:
    note = (
        "# Suppliers\n\n"
        "- **Nordic Timber** — glulam beams for the atrium. Account NT-552.\n"
        "  - Orders by phone only: 0161 555 0101, ask for Lise.\n"
        "  - Deliveries Tue and Thu before 9 a.m.\n"
        "- **Ferro Steel** — rebar.\n"
    )
    units = read_document(note).units
    phone = next(unit for unit in units if "0161" in unit.text)
    assert phone.context == "Nordic Timber — glulam beams for the atrium"
    assert phone.quoted == (
        "Nordic Timber — glulam beams for the atrium: Orders by phone only: 0161 555 0101, "
        "ask for Lise."
    )
    # The item above keeps no label of its own; its sibling below is read on its own.
    assert next(u for u in units if u.text.startswith("Nordic")).context == ""
    assert next(u for u in units if u.text.startswith("Ferro")).context == ""


def test_every_sentence_of_a_message_that_opens_with_a_correction_settles() -> None:
    note = (
        "From: Ana Ruiz\nSent: Monday, 3 March 2026 9:00\nSubject: RE: audit\n\n"
        "Correction to my last message. The audit now starts on 14 April. Sorry.\n\n"
        "> From: Ana Ruiz\n> Sent: Friday, 28 February 2026 16:00\n> Subject: audit\n>\n"
        "> The audit starts on 7 April. Thanks, the inspectors will come at 8.\n"
    )
    units = [u for u in read_document(note).units if u.kind == "message" and u.depth == 0]
    assert [u.settles for u in units if not u.text.startswith("Subject")] == [True, True, True]
    quoted = [u for u in read_document(note).units if u.depth == 1]
    # "Thanks" settles nothing, and the older message opens with no correction.
    assert not any(u.settles for u in quoted)


@pytest.mark.parametrize(
    "line",
    [
        "Owen [10:34]: OK, final: Prof. Sandhu signs it.",
        "Owen (10:34): OK, final: Prof. Sandhu signs it.",
    ],
)
def test_a_chat_line_with_its_time_is_a_turn_quoted_with_its_speaker_once(line: str) -> None:
    note = f"Marcus [10:20]: Hallam is away.\n{line}\n"
    turn = [u for u in read_document(note).units if u.kind == "turn"][-1]
    assert turn.context == "Owen (10:34)"
    assert turn.settles
    assert turn.quoted.startswith("Owen (10:34): OK, final: Prof.")
    assert turn.quoted.count("Owen") == 1


@pytest.mark.parametrize(
    ("line", "label"),
    [
        (
            "[14/03/2026, 09:15] Maria Costa: final answer: Harbour Room",
            "Maria Costa (14/03/2026, 09:15)",
        ),
        (
            "14/03/2026, 09:15 - Maria Costa: final answer: Harbour Room",
            "Maria Costa (14/03/2026, 09:15)",
        ),
        ("[14/03 09:15] Maria Costa: final answer: Harbour Room", "Maria Costa (14/03 09:15)"),
        (
            "[09:15, 14/03/2026] Maria Costa: final answer: Harbour Room",
            "Maria Costa (09:15, 14/03/2026)",
        ),
        (
            "[2026-03-14 09:15] Maria Costa: final answer: Harbour Room",
            "Maria Costa (2026-03-14 09:15)",
        ),
        (
            "[14/03/2026, 09:15] +44 7700 900123: final answer: Harbour Room",
            "+44 7700 900123 (14/03/2026, 09:15)",
        ),
    ],
)
def test_a_chat_apps_dated_line_is_a_turn_with_its_speaker(line: str, label: str) -> None:
    note = f"[13/03/2026, 17:02] Ben Ode: which room for the offsite?\n{line}\n"
    units = read_document(note).units
    assert [u.kind for u in units] == ["turn", "turn"]
    assert units[1].context == label and units[1].settles
    assert units[1].quoted == f"{label}: final answer: Harbour Room"


def test_a_dated_log_line_with_a_colon_stays_a_log_line() -> None:
    note = "- 12/05 10:00 call with the landlord: agreed the repair\n- 13/05 09:30 keys returned\n"
    units = read_document(note).units
    assert all(u.kind != "turn" for u in units)
    assert units[0].quoted.startswith("12/05 10:00 call with the landlord:")


def test_a_settling_turn_in_other_words_settles_what_it_names() -> None:
    # The last word says neither "venue" nor "offsite": it names the room a turn on the
    # request proposed, and that is what it settles.
    note = (
        "# Team chat\n\n"
        "[02/03 10:00] Ben Ode: venue for the offsite, ideas?\n"
        "[02/03 10:05] Ana Ruiz: The Loft above the bakery, 20 people\n"
        "[02/03 10:09] Ben Ode: Loft is booked that week. Harbour Room takes 18 for the offsite venue\n"
        "[03/03 16:40] Ana Ruiz: lanyards are in\n"
        "[03/03 16:45] Ben Ode: scrap that, final: Harbour Room, 2pm. Deposit paid\n"
    )
    found = passages(note, request_terms("Which venue did we pick for the offsite?"))
    assert found[0].text.startswith("Ben Ode (03/03 16:45): scrap that, final: Harbour Room")
    # A correction that names nothing earlier on the request settles nothing of it.
    other = note.replace("Harbour Room, 2pm", "lanyards are blue")
    found = passages(other, request_terms("Which venue did we pick for the offsite?"))
    assert "lanyards are blue" not in found[0].text
