"""Sentences: where one paragraph or list item of a note breaks into whole sentences.

:func:`split_sentences` takes one block of a note (a paragraph or a list item that
:func:`supercontext_lab.reading.facts.note_blocks` already joined onto one line) and returns its
sentences. A fact quoted from a note is one of these, so a cut in the wrong place shows
up in every bundle: "Committee: Prof." is not a fact. The rules, in the order they apply:

* A sentence can only end where the text has whitespace, with one exception below. So
  decimals (2.5), versions (v1.2.3), times (10.30, 10:30), dates (12.03.2026),
  references (Section 3.2), URLs, e-mail addresses and file names (report.pdf) never
  break, whatever their dots.
* A chunk of text between two runs of whitespace ends its sentence when, after the
  closing quotes and brackets it carries (``yes."``, ``engineer.)``), it ends in a
  terminator and the next chunk begins like a sentence: after opening quotes and
  brackets, an upper-case or title-case letter, a letter of a script without case
  (CJK, Devanagari, Arabic…), a digit, a currency sign, ``#`` or a web address
  (``https://``, ``www.``). Quickly typed notes start sentences in lower case too, so
  one of a few common openers in lower case ("i", "the", "it", "we", "what", "if"…)
  starts a sentence after ``!``, ``?`` or the full stop of an ordinary word, with no
  quote or bracket in between ("… what that means? where did you grow up?"); any other
  lower-case word never does ("Yahoo! in", "'great.' she said", "Laminaria sp. were").
* ``!``, ``?`` and their runs (``?!``, ``‼``), and the full stops of other scripts that
  put a space after them (Devanagari ``।``, Arabic ``؟`` and ``۔``, Ethiopic ``።``,
  Armenian ``։``, Myanmar ``။``, the full-width ``．``) end a sentence on that rule alone.
* The ideographic full stops ``。 ！ ？ ｡`` end a sentence whatever follows, spaces or
  none: Chinese and Japanese put no space between sentences (the exception).
* An ellipsis (``...``, ``…``, ``. . .``, two dots or more) ends a sentence before a
  capitalised word, except before the pronoun "I", which is capitalised everywhere
  ("the thing is . . . I didn't mean it"); four dots (an ellipsis and a full stop) end
  it before "I" too. An ellipsis in brackets (``[...]``, ``(…)``) marks words left out
  of a quotation and never ends anything. A word's own full stop followed by a spaced
  ellipsis and a capital ("compounds. . . . The practice…") ends the sentence at the
  word: the ellipsis opens the next one, a quotation taken up mid-way.
* A single full stop ends a sentence unless the word it closes says otherwise:

  - an abbreviation from :data:`ABBREVIATIONS` behaves as its kind says (below);
  - a single capital letter is an initial ("H. Aalto", "J. R. R. Tolkien") unless a
    common sentence opener follows ("Plan B. The…"), or it is the pronoun "I" after a
    word in lower case ("you and I. Did you…");
  - letters joined by dots (U.S., Ph.D., J.R.R.) are an initialism, read as
    :attr:`Kind.INITIALISM`;
  - a list label that opens its sentence ("1.", "a.", "2.)") never ends it, nor does
    the number after a capitalised label word ("Aim 1. Fit kernels…", "Step 2. Run…");
  - anything else ("2.14.", "report.pdf.", "etc.") ends the sentence.

* A list written inline starts a new sentence at its next label: when a sentence opens
  with a label ("1.", "a)", "2.)") the next label in sequence ("2.", "b)", "3.)") begins
  another, when a sentence-like word follows it and the word before it is not one that
  takes a number ("see Section 2."); a bullet (``•``, ``⁃``) followed by a label begins
  another too.

The abbreviations it knows, and what each kind's full stop means, are in
:mod:`.abbreviations`.

Every step looks at a fixed number of neighbouring chunks and reads each chunk a fixed
number of times, so the work is linear in the text; no pattern here can backtrack. Any
``str`` is accepted (lone surrogates, NUL and control characters included). Pure Python,
no dependency, the same answer on every machine.
"""

from __future__ import annotations

import re
import unicodedata

from .abbreviations import (
    ABBREVIATIONS,
    ADDRESS_STARTS,
    CALENDAR,
    LONGEST,
    LOWER_OPENERS,
    OPENER_WORDS,
    TAKES_NUMBER,
    Kind,
    abbreviation_kind,
)

__all__ = ["ABBREVIATIONS", "Kind", "split_sentences"]


# Closing quotes and brackets that may follow a sentence's full stop, and emphasis marks.
_CLOSERS = "\"'”’»›)]}*_`」』）】〕〉》〗〙〛＂＇"
# Opening quotes and brackets that may come before a sentence's first word.
_OPENERS = "\"'“‘„«‹([{¿¡*_`「『（【〔〈《〖〘〚＂＇"
_OPENER_SET = frozenset(_OPENERS)
_MARKS = _OPENERS + _CLOSERS
# Terminators that end a sentence when a sentence-like word follows after whitespace.
_STRONG = frozenset("!?‼⁇⁈⁉।॥؟۔።፧։။．")
# Terminators of scripts that write no space between sentences: they end one anyway.
_HARD_CHARS = "。！？｡"
_HARD = frozenset(_HARD_CHARS)
_HARD_ANY = re.compile(f"[{_HARD_CHARS}]")
_HARD_RUN = re.compile(f"[{_HARD_CHARS}]+[{re.escape(_CLOSERS)}]*")
_BULLETS = "•‣⁃◦▪●∙"
_DOTS = ".…"
# The last characters of a chunk that may end a sentence; any other chunk never does.
_MAY_END = frozenset(_DOTS + _CLOSERS) | _STRONG | _HARD
# A list label: a number of up to three digits or one letter, then ".", ".)" or ")".
_LABEL = re.compile(r"(?:(\d{1,3})|([A-Za-z]))(\.\)|\.|\))")
# The number of an aim, a step or a section: "1", "3.2" (a year is not one).
_SECTION_NUMBER = re.compile(r"\d{1,3}(?:\.\d{1,3}){0,3}")
# The leading letters of a word.
_LETTERS = re.compile(r"[^\W\d_]+")


def _next_label(chunk: str) -> str | None:
    """When ``chunk`` is a list label, the label after it ("1." gives "2.", "a)" gives
    "b)", "⁃9." gives "10."); otherwise ``None``."""
    match = _LABEL.fullmatch(chunk.lstrip(_BULLETS))
    if match is None:
        return None
    digits, letter, mark = match.groups()
    if digits is not None:
        return f"{int(digits) + 1}{mark}"
    return None if letter in "zZ" else chr(ord(letter) + 1) + mark


def _chunks(text: str) -> list[str]:
    """``text`` split at whitespace, and after every run of ideographic full stops (with
    the closing marks after it) inside a chunk, so "你好。再见。" is two chunks."""
    if _HARD_ANY.search(text) is None:
        return text.split()
    out: list[str] = []
    for chunk in text.split():
        if _HARD_ANY.search(chunk) is None:
            out.append(chunk)
            continue
        start = 0
        for match in _HARD_RUN.finditer(chunk):
            if match.end() < len(chunk):
                out.append(chunk[start : match.end()])
                start = match.end()
        out.append(chunk[start:])
    return out


def _head(chunk: str) -> str:
    """``chunk`` without its opening quotes and brackets."""
    return chunk.lstrip(_OPENERS)


def _starts(chunk: str) -> bool:
    """Whether ``chunk`` begins the way a sentence does."""
    if not chunk:
        return False
    first = chunk[0]
    if first in _OPENER_SET:
        head = _head(chunk)
        if not head:
            return False
        first = head[0]
    if first.isupper() or first.isdigit():
        return True
    if first.isalpha():
        # Upper case, title case, or a letter of a script without case; or an address.
        return not first.islower() or _head(chunk).startswith(ADDRESS_STARTS)
    return first == "#" or unicodedata.category(first) == "Sc"


def _word(chunk: str) -> str:
    """The leading letters of ``chunk`` after its opening marks ("The" of '"The')."""
    if chunk.isalpha():
        return chunk
    match = _LETTERS.match(_head(chunk)[: LONGEST * 2])
    return match.group() if match else ""


def _capitalised(chunk: str) -> bool:
    head = _head(chunk)
    return bool(head) and head[0].isupper()


def _label_word(chunk: str) -> bool:
    """Whether ``chunk`` is a capitalised word that may head a numbered part ("Aim")."""
    return chunk.isalpha() and chunk[0].isupper()


def _initial(chunk: str) -> bool:
    """Whether ``chunk`` is an initial ("R.", "(J.")."""
    if chunk[:1] in _OPENER_SET:
        chunk = _head(chunk)
    return len(chunk) == 2 and chunk[1] == "." and chunk[0].isupper()


def _numberish(chunk: str) -> bool:
    """Whether ``chunk`` is a number, or a label holding one, after its opening marks:
    "55", "(2020)", "S1", "2a", "II"."""
    head = _head(chunk)
    if not head:
        return False
    if head[0].isdigit():
        return True
    if len(head) >= 2 and head[0].isalpha() and head[1].isdigit():
        return True
    roman = _word(head)
    return 2 <= len(roman) <= 6 and all(ch in "IVXLCDM" for ch in roman)


def _time_zone(word: str) -> bool:
    return 2 <= len(word) <= 5 and word.isupper() and word.isascii()


def _trailing_dots(core: str) -> int:
    """How many dots ``core`` ends with, an ellipsis character counting three."""
    tail = core[len(core.rstrip(_DOTS)) :]
    return tail.count(".") + 3 * tail.count("…")


def _ends(chunks: list[str], index: int, core: str, before: int, dots: int, opening: bool) -> bool:
    """Whether the sentence ends after ``chunks[index]`` (not the last chunk), given
    ``core`` (the chunk without its closing marks), how many chunks of the sentence come
    before it, the dots of the run of dots that ends it (". . ." counts across chunks) and
    whether it opens the sentence as a list label or a run of dots."""
    if not core:
        return False
    last = core[-1]
    if last in _HARD:
        return True
    if last not in _STRONG and (last not in _DOTS or opening):
        return False
    following = chunks[index + 1]
    if _starts(following):
        lower = False
    elif len(core) == len(chunks[index]) and _word(following) in LOWER_OPENERS:
        lower = True  # "… what that means? where did you grow up?"
    else:
        return False
    if last in _STRONG:
        return True
    if dots >= 2:
        return not lower and _after_ellipsis(chunks[index], core, following, dots)
    stem = core[:-1].strip(_MARKS)
    if not stem:
        return True
    if lower:
        # Only an ordinary word ends before a word in lower case: an abbreviation that is
        # not in the table ("Laminaria sp. were…") is far likelier than an initial or a
        # label ending a sentence that goes on in lower case.
        return len(stem) > 1 and "." not in stem and abbreviation_kind(stem) is None
    if before == 1 and _SECTION_NUMBER.fullmatch(stem) and _label_word(chunks[index - 1]):
        return False  # "Aim 1. Fit kernels": a label word and its number open the sentence
    kind = abbreviation_kind(stem)
    if _number_follows(chunks, index) and (
        kind is Kind.NUMBER
        or kind is Kind.ENDING
        or (kind is None and stem.isalpha() and len(stem) <= _SHORT_ABBREVIATION)
    ):
        # A short word with a full stop before a number is an abbreviation the table may
        # not know, a field's own: "Sect. 4.2", "Rm. 4", "Ref. No. 12", "Tues. 03/09"; and
        # one that may close a sentence goes on before a number ("Dept. 14").
        return False
    if kind is None:
        if len(stem) != 1 or not stem.isupper():
            return True
        if stem == "I" and not (before and _capitalised(chunks[index - 1])):
            return True  # the pronoun: "you and I. Did you…"
        kind = Kind.INITIALISM  # an initial: "H. Aalto", "Plan B. The…"
    return _ends_after(kind, following, before)


_SHORT_ABBREVIATION = 4
"""The longest word (in letters) read as an abbreviation when a number follows its full
stop though the table does not know it."""


def _number_follows(chunks: list[str], index: int) -> bool:
    """Whether a number follows ``chunks[index]``, or a short abbreviation and then a
    number ("Ref. No. 12")."""
    following = chunks[index + 1]
    if _numberish(following) and following[:1].isdigit():
        return True
    word = following.rstrip(".")
    return (
        following.endswith(".")
        and word.isalpha()
        and len(word) <= _SHORT_ABBREVIATION
        and index + 2 < len(chunks)
        and chunks[index + 2][:1].isdigit()
    )


def _after_ellipsis(current: str, core: str, following: str, dots: int) -> bool:
    if core.rstrip(_DOTS).endswith(("[", "(")) and current[len(core) :].startswith(("]", ")")):
        return False  # "[...]": words left out of a quotation
    return dots >= 4 or _word(following) != "I"


def _ends_after(kind: Kind, following: str, before: int) -> bool:
    """Whether an abbreviation of ``kind`` ends its sentence before ``following`` (which
    begins like a sentence), ``before`` chunks into the sentence."""
    if kind is Kind.TITLE or kind is Kind.INLINE:
        return False
    if kind is Kind.NUMBER:
        return not _numberish(following)
    if kind is Kind.TIME:
        word = _word(following)
        return before > 2 and word not in CALENDAR and not _time_zone(word)
    if kind is Kind.INITIALISM:
        return not _initial(following) and _word(following) in OPENER_WORDS
    return True  # Kind.ENDING


def _begins_item(chunks: list[str], index: int, next_label: str | None) -> bool:
    """Whether an inline list item begins at ``chunks[index]`` (not a sentence's first),
    in a sentence whose opening label is followed by ``next_label``."""
    chunk = chunks[index]
    following = chunks[index + 1] if index + 1 < len(chunks) else ""
    if chunk[0] in _BULLETS:
        rest = chunk.lstrip(_BULLETS)
        if rest:
            return _next_label(rest) is not None and _starts(following)
        return _next_label(following) is not None
    if chunk != next_label or not _starts(following):
        return False
    return chunks[index - 1].rstrip(".").lower() not in TAKES_NUMBER


def _opens_quotation(chunks: list[str], index: int) -> bool:
    """Whether ``chunks[index]``, a word with its full stop, is followed by a spaced
    ellipsis and a new sentence ("compounds. . . . The practice"): the full stop is the
    word's and the ellipsis opens the next sentence, a quotation taken up mid-way."""
    return (
        chunks[index + 1] == "."
        and index + 4 < len(chunks)
        and chunks[index + 2] == chunks[index + 3] == "."
        and _starts(chunks[index + 4])
    )


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (one paragraph or list item), in order, each stripped.

    Joined with single spaces they give ``text`` with its whitespace collapsed, except
    that no space is added after an ideographic full stop that had none. See the module
    docstring for the rules.
    """
    chunks = _chunks(text)
    sentences: list[str] = []
    start = 0  # the first chunk of the sentence being read
    next_label: str | None = None  # the label after the one that opens the sentence
    label_at = 0  # where that label is (after a bare bullet, the chunk after it)
    dots = 0
    opening_dots = False
    last = len(chunks) - 1
    for index, chunk in enumerate(chunks):
        # Only a bullet or the next label in sequence may begin an inline list item.
        maybe_item = chunk[0] in _BULLETS or chunk == next_label
        if index > start and maybe_item and _begins_item(chunks, index, next_label):
            sentences.append(" ".join(chunks[start:index]))
            start = index
        if index == start:
            label_at = start + 1 if not chunk.strip(_BULLETS) and index < last else start
            next_label = None
        if index == label_at:
            next_label = _next_label(chunk)
        if chunk[-1] not in _MAY_END:
            # Most chunks are words: no terminator, no dots, nothing more to look at.
            dots, opening_dots = 0, False
            continue
        core = chunk.rstrip(_CLOSERS)
        if not core or core[-1] not in _DOTS:
            own = 0
        elif core[-1] == "." and (len(core) == 1 or core[-2] not in _DOTS):
            own = 1  # one full stop, by far the commonest ending
        else:
            own = _trailing_dots(core)
        # A chunk of nothing but dots continues the run of dots before it (". . .").
        only_dots = own > 0 and core[0] in _DOTS and not core.rstrip(_DOTS)
        dots = own + dots if only_dots and index > start else own
        opening_dots = only_dots and (index == start or opening_dots)
        if index == last:
            break
        if (
            own == 1
            and chunks[index + 1] == "."
            and not only_dots
            and _opens_quotation(chunks, index)
        ):
            ends = True
        else:
            opening = opening_dots or (index == label_at and next_label is not None)
            ends = _ends(chunks, index, core, index - start, dots, opening)
        if ends:
            sentences.append(" ".join(chunks[start : index + 1]))
            start = index + 1
            dots = 0
    if start <= last:
        sentences.append(" ".join(chunks[start:]))
    return sentences
