"""How quoted turns are written and who said a quote of them."""

from __future__ import annotations

from supercontext_lab.reading.relevance import request_terms
from supercontext_lab.reading.transcripts import echoes, transcript_lines, with_speaker

WINDOW = transcript_lines(
    [
        ("user", "Which kernels go in the figure?\nList them, please."),
        ("assistant", "The 2Dt and the lognormal. By the way, I just checked the 25 November run."),
    ]
)


def test_turns_are_lines_labelled_with_who_spoke() -> None:
    assert WINDOW.splitlines() == [
        "User: Which kernels go in the figure?",
        "List them, please.",
        "Assistant: The 2Dt and the lognormal. By the way, I just checked the 25 November run.",
    ]


def test_a_quote_from_the_middle_of_a_turn_gets_its_speaker_back() -> None:
    assert with_speaker(WINDOW, "By the way, I just checked the 25 November run.") == (
        "Assistant: By the way, I just checked the 25 November run."
    )
    assert with_speaker(WINDOW, "List them, please.") == "User: List them, please."
    assert with_speaker(WINDOW, "User: Which kernels go in the figure?") == (
        "User: Which kernels go in the figure?"
    )
    assert with_speaker(WINDOW, "Nothing like this was said.") == "Nothing like this was said."


def test_a_quote_that_only_repeats_the_request_echoes_it() -> None:
    request = request_terms("Help me finish the budget section of the grant renewal")
    assert echoes("User: Help me finish the budget section of the grant renewal", request)
    assert echoes("User: the grant renewal budget, please", request)
    assert not echoes("User: The budget section needs the travel line of EUR 18,000.", request)
    assert not echoes("Assistant: Sure.", request)  # nothing said is not an echo either


def test_a_past_turn_that_only_asks_is_no_fact() -> None:
    from supercontext_lab.reading.transcripts import asks_only, no_fact

    request = request_terms("Which rooms are booked for the pilot?")
    asked = "User: Where do I test participants for the pilot?"
    assert asks_only(asked) and no_fact(asked, request)
    # A question that says something, an answer after it, an assistant's question: facts.
    for quote in (
        "User: I moved the review to Friday, can you update the calendar?",
        "User: Where do I test? Assistant: In room 2.14 of the annexe.",
        "Assistant: Where would you like to test participants?",
        "User: Is the room booked? I think it is.",
    ):
        assert not asks_only(quote), quote
