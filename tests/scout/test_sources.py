"""Sentences of what a run read: the facts a bundle may carry and a pick may choose."""

from __future__ import annotations

from supercontext_lab.bundle.records import Source
from supercontext_lab.reading.facts import MAX_FACT_CHARS
from supercontext_lab.reading.relevance import request_terms
from supercontext_lab.scout.sources import RunSources, sentences
from supercontext_lab.tools.base import ToolResult


def test_a_sentence_wrapped_by_the_note_s_line_width_stays_one_fact() -> None:
    note = (
        "# Decisions\n"
        "Decision (2026-11-12): the 2Dt kernel is the primary kernel for\n"
        "SEEDSCAPE because it fits 34 of the 40 sites. The exponential kernel is kept.\n"
        "\n"
        "- first item\n"
        "  continued on the next line\n"
        "• second item\n"
        "1) third item\n"
        "12. fourth item\n"
    )
    assert sentences(note) == [
        "Decision (2026-11-12): the 2Dt kernel is the primary kernel for SEEDSCAPE because "
        "it fits 34 of the 40 sites.",
        "The exponential kernel is kept.",
        "first item continued on the next line",
        "second item",
        "third item",
        "fourth item",
    ]


def test_hostile_notes_give_bounded_facts() -> None:
    # One 2 MB paragraph without a sentence end, then 100,000 bare list markers.
    huge = "word " * 400_000
    facts = sentences(huge + "\n" + "- \n" * 100_000 + "\ud83d lone surrogate. \x1b[2J Clear.")
    assert all(len(fact) <= MAX_FACT_CHARS for fact in facts)
    # The paragraph is too long to quote and is never cut, so it is no fact; empty items
    # give none; odd characters are kept as data (the envelope writer and the displays
    # escape them).
    assert " ".join(facts) == "\ud83d lone surrogate. \x1b[2J Clear."


def test_a_fact_two_notes_share_is_numbered_once() -> None:
    from supercontext_lab.bundle.records import Source
    from supercontext_lab.scout.sources import RunSources
    from supercontext_lab.tools.base import ToolResult

    hits = [
        {"namespace": "global", "key": "aims", "content": "# Aims\nAim 1: fit the kernels."},
        {"namespace": "project", "key": "outline", "content": "aim 1 - Fit the kernel!"},
    ]
    sources = RunSources()
    sources.add_result("memory_recall", ToolResult.success({"hits": hits}))
    facts = sources.facts(request_terms("What is aim 1 of the kernel work?"))
    assert [(fact.number, fact.text, fact.source) for fact in facts] == [
        (1, "Aim 1: fit the kernels.", Source("memory", "global/aims"))
    ]


def test_facts_come_best_first_and_quote_the_passage_that_answers() -> None:
    from supercontext_lab.bundle.records import Source
    from supercontext_lab.scout.sources import RunSources
    from supercontext_lab.tools.base import ToolResult

    long_note = " ".join(f"Entry {n}: the harbour log was checked." for n in range(30))
    long_note += " The committee meeting is on 14 March at 10.30 in Room 2.14."
    hits = [
        {"namespace": "phd", "key": "log", "content": long_note, "score": 4.0},
        {"namespace": "phd", "key": "boat", "content": "The boat is booked.", "score": 1.0},
    ]
    sources = RunSources()
    sources.add_result("memory_recall", ToolResult.success({"hits": hits}))
    facts = sources.facts(request_terms("When is the committee meeting?"))
    assert facts[0].text == "The committee meeting is on 14 March at 10.30 in Room 2.14."
    assert facts[0].source == Source("memory", "phd/log")
    # Nothing in the boat note is on the request: it is not offered as a fact.
    assert all(fact.source != Source("memory", "phd/boat") for fact in facts)


CERTIFICATES = "# Certificates\n\n| flat | EICR expires |\n| --- | --- |\n| Flat 3 | 12 Aug 2026 |"
ROW = "Flat 3 — EICR expires: 12 Aug 2026"


def _recalled(hits: list[dict[str, object]], meaning: list[dict[str, object]]) -> RunSources:
    sources = RunSources()
    payload = {"query": "wiring check flat 3", "hits": hits, "by_meaning": meaning}
    sources.add_result("memory_recall", ToolResult.success(payload))
    return sources


def test_a_unit_found_by_meaning_is_a_fact_where_the_words_found_none() -> None:
    boiler = {"namespace": "flats", "key": "flat-3", "content": "Flat 3: boiler serviced in May."}
    unit = {"namespace": "flats", "key": "certificates", "content": ROW, "score": 0.61}
    sources = _recalled([{**boiler, "score": 2.0}], [unit])
    facts = sources.facts(request_terms("When is the wiring check due for Flat 3?"))
    assert (ROW, Source("memory", "flats/certificates")) in [(f.text, f.source) for f in facts]
    # The note it came from is a source the run read, by that unit until words read more.
    assert sources.texts_for(Source("memory", "flats/certificates")) == [f"certificates\n{ROW}"]


def test_a_note_read_by_units_then_by_words_is_read_whole() -> None:
    other = {"namespace": "flats", "key": "certificates", "content": "| Flat 7 | 1 Feb 2027 |"}
    unit = {"namespace": "flats", "key": "certificates", "content": ROW}
    sources = _recalled([], [unit, other])
    texts = sources.texts_for(Source("memory", "flats/certificates"))
    assert texts == [f"certificates\n{ROW}\n| Flat 7 | 1 Feb 2027 |"]
    whole = {"namespace": "flats", "key": "certificates", "content": CERTIFICATES, "score": 3.0}
    sources.add_result("memory_recall", ToolResult.success({"query": "eicr", "hits": [whole]}))
    assert sources.texts_for(Source("memory", "flats/certificates")) == [
        f"certificates\n{CERTIFICATES}"
    ]
    facts = sources.facts(request_terms("When does the EICR of Flat 3 expire?"))
    assert facts[0].source == Source("memory", "flats/certificates")


def test_units_by_meaning_stay_out_where_the_words_answer() -> None:
    answer = {
        "namespace": "flats",
        "key": "flat-3",
        "content": "The wiring check for Flat 3 is due on 12 Aug.",
    }
    unit = {"namespace": "global", "key": "office", "content": "The office closes at 5pm."}
    sources = _recalled([{**answer, "score": 2.0}], [unit])
    facts = sources.facts(request_terms("When is the wiring check due for Flat 3?"))
    assert [f.source for f in facts] == [Source("memory", "flats/flat-3")]


def test_a_malformed_by_meaning_gives_no_fact_and_no_source() -> None:
    request = request_terms("When is the wiring check due for Flat 3?")
    for meaning in ("Flat 3 EICR", [1, None, "x", {"namespace": "flats"}, {"content": "x"}]):
        sources = RunSources()
        payload = {"query": "wiring", "hits": [], "by_meaning": meaning}
        sources.add_result("memory_recall", ToolResult.success(payload))
        assert sources.facts(request) == []
        assert sources.notes() == {}
