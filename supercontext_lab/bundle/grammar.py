"""The envelope's grammar, written once: its tags, keys and line patterns (SPEC §2 and §7.3).

The parser (:mod:`.parse`), the writer (:mod:`.render`) and the harness all take
the tags, keys and patterns from here, so what is written is read back as written. The
rule that keeps untrusted text from forging any of them is :mod:`.lookalikes`,
built on the same tags and line breaks.

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

import re
from collections.abc import Mapping

__all__ = [
    "AGENT_CONTEXT_STATUS_HEADER",
    "CLOSE_TAG",
    "FIELD_LINE_RE",
    "HAS_ENOUGH_CONTEXT",
    "ITEM_PREFIX_RE",
    "LINE_BLANK",
    "LINE_BREAKS",
    "LIST_KINDS",
    "LIST_LINE_RES",
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

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""The line breaks of :meth:`str.splitlines`; ``"\\r\\n"`` is one break."""

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
    for brk in LINE_BREAKS[2:]:
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
