"""Text analysis for the memory tree: the one place where text becomes search terms.

Documents and queries go through the same function, :func:`analyze`, so a query term
always matches the term stored for the same word in a document:

* words are runs of Unicode letters, digits and combining marks (so ``हिन्दी`` stays one
  word); ``_``, punctuation, symbols and emoji separate words;
* they are lower-cased, compatibility characters are folded (``ﬁ`` → ``fi``,
  full-width ``Ａ`` → ``a``) and diacritics are removed from Latin letters (``é`` → ``e``,
  as SQLite's ``unicode61 remove_diacritics 2`` does) while other scripts keep their marks;
* the package's one stemmer (:func:`supercontext_lab._words.stem`) folds plurals and
  common endings (``deadlines`` → ``deadlin``, ``queries`` → ``query``, ``formatted`` →
  ``format``), so memory, the skill registry and the offline scout match the same words.

The index stores the analysed terms joined by single spaces, and FTS5 splits them with its
``ascii`` tokenizer. Doing the analysis in Python (rather than in an FTS5 tokenizer) is
what lets the ranking code count term frequencies itself and score BM25 exactly as FTS5
would, without paying for FTS5's per-query document-frequency scans.
"""

from __future__ import annotations

import re
import unicodedata

from ..._words import stem

__all__ = ["ANALYZER_VERSION", "analyze", "unique_terms"]

#: Bumped whenever :func:`analyze` changes, so indexes built with an older analysis rebuild.
ANALYZER_VERSION = 2


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
    if lowered.isascii():
        return (stem(lowered),)
    # Folding can expose separators (``½`` → ``1⁄2``), so the folded text is split again.
    parts = _WORD.findall(_fold(lowered))
    # A run of marks with no letter or digit (a stray accent) is not a word.
    return tuple(stem(part) for part in parts if any(ch.isalnum() for ch in part))


def analyze(text: str) -> list[str]:
    """Return the search terms of ``text`` in order, repeats included."""
    # For ASCII text, translate-and-split finds the same words as the pattern, faster.
    ascii_text = text.isascii()
    words = text.translate(_ASCII_SEPARATORS).split() if ascii_text else _WORD.findall(text)
    single = _single
    try:
        # Nearly every word, once seen, is known to give exactly one term.
        return [single[word] for word in words]
    except KeyError:
        pass
    terms: list[str] = []
    for word in words:
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


def _remember(word: str, analysed: tuple[str, ...]) -> None:
    if len(analysed) == 1:
        if len(_single) >= _CACHE_LIMIT:
            _single.clear()
        _single[word] = analysed[0]
    else:
        if len(_other) >= _CACHE_LIMIT:
            _other.clear()
        _other[word] = analysed


def unique_terms(text: str) -> list[str]:
    """Return the distinct search terms of ``text`` in order of first appearance."""
    return list(dict.fromkeys(analyze(text)))
