"""Sentences break where a reader would and nowhere else: abbreviations, titles, initials,
numbers, addresses, quotes, ellipses, other scripts and inline lists; any text, in linear
time."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reliability.support import timed_in_child

from benchmarks.segmenter_cases import CORPORA
from supercontext_lab.reading.sentences import ABBREVIATIONS, Kind, split_sentences

ONE = "one"
"""An expectation: the text is one sentence."""


def _case(text: str, *sentences: str) -> tuple[str, list[str]]:
    return text, list(sentences) if sentences else [text]


SPLITS = {
    # A committee and a meeting, from a PhD student's notes.
    "committee": _case(
        "Committee: Prof. Henrik Aalto (chair), Dr. Nkechi Obi, Dr. Paul Ferreira (external)."
    ),
    "meeting": _case(
        "The meeting is on 14 March at 10.30 in Room 2.14. Bring the draft.",
        "The meeting is on 14 March at 10.30 in Room 2.14.",
        "Bring the draft.",
    ),
    # Titles come before a name.
    "Dr.": _case("Ask Dr. Obi about the permit."),
    "Prof.": _case("Prof. Aalto chairs it."),
    "Mr. Mrs. Ms. Mx.": _case("Mr. Lee, Mrs. Obi, Ms. Ray and Mx. Rivera signed."),
    "St. Mt.": _case("The boat leaves St. Abbs for Mt. Batten."),
    # Abbreviations inside a sentence.
    "vs.": _case("St. Andrews vs. Dunbar: cover differs."),
    "e.g.": _case("Use a common tool, e.g. Python or R."),
    "i.e.": _case("The last site, i.e. Site 12, is the deepest."),
    "cf.": _case("The trend holds, cf. Table 3 of the report."),
    "approx.": _case("It costs approx. EUR 450 a day."),
    "ca.": _case("We counted ca. 300 urchins."),
    "et al. (2019)": _case("As Ortega et al. (2019) showed, kelp fell by 40%."),
    "et al. then a sentence": _case(
        "We compared our data with Ortega et al. The trend is the same.",
        "We compared our data with Ortega et al.",
        "The trend is the same.",
    ),
    "No. 5": _case("Logger T2 was lost at site No. 5 in the storm."),
    "said no.": _case("She said no. Then she signed.", "She said no.", "Then she signed."),
    "No. as an answer": _case("No. Then what?", "No.", "Then what?"),
    "Fig. Eq. Sec.": _case("See Fig. 2, fig. 3, Eq. 4 and Sec. 3.1 for the fit."),
    "Vol. pp. p.": _case("Read Vol. 2, pp. 20–25 and p. 14."),
    "Fig. S1": _case("The map is in Fig. S1 of the supplement."),
    "Inc. Ltd. Co. Corp.": _case("Acme Inc. and Boats Ltd. sold it to Pitt & Co. in May."),
    "Co. ends": _case(
        "They closed the deal with Pitt, Briggs & Co. It closed yesterday.",
        "They closed the deal with Pitt, Briggs & Co.",
        "It closed yesterday.",
    ),
    "Dept. Univ.": _case("The Dept. of Marine Science at the Univ. of Oslo agreed."),
    "Jr.": _case("Martin Smith Jr. was the skipper."),
    "etc. and": _case("Bring masks, fins, etc. and the first-aid kit."),
    "etc. ends": _case(
        "Still to write: methods, statistics, etc. The deadline is Friday.",
        "Still to write: methods, statistics, etc.",
        "The deadline is Friday.",
    ),
    # Months and weekdays.
    "Mar. 2026": _case("The permit expires on 14 Mar. 2026 at noon."),
    "Mon. 6 Oct.": _case("Dives on Mon. 6 Oct. and Tue. 7 Oct., weather permitting."),
    "Oct. ends": _case(
        "Results are due on Fri. 10 Oct. Send them to Dr. Ferreira.",
        "Results are due on Fri. 10 Oct.",
        "Send them to Dr. Ferreira.",
    ),
    # Times.
    "10.30 and 10:30": _case("Sampling at 10.30 and 10:30 on both days."),
    "9 a.m. sharp": _case("Meet at the harbour at 9 a.m. sharp."),
    "9 a.m. Tuesday": _case("The boat leaves at 9 a.m. Tuesday from the pier."),
    "4 p.m. CET": _case(
        "The call is at 4 p.m. CET. They share the data.",
        "The call is at 4 p.m. CET.",
        "They share the data.",
    ),
    "a.m. ends": _case(
        "The boat leaves St. Abbs at 9 a.m. The crossing takes 40 min.",
        "The boat leaves St. Abbs at 9 a.m.",
        "The crossing takes 40 min.",
    ),
    "a.m. opens": _case(
        "At 5 a.m. Mr. Smith went to the bank. He left the bank at 6 P.M. Mr. Smith then "
        "went to the store.",
        "At 5 a.m. Mr. Smith went to the bank.",
        "He left the bank at 6 P.M.",
        "Mr. Smith then went to the store.",
    ),
    # Initialisms.
    "U.S. Government": _case("I work for the U.S. Government in Virginia."),
    "U.S. How": _case("I live in the U.S. How about you?", "I live in the U.S.", "How about you?"),
    "U.K. and": _case("All sites in the U.K. and one in Norway."),
    "E.U. ends": _case("I live in the E.U. How about you?", "I live in the E.U.", "How about you?"),
    "Ph.D. ends": _case(
        "She holds a Ph.D. The thesis was on kelp.", "She holds a Ph.D.", "The thesis was on kelp."
    ),
    # Initials.
    "H. Aalto": _case("The permit was signed by H. Aalto on Monday."),
    "J. R. R. Tolkien": _case("J. R. R. Tolkien drew the maps."),
    "J.R.R. Tolkien": _case("J.R.R. Tolkien drew the maps."),
    "Smith, J. and": _case("Follow Smith, J. and Tanaka, K. (2021) for the transects."),
    "Albert I. Jones": _case("Did you see Albert I. Jones yesterday?"),
    "you and I.": _case(
        "We make a good team, you and I. Did you see him?",
        "We make a good team, you and I.",
        "Did you see him?",
    ),
    "Plan B.": _case(
        "We go with Plan B. The boat is broken.", "We go with Plan B.", "The boat is broken."
    ),
    # Numbers.
    "decimals": _case("Cover fell by 2.5 points, 0.35 a year."),
    "versions": _case("Use v1.2.3 of the scripts with Python 3.11.7 and not 1.3.0-rc1."),
    "dates": _case("Signed 12.03.2026, filed 2026-03-12."),
    "Section 3.2": _case("Maya drafts Section 3.2 text today."),
    "a number ends": _case(
        "She has $100.00. It is in her bag.", "She has $100.00.", "It is in her bag."
    ),
    "a date ends": _case("Filed on 12.03.2026. Then sent.", "Filed on 12.03.2026.", "Then sent."),
    "Aim 1. as a label": _case("Aim 1. Map kelp cover at the 12 sites."),
    "Aim 1. ends": _case(
        "We finished Aim 1. Next is Aim 2.", "We finished Aim 1.", "Next is Aim 2."
    ),
    "a digit starts": _case(
        "Samples sit in box 4. 5 more arrive.", "Samples sit in box 4.", "5 more arrive."
    ),
    # Addresses and file names.
    "URL": _case(
        "The site is https://www.example.org/new/awesome.html. Please check it.",
        "The site is https://www.example.org/new/awesome.html.",
        "Please check it.",
    ),
    "e-mail": _case(
        "Her email is Jane.Doe@example.com. I wrote.",
        "Her email is Jane.Doe@example.com.",
        "I wrote.",
    ),
    "file names": _case(
        "Write methods.md, then export report.pdf. Dr. Obi reads notes.md first.",
        "Write methods.md, then export report.pdf.",
        "Dr. Obi reads notes.md first.",
    ),
    "no space, no break": _case("See end.Next and A.B.C.D for it."),
    # Ellipses.
    "... then a sentence": _case(
        "I asked about the boat... Nothing yet.", "I asked about the boat...", "Nothing yet."
    ),
    "… then a sentence": _case("I waited… Then he came.", "I waited…", "Then he came."),
    "… inside": _case("The survey found 12 species … mostly algae."),
    "... I": _case("The thing is . . . I didn't mean it."),
    "four dots": _case("I never meant that.... She left.", "I never meant that....", "She left."),
    "[...]": _case('"Bohr [...] used the analogy of stairways [...]" (Smith 55).'),
    # Quotes and brackets after the full stop.
    'said "yes." Then': _case('He said "yes." Then he left.', 'He said "yes."', "Then he left."),
    "'great.' she said": _case("She turned to him, 'This is great.' she said."),
    "curly quotes": _case("“Done.” Next we dive.", "“Done.”", "Next we dive."),
    "(…) inside": _case("He teaches (He worked 5 years as an engineer.) at the University."),
    "(…) ends": _case(
        "Use the new protocol (see notes.) Then dive.",
        "Use the new protocol (see notes.)",
        "Then dive.",
    ),
    # Runs of ! and ?.
    "?!": _case(
        "Did the logger survive?! Nobody knows.", "Did the logger survive?!", "Nobody knows."
    ),
    "!!": _case("Hello!! Long time no see.", "Hello!!", "Long time no see."),
    "Yahoo! in": _case("She works at Yahoo! in the accounting department."),
    # Sentences typed in lower case.
    "lower-case openers": _case(
        "you don't know what that means? where did you grow up? india? i think so. so it goes",
        "you don't know what that means?",
        "where did you grow up? india?",
        "i think so.",
        "so it goes",
    ),
    "no opener after a quotation": _case("'This is great.' she said, 'it works.' then left."),
    "no opener after an abbreviation": _case("Laminaria sp. the kelp, and Mr. he said, p. it."),
    "no opener after an ellipsis": _case("I mean . . . what I'm saying is this."),
    "a web address starts": _case(
        "Well worth a visit. http://example.org/blog/ www.example.org",
        "Well worth a visit.",
        "http://example.org/blog/ www.example.org",
    ),
    "P.S.": _case(
        "P.S. I am moving back to Calgary. PS. Love the new website!",
        "P.S. I am moving back to Calgary.",
        "PS. Love the new website!",
    ),
    "ext.": _case("Call Vladi Pimenov ext. 37625 or Tel. 555 0101."),
    # Other scripts.
    "Chinese": _case("数据已上传。明天讨论！好吗？", "数据已上传。", "明天讨论！", "好吗？"),
    "Japanese quote": _case("「完了。」次は潜水。", "「完了。」", "次は潜水。"),
    "Hindi": _case("नमस्ते। आप कैसे हैं? ठीक है।", "नमस्ते।", "आप कैसे हैं?", "ठीक है।"),
    "Arabic": _case("مرحبا؟ كيف حالك", "مرحبا؟", "كيف حالك"),
    "Armenian": _case("Բարև։ Ինչպես ես", "Բարև։", "Ինչպես ես"),
    "Latin then CJK": _case("Done. 完成。", "Done.", "完成。"),
    # Inline lists.
    "1. 2.": _case(
        "1. The first item 2. The second item", "1. The first item", "2. The second item"
    ),
    "1) 2)": _case(
        "1) The first item 2) The second item", "1) The first item", "2) The second item"
    ),
    "a. b. c.": _case(
        "a. The first item b. The second item c. The third item",
        "a. The first item",
        "b. The second item",
        "c. The third item",
    ),
    "• 9. • 10.": _case(
        "• 9. The first item • 10. The second item", "• 9. The first item", "• 10. The second item"
    ),
    "Section 2. is no item": _case(
        "1. Read Section 2. Then write.", "1. Read Section 2.", "Then write."
    ),
    "bullets between words": _case("Tools: Python • R • SQL."),
    "no label, no list": _case("Steps: 1. download the casts 2. clean them 3. plot them."),
}


@pytest.mark.parametrize(("text", "expected"), list(SPLITS.values()), ids=list(SPLITS))
def test_sentences_break_where_a_reader_would(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


LABELLED = {
    f"{corpus} {number}": case
    for corpus, cases in CORPORA.items()
    for number, case in enumerate(cases, 1)
}


@pytest.mark.parametrize(("text", "expected"), list(LABELLED.values()), ids=list(LABELLED))
def test_the_labelled_corpora_of_the_benchmark_are_split_as_labelled(
    text: str, expected: list[str]
) -> None:
    """pySBD's Golden Rules and the notes of ``python -m benchmarks segmenter``."""
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", " ", "\n\t ", "\u3000\u2028"],
    ids=["empty", "space", "whitespace", "unicode whitespace"],
)
def test_no_text_is_no_sentence(text: str) -> None:
    assert split_sentences(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("...", ["..."]),
        ("?!", ["?!"]),
        (". . .", [". . ."]),
        ("a\nb.\n\nC  d.", ["a b.", "C d."]),
        ("\x00. A\ud800. B", ["\x00.", "A\ud800.", "B"]),
    ],
    ids=["dots", "marks", "spaced dots", "newlines", "NUL and a lone surrogate"],
)
def test_odd_text_is_split_and_kept_whole(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


#: Every abbreviation the issue lists: each must be in the table.
LISTED = """
Dr. Prof. Mr. Mrs. Ms. Mx. St. Mt. Jr. Sr. vs. etc. e.g. i.e. cf. al. approx. ca. no. No.
Fig. fig. Eq. Sec. Vol. pp. p. Inc. Ltd. Co. Corp. Dept. Univ. a.m. p.m. U.S. U.K. E.U.
Jan. Feb. Mar. Apr. Jun. Jul. Aug. Sep. Oct. Nov. Dec. Mon. Tue. Wed. Thu. Fri. Sat. Sun.
""".split()


def test_the_table_knows_every_listed_abbreviation() -> None:
    def known(word: str) -> bool:
        return word[:-1] in ABBREVIATIONS or word[:-1].lower() in ABBREVIATIONS

    assert [word for word in LISTED if not known(word)] == []


def _kind_cases() -> list[tuple[str, list[str]]]:
    """Two sentences for every abbreviation of the table: one where its full stop is not
    the end of the sentence, and (for kinds that may end one) one where it is."""
    out: list[tuple[str, list[str]]] = []
    for key, kind in sorted(ABBREVIATIONS.items(), key=lambda item: item[0]):
        for word in dict.fromkeys((key, key.upper()) if "." in key else (key,)):
            abbr = f"{word}."
            if kind is Kind.TITLE:
                out.append(_case(f"We met {abbr} Aalto today."))
            elif kind is Kind.INLINE:
                out.append(_case(f"Bring tools, {abbr} Hammers and saws."))
            elif kind is Kind.NUMBER:
                out.append(_case(f"See {abbr} 5 for the details."))
                out.append(
                    _case(
                        f"We asked about {abbr} Then we left.",
                        f"We asked about {abbr}",
                        "Then we left.",
                    )
                )
            elif kind is Kind.TIME:
                out.append(_case(f"The boat leaves at 9 {abbr} Tuesday."))
                out.append(
                    _case(
                        f"The boat leaves the pier at 9 {abbr} The crossing is short.",
                        f"The boat leaves the pier at 9 {abbr}",
                        "The crossing is short.",
                    )
                )
            elif kind is Kind.INITIALISM:
                out.append(_case(f"I work for the {abbr} Government in Virginia."))
                out.append(
                    _case(
                        f"I live in the {abbr} How about you?",
                        f"I live in the {abbr}",
                        "How about you?",
                    )
                )
            else:
                out.append(_case(f"Pens, {abbr} and paper."))
                out.append(
                    _case(
                        f"Pens, {abbr} The order goes out.", f"Pens, {abbr}", "The order goes out."
                    )
                )
    return out


KIND_CASES = _kind_cases()


@pytest.mark.parametrize(("text", "expected"), KIND_CASES, ids=[text for text, _ in KIND_CASES])
def test_every_abbreviation_behaves_as_its_kind_says(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


# Text made mostly of what the rules look at: terminators, closing and opening marks,
# abbreviations, labels, numbers, other scripts, odd characters and whitespace.
_PIECES = st.sampled_from(
    [
        ".",
        "!",
        "?",
        "…",
        "...",
        " . . . ",
        "。",
        "！",
        "？",
        "।",
        "．",
        '"',
        "'",
        "”",
        "(",
        ")",
        "[",
        "]",
        "「",
        "」",
        "•",
        "⁃",
        " ",
        "  ",
        "\n",
        "\t",
        "\u3000",
        "\x00",
        "\x1c",
        "\ud800",
        "Dr.",
        "e.g.",
        "U.S.",
        "a.m.",
        "No.",
        "etc.",
        "Fig.",
        "al.",
        "1.",
        "2.",
        "a)",
        "b)",
        "I.",
        "A.",
        "Aim",
        "The",
        "the",
        "you",
        "Smith",
        "2.5",
        "v1.2",
        "$5",
        "#tag",
        "中",
        "é",
    ]
)
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=40).map("".join)
_HARD_STOPS = "。！？｡"
_CLOSING = "\"'”’»›)]}*_`」』）】〕〉》〗〙〛＂＇"


def _assert_rebuilds(text: str, sentences: list[str]) -> None:
    """Joined with single spaces, ``sentences`` give ``text`` with its whitespace
    collapsed; the one place a break may have no space is after an ideographic stop."""
    flat = " ".join(text.split())
    at = 0
    for sentence in sentences:
        assert sentence and sentence == sentence.strip()
        assert flat.startswith(sentence, at), (flat, sentences)
        at += len(sentence)
        if at < len(flat):
            if flat[at] == " ":
                at += 1
            else:
                assert sentence.rstrip(_CLOSING)[-1] in _HARD_STOPS, (flat, sentences)
    assert at == len(flat), (flat, sentences)


@settings(max_examples=400)
@given(_TEXT)
def test_any_text_splits_into_sentences_that_rebuild_it(text: str) -> None:
    sentences = split_sentences(text)
    _assert_rebuilds(text, sentences)
    if not any(stop in text for stop in _HARD_STOPS):
        assert " ".join(sentences) == " ".join(text.split())


@given(st.text())
def test_any_str_at_all_is_split_without_raising(text: str) -> None:
    _assert_rebuilds(text, split_sentences(text))


# ---------------------------------------------------------------- linear time

SIZE = 1_000_000
#: Generous: a megabyte of the worst of these takes about a second of CPU time on a busy
#: machine; a quadratic segmenter takes hours. (CPU time: the wait for a core on a shared
#: machine is not the segmenter's.)
ABSOLUTE_S = 10.0
#: The same input at an eighth of the size takes about an eighth of the time; 24 leaves
#: room for a busy machine and is far below the 64 of a quadratic segmenter. Runs under
#: a quarter of a second are not compared (their noise is larger than the signal).
GROWTH = 24.0
FLOOR_S = 0.25

HOSTILE = {
    "'a.' repeated": "a.",
    "'Dr. ' repeated": "Dr. ",
    "words without punctuation": "word ",
    "one word": "x",
    "'A. ' repeated": "A. ",
    "'. ' repeated": ". ",
    "'… ' repeated": "… ",
    "'1. ' repeated": "1. ",
    "'• 1. A ' repeated": "• 1. A ",
    "'x. . . . The ' repeated": "x. . . . The ",
    "'U.S. The ' repeated": "U.S. The ",
    "ideographic stops": "你好。",
    "closing brackets and a full stop": ")).",
    "NUL, lone surrogates and control characters": "\x00\ud800. \x1b? ",
}

_CHILD = """
import json, sys, time
from supercontext_lab.reading.sentences import split_sentences
unit, size = json.loads(sys.argv[1]), int(sys.argv[2])
times = []
for n in (size // 8, size):
    text = (unit * (n // len(unit) + 1))[:n]
    best = float("inf")
    for _ in range(2):
        started = time.process_time()
        split_sentences(text)
        best = min(best, time.process_time() - started)
    times.append(best)
print(json.dumps(times))
"""


@pytest.mark.parametrize("unit", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_megabyte_is_split_in_linear_time(unit: str) -> None:
    """A megabyte of each hostile input: seconds at most, and about eight times what an
    eighth of it takes"""
    small_s, large_s = timed_in_child(
        _CHILD, json.dumps(unit), str(SIZE), what=f"split_sentences on {SIZE:,} characters"
    )
    assert large_s < ABSOLUTE_S, f"{large_s:.2f} s"
    assert large_s < max(GROWTH * small_s, FLOOR_S), (
        f"{large_s * 1e3:.1f} ms for {SIZE:,} characters, {small_s * 1e3:.1f} ms for an eighth"
    )
