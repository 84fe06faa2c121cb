"""The one analyzer: words, terms, keywords and overlaps, the same everywhere."""

from __future__ import annotations

import pytest

from supercontext_lab.reading.words import (
    STOPWORDS,
    analyze,
    content_terms,
    identifiers,
    keywords,
    overlap,
    stem,
    stems,
    unique_terms,
    words,
)
from supercontext_lab.sources.skills import RegistryEntry, rank_registry, registry_tokens


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("figures", "figure"),
        ("formatted", "formatting"),
        ("queries", "query"),
        ("deadlines", "deadline"),
        ("decided", "decide"),
    ],
)
def test_memory_registry_and_offline_scout_share_one_stemmer(one: str, other: str) -> None:
    assert stem(one) == stem(other)
    assert analyze(one) == analyze(other) == [stem(one)]
    assert registry_tokens(one) == registry_tokens(other) == {stem(one)}
    assert stems(keywords(one)) == stems(keywords(other)) == {stem(one)}


def test_registry_search_and_offline_keywords_share_one_stop_word_list() -> None:
    text = "Please help me with the figures for this paper"
    assert registry_tokens(text) == stems(keywords(text)) == {stem("figures"), stem("paper")}
    assert {"please", "help", "with", "the", "for", "this"} <= STOPWORDS


def test_non_ascii_words_are_whole_words_and_the_same_terms_everywhere() -> None:
    text = "Café résumé"
    assert words(text) == ["café", "résumé"]
    assert keywords(text) == ["café", "résumé"]
    # Diacritics fold and the stemmer applies, for the index, the registry and the scout.
    assert analyze(text) == ["cafe", "resum"]
    assert (
        registry_tokens(text) == content_terms(text) == stems(keywords(text)) == {"cafe", "resum"}
    )
    assert analyze("CAFÉ cafe café") == ["cafe", "cafe", "cafe"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Straße über Zürich", ["straße", "über", "zürich"]),
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # combining marks stay inside their word
        ("lit-review_digest's", ["lit", "review", "digest", "s"]),
        ("GR-7731 costs €1.18m", ["gr", "7731", "costs", "1", "18m"]),
        ("ﬁgures Ｆull-width", ["ﬁgures", "ｆull", "width"]),
    ],
)
def test_words_split_on_everything_but_letters_digits_and_marks(
    text: str, expected: list[str]
) -> None:
    assert words(text) == expected


def test_folding_exposes_the_same_terms_as_plain_letters() -> None:
    assert analyze("ﬁgures Ｆigures figures") == ["figur", "figur", "figur"]
    assert unique_terms("Zürich zurich ZURICH") == ["zurich"]


def test_registry_matching_finds_accented_entries_by_plain_words() -> None:
    entry = RegistryEntry(
        id="resume-builder",
        name="Résumé builder",
        description="Writes a CV for a café job.",
        tags=(),
        category="writing",
        source="community",
    )
    ranked = rank_registry([entry], "resume for the cafe", limit=5)
    assert [(found.id, score) for found, score in ranked] == [("resume-builder", 2)]


def test_overlap_counts_shared_terms_of_keywords() -> None:
    query = stems(keywords("Polish the figures"))
    # "polisher" is a form of "polish" to the stemmer: two shared terms.
    assert overlap(query, "A figure polisher for papers") == 2
    assert overlap(query, "Polishing figures") == 2


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("submit", "submission"),
        ("decide", "decision"),
        ("conclude", "conclusion"),
        ("describe", "description"),
        ("apply", "application"),
        ("assume", "assumption"),
        ("studies", "study"),
        ("running", "run"),
        ("ship", "shipment"),
        ("agree", "agreement"),
        ("settle", "settlement"),
        ("argue", "argument"),
        ("electrician", "electrical"),
        ("technician", "technical"),
        ("statisticians", "statistics"),
        ("clinician", "clinic"),
        ("complaint", "complained"),
        ("constraints", "constrain"),
    ],
)
def test_word_forms_share_a_stem(one: str, other: str) -> None:
    assert stem(one) == stem(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("submit", "summit"),
        ("decide", "deciduous"),
        ("apply", "apple"),
        ("com", "comment"),
        ("paint", "pain"),
        ("saint", "sain"),
    ],
)
def test_different_words_keep_different_stems(one: str, other: str) -> None:
    assert stem(one) != stem(other)


def test_identifiers_are_terms_whole_beside_their_parts() -> None:
    text = "Batch B-12 failed QC (pH 7.9) on db-east after v5.0.2, see CHG-2093."
    assert identifiers(text) == ["b-12", "7.9", "db-east", "v5.0.2", "chg-2093"]
    terms = analyze(text)
    for whole in ("b·12", "7·9", "db·east", "v5·0·2", "chg·2093"):
        assert whole in terms
    # The parts stay terms too, so "v5" still finds "v5.0.2".
    assert {"b", "12", "db", "east", "v5", "chg", "2093"} <= set(terms)
    assert stems(keywords("What failed in B-12?")) >= {"b·12"}
    # A word ending a sentence is no identifier; an overlong run is not one either.
    assert identifiers("It failed. Then") == []
    assert identifiers("a-" * 40 + "b") == []


def test_a_days_or_months_short_name_is_its_name_and_an_ordinal_its_number() -> None:
    assert stems(["sat", "saturday"]) == {"saturday"}
    assert stems(["tues", "tue", "tuesday"]) == {"tuesday"}
    assert stems(["sept", "september"]) == stems(["september"])
    assert stems(["14th", "14"]) == {"14"}
    assert stems(["1st", "2nd", "3rd"]) == {"1", "2", "3"}
    # "Jan" is a name far more often than January.
    assert stems(["jan"]) != stems(["january"])
    # "Sat 14 Mar" answers "Saturday the 14th" word for word.
    assert set(analyze("Saturday, the 14th of March")) >= set(analyze("Sat 14 Mar"))
