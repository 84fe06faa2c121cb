"""References: an identifier the best passage names, followed to the note about it."""

from __future__ import annotations

from supercontext_lab.reading.passages import Quotable, ranked_passages
from supercontext_lab.reading.references import references, referred
from supercontext_lab.reading.relevance import request_terms

_TRACKER = (
    "# Permit tracker\n\n"
    "| Ref | Site | Status |\n"
    "| --- | --- | --- |\n"
    "| BP-7781 | Harbour Road retaining wall | on hold (see site diary) |\n"
    "| BP-7790 | School annex canopy | issued 02/03 |\n"
)
_DIARY = (
    "# Site diary\n\n"
    "- 03/03: crane inspection passed, Jo signed it off\n"
    "- 03/05: BP-7781 inspector wants soil report rev C for the wall before she lifts the "
    "hold; Amir sends it Thursday\n"
    "- 03/06: concrete pour for bay 4 moved to Monday because of rain\n"
)
_ASK = "Why is the Harbour Road retaining wall permit stuck?"


def test_the_references_of_the_best_passages_are_the_ones_the_request_does_not_name() -> None:
    request = request_terms(_ASK)
    assert references(
        ["BP-7781 — Site: Harbour Road; due 2026-03-02; db-east; v5.0.2"], request
    ) == [
        "bp-7781",
        "v5.0.2",
    ]
    # A date and a hyphenated word are no references; one the request names is no news.
    assert references(["due 2026-03-02 on db-east"], request) == []
    assert references(["BP-7781 again"], request_terms("What about BP-7781?")) == []


def test_a_recall_follows_a_reference_only_when_its_whole_query_is_one() -> None:
    request = request_terms(_ASK)
    assert referred("BP-7781", request) == "bp-7781"
    assert referred("BP-7781 soil report", request) == ""
    assert referred("retaining wall", request) == ""
    assert referred("BP-7781", request_terms("Status of BP-7781?")) == ""


def test_a_note_found_by_a_reference_is_quoted_where_it_speaks_of_it() -> None:
    request = request_terms(_ASK)
    texts = [
        Quotable(_TRACKER, "tracker", 6.0, "tracker"),
        # The diary matched the request's own search too weakly to be quoted ...
        Quotable(_DIARY, "diary", 1.0, "diary"),
        Quotable("# Rain days\n\nThe annex roof leaked on 03/04.", "rain", 5.5, "rain"),
        # ... and was found again by following the tracker's reference.
        Quotable(_DIARY, "diary", 9.0, "diary", via="bp-7781"),
    ]
    quoted = [(passage.text, key) for passage, key in ranked_passages(texts, request)]
    assert quoted[0][1] == "tracker"
    diary = [text for text, key in quoted if key == "diary"]
    assert diary == [
        "03/05: BP-7781 inspector wants soil report rev C for the wall before she lifts the "
        "hold; Amir sends it Thursday"
    ]


def test_a_reference_no_strong_hit_names_brings_nothing() -> None:
    request = request_terms(_ASK)
    texts = [
        Quotable("# Harbour Road\n\nThe retaining wall permit is stuck.", "wall", 6.0, "wall"),
        Quotable(_DIARY, "diary", 9.0, "diary", via="bp-7781"),
    ]
    assert [key for _, key in ranked_passages(texts, request)] == ["wall"]
