"""Facts cut from notes: headings are titles, never facts; a fact is listed once."""

from __future__ import annotations

from supercontext_lab.reading.facts import (
    MAX_FACT_CHARS,
    distinct_facts,
    note_blocks,
    note_prose,
    note_sections,
    note_sentences,
)


def test_a_heading_is_never_part_of_a_fact() -> None:
    note = (
        "# Freezer inventory\n"
        "## Box 3\n"
        "#\n"
        "- **Box 3** holds the seed samples of site 12.\n"
        "Soil cores are in box 4.\n"
        "#hashtag is not a heading.\n"
    )
    assert note_blocks(note) == [
        "Box 3 holds the seed samples of site 12. Soil cores are in box 4. "
        "#hashtag is not a heading."
    ]
    assert "Freezer" not in note_prose(note)
    # The lines after the item continue it (a lazy continuation, as Markdown reads it),
    # and a list item is one unit, whole.
    assert note_sentences(note) == [
        "Box 3 holds the seed samples of site 12. Soil cores are in box 4. "
        "#hashtag is not a heading."
    ]


def test_a_fact_is_a_whole_sentence() -> None:
    """Titles, abbreviations and numbers do not cut a sentence."""
    note = (
        "# Committee\n"
        "Committee: Prof. Henrik Aalto (chair), Dr. Nkechi Obi, Dr. Paul Ferreira\n"
        "(external). The meeting is on 14 March at 10.30 in Room 2.14. Bring the draft,\n"
        "e.g. the methods, approx. 12 pages.\n"
    )
    assert note_sentences(note) == [
        "Committee: Prof. Henrik Aalto (chair), Dr. Nkechi Obi, Dr. Paul Ferreira (external).",
        "The meeting is on 14 March at 10.30 in Room 2.14.",
        "Bring the draft, e.g. the methods, approx. 12 pages.",
    ]


def test_facts_are_compared_after_normalising() -> None:
    facts = [
        "Aim 1: fit dispersal kernels across 40 sites.",
        "aim 1 — Fit the dispersal kernel across 40 sites",  # case, punctuation, plural
        "The budget is EUR 1.18 million.",
    ]
    assert distinct_facts(facts, str) == [facts[0], facts[2]]


def test_a_fact_that_says_more_takes_the_place_of_the_one_it_covers() -> None:
    short = "Aim 1: fit dispersal kernels across 40 forest-fragment sites."
    other = "The renewal is due 2026-12-15."
    longer = (
        "Aim 1: fit dispersal kernels across 40 forest-fragment sites (Jonas's thesis, "
        "mostly done). Aim 2: landscape connectivity."
    )
    assert distinct_facts([short, other, longer], str) == [longer, other]


def test_facts_that_share_words_but_say_different_things_both_stay() -> None:
    facts = [
        "The budget approval is due 2026-12-08.",
        "The grant renewal is due 2026-12-15.",
        "Weekly one-to-one with Jonas on Tuesdays.",
    ]
    assert distinct_facts(facts, str) == facts


def test_a_limit_bounds_the_work_on_a_huge_note() -> None:
    facts = [f"Sample {n} is in box {n}." for n in range(100_000)]
    assert distinct_facts(facts, str, limit=40) == facts[:40]


def test_a_sentence_is_never_cut_and_an_overlong_one_is_not_quoted() -> None:
    long_sentence = "The committee " + "really " * 60 + "meets on Friday."
    note = f"{long_sentence} Word " + ("word " * 120).strip() + "s end here. Short one here."
    sentences = note_sentences(note)
    assert long_sentence in sentences
    assert all(len(s) <= MAX_FACT_CHARS for s in sentences)
    assert not any(s.endswith("…") for s in sentences)
    assert "Short one here." in sentences


def test_a_run_on_text_longer_than_the_fact_limit_gives_no_fact() -> None:
    assert note_sentences("word " * 200) == []


def test_code_blocks_links_and_headings() -> None:
    note = (
        "# Run Postgres in Docker\n"
        "Use the [official image](https://hub.docker.com/_/postgres) like this:\n"
        "```yaml\n"
        "# comment, not a heading\n"
        "image: postgres:16\n"
        "```\n"
        "## Data\n"
        "Data lives in a named volume. See ![diagram](img.png).\n"
    )
    sections = note_sections(note)
    assert [(s.text, s.heading, s.code) for s in sections] == [
        ("Use the official image like this:", "Run Postgres in Docker", False),
        ("`# comment, not a heading` `image: postgres:16`", "Run Postgres in Docker", True),
        ("Data lives in a named volume.", "Data", False),
        ("See diagram.", "Data", False),
    ]


def test_an_unclosed_fence_or_unmatched_brackets_stay_linear() -> None:
    note = "```\n" + "code line\n" * 50_000
    assert note_sections(note) == []
    assert note_blocks("[" * 200_000 + "(x)") == ["[" * 200_000 + "(x)"]


def test_a_label_that_introduces_a_list_is_no_fact_alone() -> None:
    from supercontext_lab.reading.facts import is_label

    note = "# Me\n\nDeadlines:\n\n- Thesis due 30 June.\n\nNext steps: finish chapter 2.\n"
    assert note_sentences(note) == ["Thesis due 30 June.", "Next steps: finish chapter 2."]
    assert is_label("Deadlines:") and is_label("Open questions for Priya:")
    assert not is_label("Next steps: finish chapter 2.")


def test_sentences_cut_from_one_paragraph_are_beside_each_other_only() -> None:
    from supercontext_lab.reading.facts import note_sections

    first, second, third = note_sections("The van comes at 8. Sign for it.\n\nThe vet is in.\n")
    assert first.beside(second) and second.beside(first)
    assert not second.beside(third)
