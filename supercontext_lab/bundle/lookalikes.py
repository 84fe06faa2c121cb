"""The rule that keeps untrusted text from forging the structure around an envelope
(SPEC §7.3): look-alike tags, prepared-context headings and separators.

A reader takes a character for its *skeleton*, so a look-alike is judged the way a reader
(or a model) would see it, not by its code points. :func:`neutralise` is applied by the
writer (:mod:`.render`) to every line it writes and by the harness to whatever it
puts beside an envelope, so a look-alike that one of them neutralises is the look-alike the
others would have seen. The tags, headings and line breaks are the grammar's
(:mod:`.grammar`).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from .grammar import CLOSE_TAG, LINE_BREAKS, OPEN_TAG

__all__ = ["LOOKALIKE_TAG_RE", "neutralise", "neutralise_envelope"]

# A reader takes a character for its *skeleton*: compatibility forms fold (NFKD: full-width,
# mathematical, enclosed and small forms), combining marks and format characters (accents,
# zero-width spaces and joiners, direction marks, tag characters) show as nothing, letters
# of other scripts drawn like Latin ones read as those, any opening or closing bracket as
# a square one, any dash as a hyphen. Each look-alike class below is every character whose
# skeleton is the one wanted, computed once, on first use; the patterns then match the raw
# text in one pass of the regex engine, so text in other scripts is never rewritten, only
# a look-alike of the structure is.

# Shown as nothing, though neither combining marks nor format characters: the fillers.
_BLANK_LETTERS = "\u115f\u1160\u17b4\u17b5\u3164\uffa0"
_UNSEEN_CATEGORIES = frozenset({"Mn", "Me", "Cf"})
# Drawn like a Latin letter or mark (after the compatibility fold). Small on purpose: the
# letters of the structure's words, and the marks around them. A capital I, a digit one
# and a vertical bar pass for an l, a digit zero for an o.
_LOOKALIKE_PAIRS = (
    (
        "\u0430\u0441\u0435\u043e\u0440\u0445\u0443\u0455\u0456\u0458\u0501\u04bb\u051b\u051d",
        "aceopxysijdhqw",
    ),
    (
        "\u0410\u0412\u0421\u0415\u041d\u0406\u0408\u041a\u041c\u041e\u0420\u0405\u0422\u0425\u0423\u04c0\u04cf",
        "abcehljkmopstxyll",
    ),
    ("\u03b1\u03bf\u03c1\u03b9\u03c5\u03bd\u03ba\u03c7", "aopiuvkx"),
    (
        "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
        "abezhlkmnoptyx",
    ),
    ("\u0131\u0237\u0251\u0261\u01c0\u0585\u057d\u0578I1|0", "ijaglounlllo"),
    ("\u2215\u2044\u29f8\u2571\u27cb", "/////"),
    ("\u266f\u2212\u2500\u2501\u2504\u2505\u2508\u2509\u254c\u254d\u2043", "#----------"),
    ("\u2217\u204e\u2731\u2550", "***="),
)
_LOOKALIKES = {
    src: dst
    for sources, targets in _LOOKALIKE_PAIRS
    for src, dst in zip(sources, targets, strict=True)
}


def _seen_as(ch: str) -> str:
    """The one character a reader takes the visible character ``ch`` for."""
    if ch in _LOOKALIKES:
        return _LOOKALIKES[ch]
    kind = unicodedata.category(ch)
    if ch in "()":
        return ch
    if kind == "Ps":
        return "["
    if kind == "Pe":
        return "]"
    if kind == "Pd":
        return "-"
    if kind == "Pc":
        return "_"
    return ch.lower() if ch.isascii() else ch


def _skeleton(ch: str) -> str:
    """What a reader takes ``ch`` for: ``""`` when it shows as nothing."""
    return "".join(
        _seen_as(part)
        for part in unicodedata.normalize("NFKD", ch)
        if unicodedata.category(part) not in _UNSEEN_CATEGORIES and part not in _BLANK_LETTERS
    )


def _lookalike_sets() -> tuple[dict[str, list[str]], list[str], dict[str, list[str]]]:
    """Every character by the ASCII character it passes for, the characters that show as
    nothing, and those that pass for two letters (``\u3397`` for ``dl``)."""
    singles: dict[str, list[str]] = {}
    unseen: list[str] = list(_BLANK_LETTERS)
    pairs: dict[str, list[str]] = {}
    planes = itertools.chain(range(0x21, 0xD800), range(0xE000, 0x20000), range(0xE0000, 0xE0200))
    for code in planes:
        ch = chr(code)
        kind = unicodedata.category(ch)
        if kind in _UNSEEN_CATEGORIES:
            unseen.append(ch)
            continue
        if not (
            code < 0x80 or ch in _LOOKALIKES or kind[0] == "P" or unicodedata.decomposition(ch)
        ):
            continue  # drawn as itself
        seen = _skeleton(ch)
        if len(seen) == 1 and seen.isascii():
            singles.setdefault(seen, []).append(ch)
        elif len(seen) == 2 and seen.isascii() and seen.isalpha():
            pairs.setdefault(seen, []).append(ch)
    return singles, unseen, pairs


def _ranges(chars: list[str]) -> str:
    """The body of a character class holding ``chars``, consecutive code points as ranges."""
    codes = sorted({ord(ch) for ch in chars})
    parts: list[str] = []
    first = 0
    for index, code in enumerate(codes):
        if index + 1 < len(codes) and codes[index + 1] == code + 1:
            continue
        low, high = re.escape(chr(codes[first])), re.escape(chr(code))
        parts.append(low if codes[first] == code else f"{low}-{high}")
        first = index + 1
    return "".join(parts)


class _Structure(NamedTuple):
    """The look-alike patterns, built together on first use."""

    tag: re.Pattern[str]
    heading: re.Pattern[str]
    rule: re.Pattern[str]
    marks: re.Pattern[str]
    astral: Mapping[int, str]
    """Beyond the first plane: each look-alike (mathematical letters, tag characters) to
    what it passes for, one character for one, so positions stay those of the text."""


# A line, wherever a break of str.splitlines starts or ends it.
_BOL = f"(?:^|(?<=[{LINE_BREAKS}]))"
_EOL = f"(?=[{LINE_BREAKS}]|\\Z)"
_NEUTRAL_MARK = "\u00b7"  # a middle dot: no Markdown reads a line of them as structure


class _Builder:
    """The pieces of the look-alike patterns, from one scan of the code points."""

    def __init__(self) -> None:
        seen_as, unseen, seen_as_two = _lookalike_sets()
        # The classes hold characters of the first plane only: the regex engine tests those
        # in constant time, while each range beyond it would cost a test at every
        # character. The few look-alikes beyond are folded first (:func:`_visible`).
        self.seen_as = {ch: [c for c in chars if c <= "\uffff"] for ch, chars in seen_as.items()}
        self.seen_as_two = {
            pair: bmp
            for pair, chars in seen_as_two.items()
            if (bmp := [c for c in chars if c <= "\uffff"])
        }
        self.unseen = _ranges([c for c in unseen if c <= "\uffff"])
        self.astral = {
            ord(c): seen for seen, chars in seen_as.items() for c in chars if c > "\uffff"
        }
        self.astral.update({ord(c): "\u200b" for c in unseen if c > "\uffff"})
        self.gap = f"[\\s{self.unseen}]*"
        # Blanks within a line: whitespace that breaks no line, and what shows as nothing.
        self.line_blanks = f"\t\x1f \xa0\u1680\u2000-\u200a\u202f\u205f\u3000{self.unseen}"
        self.lg = f"[{self.line_blanks}]*"

    def like(self, ch: str) -> str:
        """A class of every character a reader takes for ``ch``."""
        return f"[{self.run(ch)}]"

    def run(self, ch: str) -> str:
        return _ranges(self.seen_as[ch])

    def letters(self, word: str) -> str:
        """``word`` as a reader could see it: each letter any of its look-alikes, blanks
        and invisible characters between, two letters written as one (``\u3397``)."""
        parts: list[str] = []
        index = 0
        while index < len(word):
            pair = word[index : index + 2]
            if len(pair) == 2 and pair in self.seen_as_two:
                both = f"{self.like(pair[0])}{self.gap}{self.like(pair[1])}"
                parts.append(f"(?:{both}|[{_ranges(self.seen_as_two[pair])}])")
                index += 2
            else:
                parts.append(self.like(word[index]))
                index += 1
        return self.gap.join(parts)

    def words(self, *words: str) -> str:
        return self.lg.join(self.like(w) if w in "()" else self.letters(w) for w in words)

    def tag(self) -> str:
        joiner = f"[\\s{self.unseen}{self.run('_')}{self.run('-')}]*"
        return (
            f"{self.like('[')}{self.gap}(?P<slash>{self.like('/')}{self.gap})?"
            f"{self.letters('context')}{joiner}{self.letters('bundle')}{self.gap}{self.like(']')}"
        )

    def heading(self) -> str:
        # After "#" marks (ATX), or underlined by a line of "=" or of one or two "-"
        # (setext; three are a rule). Each run is one class followed by a test, so no
        # character is scanned twice.
        lg, blanks, hashes = self.lg, self.line_blanks, self.run("#")
        prepared = self.words("prepared", "context", "(", "super", "context", ")")
        underline = (
            f"(?:{self.like('=')}[{self.run('=')}{blanks}]*"
            f"|{self.like('-')}{lg}(?:{self.like('-')}{lg})?)"
        )
        return (
            f"{_BOL}(?P<indent>{lg})(?P<marks>{self.like('#')}[{hashes}{blanks}]*)?"
            f"(?P<title>(?:{prepared}|{self.words('agent', 'context', 'status')}))"
            f"[{hashes}{blanks}]*{_EOL}"
            f"(?:(?P<under>(?:\\r\\n|[{LINE_BREAKS}]){lg}{underline}){_EOL})?"
        )

    def rule(self) -> str:
        # Three or more hyphens, asterisks or low lines, blanks between: a Markdown rule.
        lg = self.lg
        marks = "|".join(f"{self.like(m)}(?:{lg}{self.like(m)}){{2,}}" for m in "-*_")
        return f"{_BOL}{lg}(?:{marks}){lg}{_EOL}"


@functools.cache
def _structure() -> _Structure:
    built = _Builder()
    return _Structure(
        tag=re.compile(built.tag()),
        heading=re.compile(built.heading()),
        rule=re.compile(built.rule()),
        marks=re.compile(f"[^{built.line_blanks}\\r{LINE_BREAKS}]"),
        astral=built.astral,
    )


def _visible(text: str, found: _Structure) -> str:
    """``text`` with its look-alikes beyond the first plane folded, position for position."""
    if text.isascii() or max(text) <= "\uffff":
        return text
    return text.translate(found.astral)


class _TagPattern:
    """:data:`LOOKALIKE_TAG_RE`: the compiled pattern's methods, compiled on first use
    (its look-alike classes take a scan of every code point, which an import must not pay)."""

    @property
    def pattern(self) -> str:
        return _structure().tag.pattern

    def search(self, text: str) -> re.Match[str] | None:
        found = _structure()
        return found.tag.search(_visible(text, found))

    def fullmatch(self, text: str) -> re.Match[str] | None:
        found = _structure()
        return found.tag.fullmatch(_visible(text, found))

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        found = _structure()
        return found.tag.finditer(_visible(text, found))


LOOKALIKE_TAG_RE = _TagPattern()
"""Anything a reader could take for an envelope tag: the exact tags, and the same words in
other letter case, with spaces, joiners, accents or invisible characters inside, in
full-width, mathematical or other scripts' look-alike letters, between any kind of
bracket. ``slash`` is set for a closing tag; a match's first and last characters are its
brackets. Compiled on first use; a match is made on the text with its look-alikes beyond
the first plane folded (same positions), so slice the text itself for what it holds."""


def neutralise(text: str) -> str:
    """``text`` with nothing left that could pass for the structure around an envelope.

    Every look-alike tag (:data:`LOOKALIKE_TAG_RE`, the exact tags included) gets
    parentheses instead of its brackets; a heading line reading like
    :data:`~.grammar.PREPARED_CONTEXT_HEADER` or
    :data:`~.grammar.AGENT_CONTEXT_STATUS_HEADER` loses its ``#`` marks (a setext
    underline below it becomes middle dots), and a line like
    :data:`~.grammar.SEPARATOR` (three or more hyphens, asterisks or low lines, or
    look-alikes of them) becomes middle dots. Look-alikes are judged by skeleton: compatibility forms,
    accents and invisible characters, other scripts' Latin look-alikes and other brackets
    and dashes count as what they are drawn like. Everything else, text in any script
    included, is left as it is. Nothing grows: the result is never longer than ``text``,
    so a fitted envelope stays fitted. Linear in the length of ``text``.
    """
    found = _structure()
    seen = _visible(text, found)
    # Every edit is found in the same text: tags, rules and headings never share a
    # character, so applying them together is applying them one after the other.
    edits: list[tuple[int, int, str]] = []
    for match in found.tag.finditer(seen):
        start, end = match.span()
        edits += [(start, start + 1, "("), (end - 1, end, ")")]
    for match in found.rule.finditer(seen):
        start, end = match.span()
        edits.append((start, end, found.marks.sub(_NEUTRAL_MARK, text[start:end])))
    for match in found.heading.finditer(seen):
        if match.group("marks") is None and match.group("under") is None:
            continue  # the title as a line of text: no heading
        kept = text[slice(*match.span("indent"))] + text[slice(*match.span("title"))]
        if match.group("under") is not None:
            kept += found.marks.sub(_NEUTRAL_MARK, text[slice(*match.span("under"))])
        edits.append((*match.span(), kept))
    if not edits:
        return text
    edits.sort()
    pieces: list[str] = []
    done = 0
    for start, end, replacement in edits:
        pieces += [text[done:start], replacement]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def neutralise_envelope(envelope: str) -> str:
    """An envelope with :func:`neutralise` applied to what lies between its tags.

    For an envelope a model wrote itself (the text route), where the writer's own
    neutralising never ran. Text that does not start and end with the tags is returned
    as it is.
    """
    if not (envelope.startswith(OPEN_TAG) and envelope.endswith(CLOSE_TAG)):
        return envelope
    inside = envelope[len(OPEN_TAG) : len(envelope) - len(CLOSE_TAG)]
    return OPEN_TAG + neutralise(inside) + CLOSE_TAG
