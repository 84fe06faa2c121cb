"""Passages: the sentence of a long note that answers the request, with its neighbour."""

from __future__ import annotations

from supercontext_lab.reading.passages import passages
from supercontext_lab.reading.relevance import request_terms

_MINUTES = (
    "# PhD progress\n\n"
    "Started in October 2024 on kelp forest recovery after marine heatwaves. "
    "Chapter 1 is drafted and was sent to the supervisor in May. "
    "The dive season runs from April to October. "
    "Committee: Prof. Henrik Aalto (chair), Dr. Nkechi Obi, Dr. Paul Ferreira (external). "
    "The next committee meeting is on 14 March at 10.30 in Room 2.14. "
    "Logger T2 was lost in the January storm. "
    "Methods still to write: the transect design, the logger calibration and the GLMM."
)


def test_the_sentence_that_answers_comes_first_not_the_notes_first_lines() -> None:
    found = passages(_MINUTES, request_terms("When is my committee meeting?"))
    assert found[0].text == "The next committee meeting is on 14 March at 10.30 in Room 2.14."


def test_titles_and_initials_do_not_cut_a_passage() -> None:
    found = passages(_MINUTES, request_terms("Who is on my committee?"))
    texts = [passage.text for passage in found]
    assert (
        "Committee: Prof. Henrik Aalto (chair), Dr. Nkechi Obi, Dr. Paul Ferreira (external)."
        in texts
    )
    assert not any(text.endswith(("Prof.", "Dr.")) for text in texts)


def test_a_sentence_that_refers_back_brings_the_one_before() -> None:
    conversation = (
        "user: I want to service my bikes before the spring rides. "
        "assistant: Good idea, a yearly service keeps them safe. "
        "user: The road bike needs new tyres. "
        "user: I've got three of them, all from the same shop. "
        "assistant: Then book them in one go."
    )
    found = passages(conversation, request_terms("How many bikes do I own?"))
    assert any("three of them" in passage.text for passage in found)


def test_a_question_brings_its_answer() -> None:
    note = (
        "Notes from the call with the harbour office. "
        "Who signs the boat booking? "
        "Henrik signs it, and the booking costs 450 EUR a day on grant code MB-2291. "
        "The harbour closes at 18:00."
    )
    found = passages(note, request_terms("Who has to approve the boat booking?"))
    assert found[0].text.startswith("Who signs the boat booking? Henrik signs it")


def test_a_note_without_the_request_s_terms_gives_nothing() -> None:
    assert passages(_MINUTES, request_terms("What sourdough starter do I use?")) == []


def test_passages_are_linear_on_a_huge_note() -> None:
    note = "The logger sat on the reef. " * 50_000
    found = passages(note, request_terms("Where is the logger?"), limit=2)
    assert len(found) == 2


def test_the_items_under_a_heading_answer_for_it() -> None:
    note = (
        "# Cranelift backend\n\n"
        "Cranelift is a code generator written in Rust for WebAssembly compilers.\n"
        "It is developed in a separate repository.\n\n"
        "## Next steps\n\n"
        "A few things we would like to do now:\n\n"
        "- Bring in the backend via git-subtree and build it in CI.\n"
        "- Mark tests that need LLVM.\n\n"
        "## History\n\n"
        "- The backend was started two years ago.\n"
    )
    found = passages(note, request_terms("What are the next steps for the backend?"), limit=1)
    assert "git-subtree" in found[0].text
    # A short heading that names what is asked answers for the items under it, though they
    # do not repeat its words.
    found = passages(note, request_terms("What are the next steps?"), limit=2)
    assert any("git-subtree" in passage.text for passage in found)
    assert all("two years ago" not in passage.text for passage in found)


def test_a_section_named_by_the_request_answers_it() -> None:
    note = (
        "# INC-2298: checkout slowness, 18 Feb\n\n"
        "Checkout p99 went from 800 ms to 14 s for 50 minutes.\n\n"
        "### Root cause\n\n"
        "CHG-2071 set the connection pool to 20 instead of 200.\n\n"
        "### Follow-ups\n\n"
        "An alert on pool wait time, owned by Oleg.\n"
    )
    found = passages(note, request_terms("What caused the checkout slowness?"), limit=3)
    assert any("20 instead of 200" in passage.text for passage in found)
    assert all("Oleg" not in passage.text for passage in found)


def test_a_code_block_comes_with_the_sentence_that_explains_it() -> None:
    note = (
        "# Remove the delay on the escape key\n\n"
        "By default tmux waits 500ms after the escape key.\n\n"
        "This delay can be removed by overriding the `escape-time` option.\n\n"
        "```\n# in ~/.tmux.conf\nset -sg escape-time 0\n```\n"
    )
    found = passages(note, request_terms("How do I fix the escape delay in tmux?"))
    assert found[0].text == (
        "This delay can be removed by overriding the `escape-time` option. "
        "`# in ~/.tmux.conf` `set -sg escape-time 0`"
    )


def test_one_ranking_leaves_out_side_matches_and_weighs_hits_by_their_score() -> None:
    from supercontext_lab.reading.passages import Quotable, ranked_passages

    request = request_terms("When is the committee meeting about the kelp transects?")
    texts = [
        Quotable("The committee meeting on kelp transects is on 14 March.", "strong", 8.0),
        Quotable("The kelp committee minutes are filed.", "weaker", 4.0),
        Quotable("A committee of one.", "side", 1.0),  # under 0.35 of the best score
        Quotable("Committee meetings are in Room 2.14.", "file"),  # a user file
    ]
    ranked = [key for _, key in ranked_passages(texts, request)]
    assert ranked[0] == "strong"
    assert "side" not in ranked
    # The minutes and the file share the request's words but not what it asks: they weigh
    # less than KEEP_SHARE of the answer and earn no bullet.
    assert ranked == ["strong"]


def test_passages_that_each_answer_part_of_the_request_both_stay() -> None:
    from supercontext_lab.reading.passages import Quotable, ranked_passages

    request = request_terms("When and where is the committee meeting about the kelp transects?")
    texts = [
        Quotable("The committee meeting on kelp transects is on 14 March.", "when", 8.0),
        Quotable("The kelp transects committee meets in Room 2.14.", "where", 6.0),
    ]
    assert [key for _, key in ranked_passages(texts, request)] == ["when", "where"]


def test_a_correction_brings_its_new_date_not_its_small_talk() -> None:
    note = (
        "From: Ana Ruiz\nSent: Monday, 3 March 2026 9:00\nSubject: RE: audit\n\n"
        "Correction to my last message. The audit now starts on 14 April. Sorry for the "
        "back and forth. Ana\n\n"
        "> From: Ana Ruiz\n> Sent: Friday, 28 February 2026 16:00\n> Subject: audit\n>\n"
        "> The audit starts on 7 April, inspectors at 8.\n"
    )
    found = passages(note, request_terms("When does the audit start?"), limit=3)
    assert "14 April" in found[0].text
    # A short sentence of the correcting message is no terse last word of its own.
    assert not any("back and forth" in passage.text for passage in found[:2])


def test_a_short_lead_of_a_message_comes_with_the_sentence_after_it() -> None:
    note = (
        "From: Marta\nSent: 6 March 2026\nSubject: RE: delivery\n\n"
        "Friday 13 March it is. The van will be with you between 8:00 and 10:00, so "
        "someone who can sign for the drugs must be in.\n"
    )
    found = passages(note, request_terms("When is the drugs van coming?"))
    assert found[0].text.startswith("Marta (6 March 2026): Friday 13 March it is. The van")
    assert found[0].text.count("Marta") == 1


def test_a_sub_item_quoted_after_its_item_is_not_labelled_with_it_again() -> None:
    note = (
        "# Next steps\n\n"
        "- Bring the backend into the main repository and build it in CI:\n"
        "  - vendored with git-subtree, synced weekly.\n"
    )
    found = passages(note, request_terms("How do we bring the backend into the repository?"))
    assert found[0].text.count("Bring the backend") == 1
    assert "git-subtree" in found[0].text


THREAD = (
    "From: Gwen Hartley\nSent: Thursday, 5 February 2026 10:12\nSubject: RE: year-end\n\n"
    "No problem at all. Tuesday 17 February at 2pm on Teams is confirmed. Denise can't "
    "join then but she's happy to sign off the accounts afterwards.\n\n"
    "Kind regards, Gwen\n\n"
    "> From: Gwen Hartley\n> Sent: Monday, 2 February 2026 15:30\n> Subject: year-end\n>\n"
    "> Could we meet on Thursday 12 February to sign off the accounts?\n"
)


def test_a_message_s_sentence_comes_with_the_sentence_beside_it_holding_the_date() -> None:
    found = passages(THREAD, request_terms("When's the accounts sign-off now?"), limit=2)
    # The sentence naming the sign-off holds no date; the one before it, in the same
    # message, does. The message's own date (its label) is no answer.
    (reply,) = [p.text for p in found if "Denise can't join then" in p.text]
    assert reply.startswith("Gwen Hartley (Thursday, 5 February 2026 10:12): Tuesday 17 February")
    assert "No problem at all" not in reply


def test_only_a_message_s_own_sentences_complete_it() -> None:
    # Prose is quoted as it stands; and a message whose sentence has the date asked for
    # is not lengthened.
    prose = "Tuesday 17 February is free. Denise will sign off the accounts after the meeting."
    found = passages(prose, request_terms("When's the accounts sign-off now?"))
    assert found[0].text == "Denise will sign off the accounts after the meeting."
    old = passages(THREAD, request_terms("When was the sign-off first proposed?"), limit=3)
    assert any(p.text.endswith("Thursday 12 February to sign off the accounts?") for p in old)
    assert not any("12 February" in p.text and "17 February" in p.text for p in old)
