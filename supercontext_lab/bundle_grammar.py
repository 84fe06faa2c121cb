"""The envelope's grammar, written once: its tags, keys and line patterns, and the rule that
keeps untrusted text from forging any of them (SPEC §2 and §7.3).

The parser (:mod:`.bundle`), the writer (:mod:`.bundle_render`) and the harness all take
the tags, keys and patterns from here, so what is written is read back as written and a
look-alike that one of them neutralises is the look-alike the others would have seen.

The grammar is line oriented. A *key line* is a line whose trimmed text starts with a key
immediately followed by ``:``; the five top-level keys are matched case-insensitively
(ASCII letters only: the Kelvin sign is not a "k") at any indentation. Line breaks are
those of :meth:`str.splitlines`; :func:`normalise_line_breaks` turns them all into
``"\\n"`` so the patterns below can find lines with ``^`` and ``$``.

Every pattern runs in linear time on any text: no two quantifiers can take the same
characters (an indentation is taken whole, never given back), so a run of spaces, quotes,
brackets or backticks is scanned once, not once per way of splitting it.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import NamedTuple

__all__ = [
    "AGENT_CONTEXT_STATUS_HEADER",
    "CLOSE_TAG",
    "FIELD_LINE_RE",
    "HAS_ENOUGH_CONTEXT",
    "ITEM_PREFIX_RE",
    "LINE_BLANK",
    "LIST_KINDS",
    "LIST_LINE_RES",
    "LOOKALIKE_TAG_RE",
    "ONE_LINE_KEYS",
    "OPEN_TAG",
    "PREPARED_CONTEXT_HEADER",
    "PROPOSED_GOAL",
    "RECOMMENDED_SKILLS",
    "RECOMMENDED_TOOL_CALLS",
    "SEPARATOR",
    "SPACES",
    "STRUCTURAL_LINE_RE",
    "SUBKEYS",
    "SUBKEY_PREFIX_RE",
    "SUMMARY",
    "TOP_KEYS",
    "TRUNCATION_MARKER",
    "dedent_text",
    "key_words",
    "neutralise",
    "neutralise_envelope",
    "normalise_line_breaks",
    "parse_bool",
    "unquote",
]

OPEN_TAG = "[context_bundle]"
"""The literal, case-sensitive opening tag of the envelope."""

CLOSE_TAG = "[/context_bundle]"
"""The literal, case-sensitive closing tag of the envelope."""

TRUNCATION_MARKER = "[...truncated]"
"""The line ``fit_bundle`` places inside an envelope it had to shorten; structure, never
content."""

HAS_ENOUGH_CONTEXT = "has_enough_context"
PROPOSED_GOAL = "proposed_goal"
SUMMARY = "summary"
RECOMMENDED_TOOL_CALLS = "recommended_tool_calls"
RECOMMENDED_SKILLS = "recommended_skills"

TOP_KEYS = (HAS_ENOUGH_CONTEXT, PROPOSED_GOAL, SUMMARY, RECOMMENDED_TOOL_CALLS, RECOMMENDED_SKILLS)
"""The five top-level keys, in template order."""

ONE_LINE_KEYS = (HAS_ENOUGH_CONTEXT, PROPOSED_GOAL)
"""The keys whose value is only the text on their own line (the same-line rule)."""

LIST_KINDS: Mapping[str, str] = {RECOMMENDED_TOOL_CALLS: "tool", RECOMMENDED_SKILLS: "skill"}
"""Which list section holds which item kind."""

SUBKEYS: Mapping[str, frozenset[str]] = {
    "tool": frozenset({"args", "why"}),
    "skill": frozenset({"installed", "why"}),
}
"""The sub-keys an item of each kind may have."""

PREPARED_CONTEXT_HEADER = "## Prepared context (super context)"
"""The heading the harness puts above the envelope in a prepared message (SPEC §7.3)."""

AGENT_CONTEXT_STATUS_HEADER = "## Agent context status"
"""The heading of the note saying context was already prepared for the turn."""

SEPARATOR = "---"
"""The line between the prepared block and the user's own message."""

# ----------------------------------------------------------------------------- lines

# The line breaks of str.splitlines; "\r\n" is one break.
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""What :meth:`str.strip` strips: the characters for which :meth:`str.isspace` is true."""
_QUOTES = "`'\""
_UNQUOTE = SPACES + _QUOTES

# Whitespace within a line once breaks are "\n" (Unicode, as str.strip sees it). An
# indentation the rest of a pattern rejects is given back one character at a time, each
# failing at once (no key starts with a blank), so a line costs its length once.
_H = "[\t\x1f \xa0\u1680\u2000-\u200a\u202f\u205f\u3000]"
LINE_BLANK = _H
"""A character class of the blanks within a line once breaks are ``"\\n"``: every
character :meth:`str.isspace` accepts except the line breaks (listed, which the regex
engine tests faster than ``[^\\S\\n]``)."""
_TOP = "(?P<top>(?ai:has_enough_context|proposed_goal|summary|recommended_tool_calls|recommended_skills)):"
_MARK = f"(?P<mark>\\[\\.\\.\\.truncated\\]){_H}*$"
# Models write list items as "- tool:", "* tool:", "1. tool:" or a bare "tool:"; between
# the bullet and the key only ASCII blanks count (as the SPEC's grammar was first written).
_BULLET = "(?:[-*+\u2022]|[0-9]{1,3}[.)])[ \\t]*"


def _line_re(kinds: tuple[str, ...], subkeys: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = [_TOP, _MARK]
    if kinds:
        alternatives.append(f"(?P<item>(?:{_BULLET})?(?ai:(?P<kind>{'|'.join(kinds)})):)")
        alternatives.append(
            f"(?P<sub>(?:[-*+\u2022][ \\t]*)?(?ai:(?P<subkey>{'|'.join(subkeys)})):)"
        )
    # Lines are found by the "\n" that starts them (text handed to these patterns starts
    # with one): the engine finds a literal first character far faster than a "^".
    return re.compile(f"\\n{_H}*(?:{'|'.join(alternatives)})", re.MULTILINE)


FIELD_LINE_RE = _line_re((), ())
"""A top-level key line or the truncation marker: the only structure outside the lists.

Like every line pattern here it matches at the ``"\\n"`` before the line, so the text
searched starts with one."""

LIST_LINE_RES: Mapping[str, re.Pattern[str]] = {
    section: _line_re((kind,), tuple(sorted(SUBKEYS[kind]))) for section, kind in LIST_KINDS.items()
}
"""Per list section: key lines, the marker, its item lines and its sub-key lines."""

STRUCTURAL_LINE_RE = _line_re(("tool", "skill"), ("args", "installed", "why"))
"""Any line the parser could read as structure, whatever the section."""

ITEM_PREFIX_RE = re.compile(f"{_H}*(?:{_BULLET})?")
"""What may stand before ``tool:`` or ``skill:`` on an item line (fullmatch)."""

SUBKEY_PREFIX_RE = re.compile(f"{_H}*(?:[-*+\u2022][ \\t]*)?")
"""What may stand before a sub-key (``args:``, ``why:``, ``installed:``) (fullmatch)."""

_KEY_WORDS = (*TOP_KEYS, "tool", "skill", "args", "why", "installed")
# Searched in the reversed text, where every key starts with its colon: the engine jumps
# from one ":" to the next as fast as it can scan, so text without colons costs one scan
# and nothing else, however many lines it has.
# The lookahead on the keys' last letters turns most colons away in one test.
_LAST_LETTERS = "".join(sorted({ch for word in _KEY_WORDS for ch in (word[-1], word[-1].upper())}))
_REVERSED_KEY_RE = re.compile(
    f":(?=[{_LAST_LETTERS}])(?ai:" + "|".join(re.escape(w[::-1]) for w in _KEY_WORDS) + ")"
)


def key_words(text: str) -> list[tuple[int, int]]:
    """Where a key word followed by ``:`` (any key, any case) or the truncation marker
    stands in ``text``: ``(start, end)`` pairs in text order, ``text[start:end]`` being
    ``"summary:"``, ``"Tool:"``, ``"[...truncated]"`` and so on.

    Whether one starts a line, and whether it counts in the section it is in, is for the
    parser to decide; this only finds the places worth looking at.
    """
    length = len(text)
    found = [
        (length - match.end(), length - match.start())
        for match in _REVERSED_KEY_RE.finditer(text[::-1])
    ]
    found.reverse()
    markers: list[tuple[int, int]] = []
    start = text.find(TRUNCATION_MARKER)
    while start >= 0:
        markers.append((start, start + len(TRUNCATION_MARKER)))
        start = text.find(TRUNCATION_MARKER, start + len(TRUNCATION_MARKER))
    return sorted(found + markers) if markers else found


def normalise_line_breaks(text: str) -> str:
    """``text`` with every line break of :meth:`str.splitlines` written as ``"\\n"``."""
    # Substring tests and replacements are fast scans; a pattern would try every place.
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    for brk in _BREAKS[2:]:
        if brk in text:
            text = text.replace(brk, "\n")
    return text


_UNQUOTE_RUN = re.compile(f"[\\s{_QUOTES}]*")
# The same set for ASCII text: a smaller class, which the engine tests faster.
_ASCII_UNQUOTE_RUN = re.compile(f"[{re.escape(''.join(c for c in _UNQUOTE if c.isascii()))}]*")


def unquote(value: str) -> str:
    """Trim whitespace and surrounding backticks or quotes, however they nest.

    One scan from each end (both kinds are taken together), so a long run of alternating
    quotes and spaces costs its length, not its length squared.
    """
    if not value or (value[0] not in _UNQUOTE and value[-1] not in _UNQUOTE):
        return value
    run = _ASCII_UNQUOTE_RUN if value.isascii() else _UNQUOTE_RUN
    start = _run(run, value)
    if start == len(value):
        return ""
    return value[start : len(value) - _run(run, value[::-1])]


def _run(pattern: re.Pattern[str], text: str) -> int:
    """The length of the run ``pattern`` matches at the start of ``text``."""
    match = pattern.match(text)
    return match.end() if match is not None else 0


def parse_bool(value: str) -> bool | None:
    """``True``/``False`` for ``true``/``false`` in any case, backticks or quotes around
    it ignored; ``None`` for anything else."""
    word = unquote(value)
    if len(word) not in (4, 5):
        return None
    word = word.lower()
    if word == "true":
        return True
    if word == "false":
        return False
    return None


_INDENTED = re.compile(f"\\n{_H}")
_ASCII_INDENTED = re.compile("\\n[ \\t\\x1f]")
_FLUSH_LINE = re.compile("\\n\\S")
# A blank run is taken whole (captured by a lookahead, consumed by a backreference), so a
# long one is never given back character by character.
_MARGIN_RE = re.compile(f"\\n(?=({_H}*))\\1(?=\\S)")
_ASCII_MARGIN_RE = re.compile("\\n(?=([ \\t\\x1f]*))\\1(?=\\S)")  # a smaller class, faster
_BLANK_LINE_RE = re.compile(f"\\n(?=({_H}+))\\1(?=\\n|\\Z)")
# Whitespace-only lines of ASCII text, one pattern per first blank: each starts with two
# literal characters, which the engine finds with a fast scan.
_ASCII_BLANK_LINES = tuple(
    (blank, re.compile(f"\\n{re.escape(blank)}(?=([ \\t\\x1f]*))\\1(?=\\n|\\Z)"))
    for blank in (" ", "\t", "\x1f")
)


def dedent_text(text: str) -> str:
    """``textwrap.dedent`` for lines joined by ``"\\n"``, in a few passes of C code.

    The leading whitespace every non-blank line shares is removed and whitespace-only
    lines become empty. The margins are compared character by character (a tab is not a
    space), as :func:`os.path.commonprefix` does.
    """
    first_lines = text.split("\n", _FEW_LINES)
    if len(first_lines) <= _FEW_LINES:
        return _dedent_lines(first_lines)
    lines = "\n" + text
    if not _indented(lines):
        return text  # no margin and no whitespace-only line: nothing to do
    prefix = ""
    if _FLUSH_LINE.search(lines) is None:
        # Every non-blank line is indented: their margins decide what is cut.
        margins = (_ASCII_MARGIN_RE if lines.isascii() else _MARGIN_RE).findall(lines)
        prefix = _common_prefix(min(margins), max(margins)) if margins else ""
    if lines.isascii():
        for blank, pattern in _ASCII_BLANK_LINES:
            if blank in lines:  # one character: the fastest scan there is
                lines = pattern.sub("\n", lines)
    else:
        lines = _BLANK_LINE_RE.sub("\n", lines)
    if prefix:
        lines = lines.replace("\n" + prefix, "\n")
    return lines[1:]


# Below this many lines, a loop over the lines costs less than the passes of patterns
# (which a few very long blank runs would make scan twice).
_FEW_LINES = 1024


def _dedent_lines(lines: list[str]) -> str:
    margins = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    prefix = _common_prefix(min(margins), max(margins)) if margins else ""
    cut = len(prefix)
    return "\n".join(line[cut:] if line.strip() else "" for line in lines)


def _indented(lines: str) -> bool:
    """Whether a line of ``lines`` (which starts with ``"\\n"``) starts with a blank."""
    pattern = _ASCII_INDENTED if lines.isascii() else _INDENTED
    return pattern.search(lines) is not None


def _common_prefix(first: str, last: str) -> str:
    """The common prefix of two strings, by bisection on slices (compared in C).

    With the smallest and the largest of a list, that is the prefix of the whole list.
    """
    low, high = 0, min(len(first), len(last))
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == last[:middle]:
            low = middle
        else:
            high = middle - 1
    return first[:low]


# ----------------------------------------------------------------- forged structure

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
_BOL = f"(?:^|(?<=[{_BREAKS}]))"
_EOL = f"(?=[{_BREAKS}]|\\Z)"
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
            f"(?:(?P<under>(?:\\r\\n|[{_BREAKS}]){lg}{underline}){_EOL})?"
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
        marks=re.compile(f"[^{built.line_blanks}\\r{_BREAKS}]"),
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
    :data:`PREPARED_CONTEXT_HEADER` or :data:`AGENT_CONTEXT_STATUS_HEADER` loses its
    ``#`` marks (a setext underline below it becomes middle dots), and a line like
    :data:`SEPARATOR` (three or more hyphens, asterisks or low lines, or look-alikes of
    them) becomes middle dots. Look-alikes are judged by skeleton: compatibility forms,
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
