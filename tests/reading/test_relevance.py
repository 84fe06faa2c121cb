"""The relevance rule: what a request asks about, when facts cover it, what fits it."""

from __future__ import annotations

import pytest

from supercontext_lab.reading.relevance import coverage, name_fit, request_terms, sentence_shapes
from supercontext_lab.reading.words import keywords, stems


def test_task_words_are_not_what_a_request_is_about() -> None:
    terms = request_terms("Help me finish the sensitivity analysis section for the grant renewal")
    assert set(terms.key) == stems(["sensitivity", "analysis", "grant", "renewal"])
    assert "finish" not in terms.words and "section" not in terms.words


def test_an_off_topic_request_is_not_covered_by_one_shared_word() -> None:
    request = request_terms("Help me finish the sensitivity analysis section for the grant renewal")
    facts = [
        "The dive permit for Kelp Bay was signed on 3 September (memory: global/permits)",
        "PhD student in marine biology; analysis in R (profile)",
    ]
    covered = coverage(request, facts)
    assert not covered.enough
    assert covered.missing_line() == "nothing found on sensitivity, grant, renewal"


def test_facts_on_the_topic_cover_the_request() -> None:
    request = request_terms("When is my committee meeting?")
    facts = ["The committee meeting is on 14 March at 10.30 in Room 2.14 (memory: phd/committee)"]
    assert coverage(request, facts).enough


@pytest.mark.parametrize(
    ("key", "covered", "enough"),
    [(1, 1, True), (2, 1, False), (2, 2, True), (3, 2, True), (4, 2, False), (4, 3, True)],
)
def test_more_than_half_of_the_key_terms_must_be_covered(
    key: int, covered: int, enough: bool
) -> None:
    words = ["alpha", "bravo", "charlie", "delta"][:key]
    request = request_terms(" ".join(words))
    fact = f"Notes on {' and '.join(words[:covered])} are here"
    assert coverage(request, [fact]).enough is enough


@pytest.mark.parametrize(
    "fact",
    [
        "booking, deadline, ferry, the, islands",
        "booking\nthe\ndeadline\nferry\nislands",
        "booking deadline",
        "ferry booking deadline islands",
    ],
)
def test_a_bare_list_of_words_covers_nothing(fact: str) -> None:
    assert not coverage(request_terms("What is the ferry booking deadline?"), [fact]).enough


@pytest.mark.parametrize(
    "fact",
    [
        "The ferry booking deadline is 3 May.",
        "Ferry — booking deadline: 3 May",
        "2026-05-03: ferry booking deadline moved to noon",
    ],
)
def test_a_sentence_a_row_or_a_log_line_covers(fact: str) -> None:
    assert coverage(request_terms("What is the ferry booking deadline?"), [fact]).enough


def test_a_request_of_task_words_only_is_covered_by_any_fact() -> None:
    assert coverage(request_terms("Summarise the latest notes"), ["anything"]).enough


@pytest.mark.parametrize(
    ("request_text", "shape"),
    [
        ("When is the budget approval due?", "date"),
        ("How many bikes do I own?", "number"),
        ("Who checks the kernel statistics?", "person"),
        ("Where is the defence?", "place"),
    ],
)
def test_question_words_ask_for_an_answer_shape(request_text: str, shape: str) -> None:
    assert shape in request_terms(request_text).shapes


@pytest.mark.parametrize(
    ("sentence", "shape"),
    [
        ("The meeting is on 14 March at 10.30.", "date"),
        ("Due 2026-12-15 at 14:00 CET.", "date"),
        ("I've got three of them now.", "number"),
        ("The budget is EUR 1.18 million.", "number"),
        ("Statistics are checked by Amara Okafor.", "person"),
        ("The defence is in Room 2.14 of the Marine Building.", "place"),
    ],
)
def test_sentences_have_shapes(sentence: str, shape: str) -> None:
    assert shape in sentence_shapes(sentence)


def test_one_shared_word_does_not_fit_a_name() -> None:
    query = stems(keywords("How do I book the boat for the October dives and who approves it?"))
    assert name_fit(query, "dive-log-tidy Dive log tidy", "Tidies dive logs into a table.") == 0
    tidy = stems(keywords("Tidy up my dive log from Saturday"))
    assert name_fit(tidy, "dive-log-tidy Dive log tidy", "Tidies dive logs into a table.") == 3


def test_a_skill_the_notes_name_fits_on_one_shared_word() -> None:
    query = stems(keywords("Email Priya the renewal budget for sign-off"))
    about = "Checks a grant budget spreadsheet against the funder's rules."
    assert name_fit(query, "grant-budget-check", about) == 0
    assert name_fit(query, "grant-budget-check", about, in_notes=True) == 1


def test_every_name_the_request_gives_must_be_covered() -> None:
    request = request_terms("What's the maximum length of a table name in MySQL?")
    assert request.names == tuple(stems(["mysql"]))
    postgres = ["The maximum length of a table name in Postgres is 63 bytes (memory: pg/limits)"]
    covered = coverage(request, postgres)
    assert len(covered.covered) > len(covered.key) / 2
    assert not covered.enough
    assert covered.missing_line() == "nothing found on mysql"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Has Amara's letter arrived?", ["amara"]),
        ("Aurora is slow. Why?", []),  # a capital that opens a sentence is no sign
        ("Move the forms API to Auth0 and iOS", ["api", "auth0", "ios"]),
        ("when is the grant renewal due", []),
    ],
)
def test_names_are_words_written_as_names(text: str, names: list[str]) -> None:
    assert set(request_terms(text).names) == stems(names)


def test_a_date_or_figure_asked_for_must_be_in_a_fact_on_the_topic() -> None:
    request = request_terms("How much would the Auth0 Enterprise subscription cost per year?")
    assert "number" in request.shapes
    facts = ["An Enterprise Subscription to Auth0 may be required for support (memory: adr/x)"]
    covered = coverage(request, facts)
    assert not covered.enough
    assert covered.missing_line().endswith("no figure on the topic was found")
    priced = ["The Auth0 Enterprise subscription costs 12,000 GBP a year (memory: adr/x)"]
    assert coverage(request, priced).enough


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("When is the committee meeting?", True),
        ("Which option is safer when I share the branch?", False),
        ("Who checks it, and when does it start?", True),
    ],
)
def test_when_asks_for_a_date_only_as_a_question(text: str, date: bool) -> None:
    assert ("date" in request_terms(text).shapes) is date


def test_two_letter_names_count_and_are_found_in_facts() -> None:
    request = request_terms("How do I change the VS Code shortcut for the terminal?")
    assert "vs" in request.names
    covered = coverage(request, ["To change the terminal shortcut in VS Code, open keybindings."])
    assert "vs" in covered.covered


def test_names_are_what_a_text_writes_as_names_less_dates_times_and_prices() -> None:
    from supercontext_lab.reading.relevance import names_in

    text = "ok, Harbour Room at 7.30pm Weds 14 Oct, £58pp; quote SV-Q-0932 via MySQL."
    assert names_in(text) == {"harbour", "room", "sv-q-0932", "mysql"}
    assert names_in("Monday at noon, the 14th") == frozenset()
