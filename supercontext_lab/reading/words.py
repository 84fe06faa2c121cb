"""Words: the one analyzer of the package.

Every place that turns text into words goes through this module, so they all agree about
what a word is and which words match:

* :func:`words` splits text into lower-cased words: runs of Unicode letters, digits and
  combining marks (so ``हिन्दी`` and ``résumé`` stay one word); ``_``, hyphens,
  apostrophes, punctuation, symbols and emoji separate words;
* :func:`identifiers` finds the identifiers of a text, words joined by ``-``, ``.``,
  ``_`` or ``/`` ("B-12", "v5.0.2", "CHG-2093", "db-east", "2026-03-01"): each is a term
  of its own, whole (``b·12``), beside the terms of its parts, so a question about "B-12"
  finds the note on B-12 before every note with a "12" in it;
* :func:`analyze` turns text into search terms: its words with compatibility characters
  folded (``ﬁ`` → ``fi``, full-width ``Ａ`` → ``a``), diacritics removed from Latin letters
  (``é`` → ``e``, as SQLite's ``unicode61 remove_diacritics 2`` does; other scripts keep
  their marks) and stemmed (:func:`stem`: the Snowball English stemmer, with the word
  forms it leaves apart joined: ``submission`` and ``submit`` are ``submit``), then its
  identifiers whole;
* :func:`keywords` keeps the content words of a request (stop words and one- or
  two-letter words dropped), and :func:`overlap` counts the shared terms of two texts.

The memory index stores :func:`analyze` terms, the skill registry search ranks by them and
the offline scout picks its keywords and scores overlaps with them: ``Café résumé`` is
``café résumé`` as words and ``caf resum`` as terms everywhere.

Deterministic on purpose (the stemmer is snowballstemmer's pure-Python Snowball, the same
algorithm Sphinx and Whoosh use): the offline models must behave the same on every
machine so notebooks and tests can compare their output exactly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import snowballstemmer

__all__ = [
    "ANALYZER_VERSION",
    "IDENTIFIER_JOIN",
    "STOPWORDS",
    "analyze",
    "content_terms",
    "identifiers",
    "keywords",
    "overlap",
    "stem",
    "stems",
    "unique_terms",
    "without_identifiers",
    "words",
]

#: Bumped whenever :func:`analyze` changes, so memory indexes built with an older
#: analysis rebuild.
ANALYZER_VERSION = 6

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during
    each few for from further get got had has have having he her here hers herself him
    himself his how i if in into is it its itself just let like make me more most my
    myself need needs no nor not now of off on once only or other our ours ourselves out
    over own please same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very want
    was we were what when where which while who whom why will with would you your yours
    yourself yourselves help us know tell give show find thing things something anything
    ok okay hi hello hey thanks thank yes lot really
    per il lo la le gli un una uno di da del della che e è in con su mi ti ci puoi
    one two three four five week weeks day days month months year years
    """.split()
)
"""Words too common to say what a text is about (English and Italian)."""


def _word_pattern() -> re.Pattern[str]:
    # Python's \w leaves out combining marks, which would cut words of Indic and other
    # scripts apart; the marks of the Basic Multilingual Plane are added explicitly.
    ranges: list[str] = []
    start: int | None = None
    for cp in range(0x10001):
        is_mark = cp < 0x10000 and unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me")
        if is_mark and start is None:
            start = cp
        elif not is_mark and start is not None:
            ranges.append(f"\\u{start:04x}-\\u{cp - 1:04x}")
            start = None
    return re.compile(f"(?:[^\\W_]|[{''.join(ranges)}])+")


_WORD = _word_pattern()
_ASCII_SEPARATORS = str.maketrans(
    dict.fromkeys((chr(c) for c in range(128) if not chr(c).isalnum()), " ")
)
# Analysing a word is pure, so it is cached; the bound keeps memory flat on huge corpora.
_CACHE_LIMIT = 200_000
_single: dict[str, str] = {}  # words giving exactly one term
_other: dict[str, tuple[str, ...]] = {}  # words giving none or several


def _split(text: str) -> list[str]:
    # For ASCII text, translate-and-split finds the same words as the pattern, faster.
    if text.isascii():
        return text.translate(_ASCII_SEPARATORS).split()
    return _WORD.findall(text)


def words(text: str) -> list[str]:
    """The lower-cased words of ``text``, in order, repeats included."""
    return [word.lower() for word in _split(text)]


_ENGLISH = snowballstemmer.stemmer("english")
# Word forms a Porter-family stemmer leaves apart, joined at the stem's end:
# submission/submit, decision/decide, conclusion/conclude, assumption/assume,
# description/describe, reduction/reduce, application/apply, revision/revise.
_DERIVED = (
    ("miss", "mit"),
    ("cis", "cid"),
    ("clus", "clud"),
    ("sumpt", "sum"),
    ("script", "scrib"),
    ("duct", "duc"),
    ("plic", "pli"),
    ("vis", "vid"),
)


# How notes shorten a calendar ("Sat 14 Mar", "Tues.") where a request writes it out
# ("Saturday the 14th"). "Jan" is left out: it is a name far more often than January.
_CALENDAR = {
    **dict.fromkeys(("mon",), "monday"),
    **dict.fromkeys(("tue", "tues"), "tuesday"),
    **dict.fromkeys(("wed",), "wednesday"),
    **dict.fromkeys(("thu", "thur", "thurs"), "thursday"),
    **dict.fromkeys(("fri",), "friday"),
    **dict.fromkeys(("sat",), "saturday"),
    **dict.fromkeys(("sun",), "sunday"),
    **dict.fromkeys(("feb",), "february"),
    **dict.fromkeys(("mar",), "march"),
    **dict.fromkeys(("apr",), "april"),
    **dict.fromkeys(("jun",), "june"),
    **dict.fromkeys(("jul",), "july"),
    **dict.fromkeys(("aug",), "august"),
    **dict.fromkeys(("sep", "sept"), "september"),
    **dict.fromkeys(("oct",), "october"),
    **dict.fromkeys(("nov",), "november"),
    **dict.fromkeys(("dec",), "december"),
}
_ORDINAL = re.compile(r"(\d{1,2})(?:st|nd|rd|th)")


def stem(word: str) -> str:
    """The stem of one word: Snowball English for words of ASCII letters (``deadlines`` →
    ``deadlin``, ``formatted`` → ``format``), with derived forms joined (``submission`` →
    ``submit``, ``electrician`` and ``electrical`` are ``electr``); a day's or month's short name is its name (``sat`` → ``saturday``) and an
    ordinal its number (``14th`` → ``14``); any other word as it is, lower-cased."""
    word = word.lower()
    ordinal = _ORDINAL.fullmatch(word)
    if ordinal is not None:
        return ordinal.group(1)
    word = _CALENDAR.get(word, word)
    if len(word) <= 3 or not (word.isascii() and word.isalpha()):
        return word
    stemmed: str = _ENGLISH.stemWord(word)
    if stemmed.endswith("ment") and len(stemmed) >= 8:
        # Snowball keeps "shipment" and "agreement" whole but cuts "deployment": the noun
        # of a verb is the verb ("shipment" → "ship", "settlement" → "settl"). A shorter
        # root is too often another word ("comment" is no "com").
        return stem(stemmed[:-4])
    if stemmed.endswith("ician") and len(stemmed) >= 8:
        # The one who does a thing is the thing: "electrician" is "electric" ("electr"),
        # "technician" "technic", "statistician" "statistic"; Snowball keeps them whole.
        return stem(stemmed[:-3])
    if stemmed.endswith("aint") and len(stemmed) >= 8:
        # "complaint", "restraint", "constraint": the noun of "complain", kept apart too.
        return stemmed[:-1]
    for tail, root in _DERIVED:
        if stemmed.endswith(tail) and len(stemmed) >= len(tail) + 2:
            return stemmed[: -len(tail)] + root
    return stemmed


IDENTIFIER_JOIN = "\u00b7"
"""What joins an identifier's parts in its term (``b·12``): a character the index's
tokenizer keeps inside a token and no word holds."""
_JOINERS = "-._/"
_IDENTIFIER = re.compile(r"[^\W_]+(?:[-._/][^\W_]+)+")
_LONGEST_IDENTIFIER = 40
_MOST_PARTS = 6


def identifiers(text: str) -> list[str]:
    """The identifiers of ``text`` as written, lower-cased, in order: two to six words
    joined by ``-``, ``.``, ``_`` or ``/`` with no space, at most 40 characters."""
    return [
        token.lower()
        for token in (m.group(0) for m in _IDENTIFIER.finditer(text))
        if len(token) <= _LONGEST_IDENTIFIER and len(_WORD.findall(token)) <= _MOST_PARTS
    ]


def without_identifiers(text: str) -> str:
    """``text`` with its identifiers blanked out: what it says apart from them."""
    return _IDENTIFIER.sub(" ", text)


def _identifier_term(token: str) -> str:
    return IDENTIFIER_JOIN.join(_fold(part) for part in _WORD.findall(token))


def _is_latin(ch: str) -> bool:
    # Latin-1 Supplement, Latin Extended-A/B and Latin Extended Additional, plus ASCII.
    return ch.isalpha() and (ch < "\u0250" or "\u1e00" <= ch <= "\u1eff")


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    kept: list[str] = []
    base_is_latin = False
    for ch in decomposed:
        if unicodedata.category(ch) == "Mn":
            if base_is_latin:
                continue
        else:
            base_is_latin = _is_latin(ch)
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept)).lower()


def _analyze_word(word: str) -> tuple[str, ...]:
    lowered = word.lower()
    if any(joiner in lowered for joiner in _JOINERS) and _IDENTIFIER.fullmatch(lowered):
        return (_identifier_term(lowered),)  # an identifier, whole (see identifiers())
    if lowered.isascii():
        return (stem(lowered),)
    # Folding can expose separators (``½`` → ``1⁄2``), so the folded text is split again.
    parts = _WORD.findall(_fold(lowered))
    # A run of marks with no letter or digit (a stray accent) is not a word.
    return tuple(stem(part) for part in parts if any(ch.isalnum() for ch in part))


def _remember(word: str, analysed: tuple[str, ...]) -> None:
    if len(analysed) == 1:
        if len(_single) >= _CACHE_LIMIT:
            _single.clear()
        _single[word] = analysed[0]
    else:
        if len(_other) >= _CACHE_LIMIT:
            _other.clear()
        _other[word] = analysed


def _terms(tokens: Iterable[str]) -> list[str]:
    terms: list[str] = []
    single = _single
    for word in tokens:
        term = single.get(word)
        if term is not None:
            terms.append(term)
            continue
        analysed = _other.get(word)
        if analysed is None:
            analysed = _analyze_word(word)
            _remember(word, analysed)
        terms.extend(analysed)
    return terms


def analyze(text: str) -> list[str]:
    """The search terms of ``text`` in order, repeats included, then its identifiers
    whole."""
    tokens = _split(text)
    try:
        # Nearly every word, once seen, is known to give exactly one term.
        terms = [_single[word] for word in tokens]
    except KeyError:
        terms = _terms(tokens)
    if any(joiner in text for joiner in _JOINERS):
        terms.extend(_terms(identifiers(text)))
    return terms


def unique_terms(text: str) -> list[str]:
    """The distinct search terms of ``text`` in order of first appearance."""
    return list(dict.fromkeys(analyze(text)))


def keywords(text: str) -> list[str]:
    """Content words of ``text`` in order of first appearance: stop words and words of
    one or two letters (not digits) dropped; then its identifiers, whole ("b-12")."""
    seen: set[str] = set()
    out: list[str] = []
    for word in [*words(text), *identifiers(text)]:
        if word in STOPWORDS or (len(word) < 3 and not word.isdigit()):
            continue
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def stems(items: Iterable[str]) -> set[str]:
    """The search terms of ``items`` (words, as :func:`keywords` gives them)."""
    return set(_terms(items))


def content_terms(text: str) -> set[str]:
    """The search terms of ``text``'s words that are not stop words."""
    return stems(word for word in words(text) if word not in STOPWORDS)


def overlap(query_terms: set[str], text: str) -> int:
    """How many of ``query_terms`` occur in ``text`` (as terms of its keywords)."""
    return len(query_terms & stems(keywords(text)))
