"""The context-bundle contract: extract, parse and bound the scout's envelope (SPEC §2).

The scout answers with exactly one ``[context_bundle] … [/context_bundle]`` envelope.
This module reads it; its grammar (tags, keys, line patterns) is in
:mod:`.bundle_grammar`, its records in :mod:`.bundle_records` and its writer in
:mod:`.bundle_render`:

* :func:`extract_context_bundle` keeps the envelope and drops everything around it, or
  returns ``None`` when the tags are missing, unterminated, reversed, duplicated or the
  envelope is empty; :func:`bundle_rejection_reason` names the rule that failed.
* :func:`read_context_bundle` walks the envelope once and returns the
  :class:`ContextBundle` together with the :class:`Finding` records of what the walk
  skipped or read as unknown; :func:`parse_context_bundle` keeps only the bundle and
  never raises on text; :func:`parse_has_enough_context` and :func:`parse_proposed_goal`
  read the two line fields the harness acts on.
* :func:`fit_bundle` bounds an envelope to a number of characters (code points) and keeps
  it well-formed.

The grammar is line oriented. A *key line* is a line whose trimmed text starts with a key
immediately followed by ``:``; the five top-level keys are matched case-insensitively
(ASCII only) at any indentation, and every other line belongs to the field being read.
A line holding only :data:`TRUNCATION_MARKER` is structure written by :func:`fit_bundle`,
never content.

Every function here takes time linear in the length of its input, whatever the text: the
walk finds structural lines with one regular expression per section and hands the text
between them on in one piece, so no character is looked at more than a few times.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ._bounded import json_loads
from .bundle_grammar import (
    CLOSE_TAG,
    HAS_ENOUGH_CONTEXT,
    ITEM_PREFIX_RE,
    LINE_BLANK,
    LIST_KINDS,
    LIST_LINE_RES,
    ONE_LINE_KEYS,
    OPEN_TAG,
    PROPOSED_GOAL,
    RECOMMENDED_SKILLS,
    RECOMMENDED_TOOL_CALLS,
    SPACES,
    SUBKEY_PREFIX_RE,
    SUBKEYS,
    SUMMARY,
    TOP_KEYS,
    TRUNCATION_MARKER,
    dedent_text,
    key_words,
    normalise_line_breaks,
    parse_bool,
    unquote,
)
from .bundle_lookalikes import LOOKALIKE_TAG_RE
from .bundle_records import ContextBundle, RecommendedSkill, RecommendedToolCall
from .bundle_render import field_part, skill_part, tool_part

__all__ = [
    "CLOSE_TAG",
    "MAX_FINDINGS",
    "MIN_FIT_CHARS",
    "OPEN_TAG",
    "TRUNCATION_MARKER",
    "BundleReading",
    "ContextBundle",
    "Finding",
    "FindingKind",
    "RecommendedSkill",
    "RecommendedToolCall",
    "bundle_rejection_reason",
    "extract_context_bundle",
    "fit_bundle",
    "parse_context_bundle",
    "parse_has_enough_context",
    "parse_proposed_goal",
    "read_context_bundle",
]

MIN_FIT_CHARS = 200
"""The smallest ``max_chars`` :func:`fit_bundle` accepts."""

MAX_FINDINGS = 100
"""The most :class:`Finding` records one reading keeps (the first ones, in envelope order);
how many more there were is :attr:`BundleReading.findings_left_out`."""

_ELLIPSIS = "…"
_TOP_KEY_SET = frozenset(TOP_KEYS)

# --------------------------------------------------------------------------- extraction


def _locate(output: str) -> tuple[int, int] | str:
    """Return the envelope's ``(start, end)`` span, or the one-line reason it is rejected.

    Extraction and the rejection reason share this one function so they cannot disagree.
    """
    opens = output.count(OPEN_TAG)
    closes = output.count(CLOSE_TAG)
    if opens == 0:
        return "no [context_bundle] opening tag" + _near_miss(output, closing=False, joiner=" (")
    if opens > 1:
        return f"{opens} opening tags; exactly one is allowed"
    if closes == 0:
        hint = _near_miss(output, closing=True, joiner="; ")
        return f"the opening tag has no closing [/context_bundle] tag (unterminated{hint or ')'}"
    if closes > 1:
        return f"{closes} closing tags; exactly one is allowed"
    start = output.index(OPEN_TAG)
    close = output.index(CLOSE_TAG)
    if close < start:
        return "the closing tag comes before the opening tag"
    inside = output[start + len(OPEN_TAG) : close]
    if not inside:
        return "the envelope is empty"
    if not inside.strip():
        return "the envelope is empty (whitespace only)"
    return start, close + len(CLOSE_TAG)


_HINT_WINDOW = 2048


def _near_miss(output: str, *, closing: bool, joiner: str) -> str:
    """Point at a tag written with the wrong case, spacing or brackets, the usual slip.

    Only the first and the last :data:`_HINT_WINDOW` characters are searched, where a
    model writes its tags: the hint is a courtesy, and a long reply full of brackets must
    not cost more to reject than it cost to read.
    """
    windows = [output]
    if len(output) > 2 * _HINT_WINDOW:
        windows = [output[:_HINT_WINDOW], output[-_HINT_WINDOW:]]
    for window in windows:
        if not any(letter in window for letter in "bB\uff42\uff22"):
            continue  # no "bundle" in any spelling: nothing to point at
        for match in LOOKALIKE_TAG_RE.finditer(window):
            if (match.group("slash") is not None) == closing:
                found = match.group(0)
                return f"{joiner}found {found!r}; tags are exact: lower case, no spaces)"
    return ""


def extract_context_bundle(output: str) -> str | None:
    """Return the single ``[context_bundle] … [/context_bundle]`` envelope in ``output``.

    The envelope runs from the start of the opening tag to the end of the closing tag and
    is returned byte for byte; prose, code fences and whitespace outside it are dropped.
    ``None`` unless there is exactly one opening and one closing tag, in that order, with
    something other than whitespace between them.
    """
    span = _locate(output)
    if isinstance(span, str):
        return None
    return output[span[0] : span[1]]


def bundle_rejection_reason(output: str) -> str | None:
    """Say in one line why :func:`extract_context_bundle` rejects ``output``.

    ``None`` exactly when extraction succeeds.
    """
    span = _locate(output)
    return span if isinstance(span, str) else None


# ------------------------------------------------------------------------ the findings

FindingKind = Literal[
    "ignored_line",
    "not_boolean",
    "repeated_field",
    "missing_field",
    "empty_summary",
    "unnamed_item",
]
"""What a :class:`Finding` is about:

``ignored_line``
    a non-blank line the parser reads as nothing: before the first field, after a
    one-line field, in a list before its first item, or under an item before its first
    sub-key (``text`` is the line, trimmed);
``not_boolean``
    ``has_enough_context`` (its first line) or an item's ``installed`` value is not
    ``true``/``false`` and is read as unknown (``text`` is the value);
``repeated_field``
    a one-line field appears again; only the first one counts;
``missing_field``
    ``has_enough_context``, ``proposed_goal`` or ``summary`` is not there;
``empty_summary``
    the summary is there but says nothing;
``unnamed_item``
    a list item has no name (or only quotes).
"""


@dataclass(frozen=True)
class Finding:
    """One thing the parser skipped or read as unknown in an accepted envelope.

    ``field`` is the top-level key it concerns or sits under (``None`` before the first
    field), ``item`` the name of the list item it sits in, ``line`` its line number in
    the envelope (the opening tag's line is 1; ``None`` for what is missing).
    """

    kind: FindingKind
    field: str | None
    text: str = ""
    item: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class BundleReading:
    """What :func:`read_context_bundle` read: the bundle and what it left unread."""

    bundle: ContextBundle
    findings: tuple[Finding, ...]
    """In envelope order; the missing fields last. At most :data:`MAX_FINDINGS` of those
    with a line."""
    findings_left_out: int = 0
    """How many findings with a line there were beyond :data:`MAX_FINDINGS`."""


# ----------------------------------------------------------------------------- the walk


@dataclass
class _Block:
    """A field's text: what follows the key on its line, then its continuation text."""

    first: str
    chunks: list[str] = field(default_factory=list)  # lines joined by "\n", in order
    _text: str | None = None

    def text(self) -> str:
        """The field's text; asked once the walk is over, so it is worked out once."""
        if self._text is None:
            if not self.chunks:
                self._text = self.first.strip()
            else:
                # Dedent the continuation lines together so pretty JSON keeps its shape.
                tail = dedent_text("\n".join(self.chunks))
                self._text = f"{self.first}\n{tail}".strip()
        return self._text


def _blocks_text(blocks: list[_Block]) -> str:
    return "\n".join(text for text in (block.text() for block in blocks) if text)


@dataclass
class _Item:
    """A list item being read: its name and the blocks of each sub-key."""

    name: str
    line: int
    fields: dict[str, list[_Block]] = field(default_factory=dict)
    current: _Block | None = None
    installed_line: int | None = None

    def value(self, key: str) -> str:
        return _blocks_text(self.fields.get(key, []))


@dataclass
class _Walk:
    """The state of one walk over an envelope's body, and what it found."""

    report: bool
    summary: list[_Block] = field(default_factory=list)
    items: dict[str, list[_Item]] = field(default_factory=lambda: {"tool": [], "skill": []})
    first_lines: dict[str, str] = field(default_factory=dict)  # one-line key -> its line
    seen: set[str] = field(default_factory=set)
    findings: list[Finding] = field(default_factory=list)
    left_out: int = 0

    def note(self, finding: Finding) -> None:
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append(finding)
        else:
            self.left_out += 1


_NON_BLANK_LINE = re.compile(f"\\n(?=({LINE_BLANK}*))\\1(?P<text>\\S[^\\n]*)")
_NON_BLANK_START = re.compile(f"\\n(?=({LINE_BLANK}*))\\1\\S")
_FENCE_RE = re.compile(r"(?:```|~~~)[\w+.-]*")
# Trailing lines that are blank or a code fence, read from the start of the reversed
# text (a fence "```json" reversed is "nosj```").
_TRAILING_REVERSED = re.compile(
    f"(?:(?=({LINE_BLANK}*))\\1(?:[\\w+.-]*(?:```|~~~){LINE_BLANK}*)?\\n)*"
)


def _body(inside: str) -> str:
    """The envelope's inside as ``"\\n"`` followed by its lines joined by ``"\\n"``,
    without the blank or fence lines at its end: a code fence wrapped around the fields
    inside the envelope is formatting, not a part of the last field (lines before the
    first key are ignored anyway). The last line's trailing blanks go too; no field keeps
    them."""
    text = normalise_line_breaks(inside).rstrip()
    if _FENCE_RE.fullmatch(text[text.rfind("\n") + 1 :].lstrip()):
        lines = "\n" + text
        cut = _TRAILING_REVERSED.match(lines[::-1])
        text = lines[1 : len(lines) - (cut.end() if cut is not None else 0)].rstrip()
    return "\n" + text


def _ignore(walk: _Walk, span: str, line: int, where: str | None, item: str | None) -> None:
    """Record the non-blank lines of ``span`` (which starts on ``line``) as ignored."""
    if not walk.report:
        return
    lines = "\n" + span
    position, number = 1, line
    for match in _NON_BLANK_LINE.finditer(lines):
        if len(walk.findings) >= MAX_FINDINGS:
            walk.left_out += len(_NON_BLANK_START.findall(lines, match.start()))
            return
        number += lines.count("\n", position, match.start() + 1)
        position = match.start() + 1
        walk.note(Finding("ignored_line", where, match.group("text").rstrip(), item, number))


def _span(walk: _Walk, section: str | None, span: str, line: int) -> None:
    """Hand the non-structural lines ``span`` to the field being read."""
    if section == SUMMARY:
        walk.summary[-1].chunks.append(span)
        return
    kind = LIST_KINDS.get(section or "")
    if kind is None:
        _ignore(walk, span, line, section, None)
        return
    items = walk.items[kind]
    if not items:
        _ignore(walk, span, line, section, None)  # prose between the key and its first item
    elif items[-1].current is None:
        # Lines between an item's name and its first sub-key: names are one token.
        _ignore(walk, span, line, section, items[-1].name)
    else:
        items[-1].current.chunks.append(span)


def _list_line(
    walk: _Walk, section: str, found: str | None, word: str, text: str, rest: str, line: int
) -> None:
    """A line in a list section: an item (``found == "item"``), a sub-key ``word``
    (``"sub"``), or text for the field being read (``None``)."""
    items = walk.items[LIST_KINDS[section]]
    if found == "item":
        name = unquote(rest)
        items.append(_Item(name, line))
        if not name and walk.report:
            walk.note(Finding("unnamed_item", section, "", None, line))
    elif found == "sub" and items:
        item = items[-1]
        item.current = _Block(rest.strip())
        item.fields.setdefault(word, []).append(item.current)
        if word == "installed" and item.installed_line is None:
            item.installed_line = line
    else:
        _span(walk, section, text, line)


def _key_line(walk: _Walk, key: str, line_text: str, rest: str, line: int) -> None:
    """A top-level key line; ``line_text`` is the whole line, trimmed."""
    if key in ONE_LINE_KEYS:
        if key not in walk.first_lines:
            walk.first_lines[key] = line_text
            if key == HAS_ENOUGH_CONTEXT and parse_bool(rest) is None and walk.report:
                walk.note(Finding("not_boolean", key, rest.strip(), None, line))
        elif walk.report:
            walk.note(Finding("repeated_field", key, "", None, line))
    walk.seen.add(key)
    if key == SUMMARY:
        walk.summary.append(_Block(rest.strip()))
    elif key in LIST_KINDS:
        value = rest.strip()
        if value not in ("", "[]"):
            # The text after the key reads as a line of the list: an item, say, but
            # neither another key nor the marker.
            match = LIST_LINE_RES[key].match("\n" + value)
            if match is None or match.group("top", "mark") != (None, None):
                _list_line(walk, key, None, "", value, "", line)
            else:
                found, word = (
                    ("item", "") if match.group("item") else ("sub", match.group("subkey"))
                )
                _list_line(walk, key, found, word.lower(), value, value[match.end() - 1 :], line)


def _structure(section: str | None, word: str, prefix: str, text: str, end: int) -> str | None:
    """What a key word starting a line makes of it in ``section``: ``"top"``, ``"mark"``,
    ``"item"``, ``"sub"``, or ``None`` when the line is text of the field being read.

    ``prefix`` is what stands before the word on its line, ``end`` where the word ends.
    """
    if word in _TOP_KEY_SET:
        return "top" if not prefix.strip() else None
    if word == TRUNCATION_MARKER:
        eol = text.find("\n", end)
        tail = text[end:] if eol < 0 else text[end:eol]
        return "mark" if not prefix.strip() and not tail.strip() else None
    kind = LIST_KINDS.get(section or "")
    if kind is None:
        return None
    if word == kind:
        return "item" if ITEM_PREFIX_RE.fullmatch(prefix) else None
    if word in SUBKEYS[kind]:
        return "sub" if SUBKEY_PREFIX_RE.fullmatch(prefix) else None
    return None


def _walk(text: str, *, report: bool) -> _Walk:
    """Read ``text`` (see :func:`_body`) once, from structural line to structural line.

    Only the places :func:`key_words` finds are looked at one by one; the lines between
    two structural ones go to the field being read in one piece.
    """
    walk = _Walk(report)
    section: str | None = None
    # ``position`` is where the next unread line starts, just after its "\n"; the inside
    # starts right after the opening tag, on its line, so its first line is line 1.
    # ``scan`` is where the search for the line start of the next key word begins.
    position, line, scan, line_start = 1, 1, 0, 0
    for start, end in key_words(text):
        if start < position:
            continue  # on a line already read (the rest of a structural line)
        newline = text.rfind("\n", scan, start)
        scan = start
        if newline < 0:
            continue  # a second key word on one line: its line starts with the first
        line_start = newline + 1
        word = text[start:end].lower()
        word = word[:-1] if word.endswith(":") else TRUNCATION_MARKER
        found = _structure(section, word, text[line_start:start], text, end)
        if found is None:
            continue
        if line_start > position:
            _span(walk, section, text[position : line_start - 1], line)
            line += text.count("\n", position, line_start)
        eol = text.find("\n", end)
        eol = len(text) if eol < 0 else eol
        rest = text[end:eol]
        if found == "top":
            section = word
            _key_line(walk, word, text[start:eol].strip(), rest, line)
        elif found in ("item", "sub") and section is not None:
            _list_line(walk, section, found, word, text[line_start:eol], rest, line)
        position, scan = eol + 1, eol
        line += 1
    if position <= len(text):
        _span(walk, section, text[position:], line)
    return walk


def _finish(walk: _Walk) -> None:
    """The findings only the whole envelope can tell, once the walk is done."""
    for item in walk.items["skill"]:
        value = item.value("installed")
        if item.installed_line is not None and parse_bool(value) is None:
            walk.findings.append(
                Finding("not_boolean", "recommended_skills", value, item.name, item.installed_line)
            )
    lined = sorted(walk.findings, key=lambda finding: finding.line or 0)
    walk.left_out += max(len(lined) - MAX_FINDINGS, 0)
    walk.findings = lined[:MAX_FINDINGS]
    for key in ONE_LINE_KEYS:
        if key not in walk.seen:
            walk.findings.append(Finding("missing_field", key))
    if SUMMARY not in walk.seen:
        walk.findings.append(Finding("missing_field", SUMMARY))
    elif not _blocks_text(walk.summary):
        walk.findings.append(Finding("empty_summary", SUMMARY))


# --------------------------------------------------------------------------- line fields


def _inside(text: str) -> str:
    """The text between the tags when ``text`` holds an envelope, else ``text`` itself."""
    span = _locate(text)
    if isinstance(span, str):
        return text
    return text[span[0] + len(OPEN_TAG) : span[1] - len(CLOSE_TAG)]


def _has_enough_context(walk: _Walk) -> bool | None:
    line = walk.first_lines.get(HAS_ENOUGH_CONTEXT)
    return None if line is None else parse_bool(line[len(HAS_ENOUGH_CONTEXT) + 1 :])


def _proposed_goal(walk: _Walk) -> str | None:
    line = walk.first_lines.get(PROPOSED_GOAL)
    if line is None:
        return None
    value = line[len(PROPOSED_GOAL) + 1 :].strip()
    if not value:
        return None
    word = unquote(unquote(value).rstrip("."))
    return None if len(word) == 4 and word.lower() == "none" else value


def parse_has_enough_context(envelope: str) -> bool | None:
    """Read ``has_enough_context`` from the first line that starts with that key.

    ``true``/``false`` in any case, with surrounding backticks or quotes ignored, give a
    bool; any other value, or no such line, gives ``None``.
    """
    return _has_enough_context(_walk(_body(_inside(envelope)), report=False))


def parse_proposed_goal(envelope: str) -> str | None:
    """Read ``proposed_goal`` from the first line that starts with that key.

    Only the text on that same line counts, trimmed. Empty text, or ``none`` in any case
    with surrounding backticks/quotes or a trailing period, gives ``None``.
    """
    return _proposed_goal(_walk(_body(_inside(envelope)), report=False))


# ----------------------------------------------------------------------------- parsing


def _json_object(args: str) -> dict[str, Any] | None:
    """``args`` as a dict when it is a JSON object (optionally in backticks or a fence)."""
    candidate = args.strip()
    if candidate.startswith("```"):
        candidate = candidate.partition("\n")[2].rstrip().removesuffix("```")
    elif len(candidate) > 1 and candidate[0] == candidate[-1] == "`":
        candidate = candidate[1:-1]
    if not candidate.lstrip().startswith("{"):
        return None  # not an object, whatever else it is: no need to decode it
    try:
        value = json_loads(candidate)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _to_tool(item: _Item) -> RecommendedToolCall:
    args = item.value("args")
    return RecommendedToolCall(
        tool=item.name, args=args, args_json=_json_object(args), why=item.value("why")
    )


def _to_skill(item: _Item) -> RecommendedSkill:
    return RecommendedSkill(
        skill=item.name, installed=parse_bool(item.value("installed")), why=item.value("why")
    )


def _bundle(envelope: str, walk: _Walk) -> ContextBundle:
    return ContextBundle(
        envelope=envelope,
        has_enough_context=_has_enough_context(walk),
        proposed_goal=_proposed_goal(walk),
        summary=_blocks_text(walk.summary),
        recommended_tool_calls=[_to_tool(item) for item in walk.items["tool"]],
        recommended_skills=[_to_skill(item) for item in walk.items["skill"]],
    )


def read_context_bundle(output: str) -> BundleReading | None:
    """Extract and parse the envelope in ``output``, saying what the parse left unread.

    ``None`` exactly when extraction fails; never raises on any string. The bundle is
    the one :func:`parse_context_bundle` returns; the findings are in envelope order.
    """
    envelope = extract_context_bundle(output)
    if envelope is None:
        return None
    walk = _walk(_body(envelope[len(OPEN_TAG) : len(envelope) - len(CLOSE_TAG)]), report=True)
    _finish(walk)
    return BundleReading(_bundle(envelope, walk), tuple(walk.findings), walk.left_out)


def parse_context_bundle(output: str) -> ContextBundle | None:
    """Extract (:func:`extract_context_bundle`) and parse the envelope in ``output``.

    ``None`` exactly when extraction fails; never raises on any string. The summary runs
    from its key line to the next top-level key; ``[]`` on a list key means an empty list.
    """
    envelope = extract_context_bundle(output)
    if envelope is None:
        return None
    inside = envelope[len(OPEN_TAG) : len(envelope) - len(CLOSE_TAG)]
    return _bundle(envelope, _walk(_body(inside), report=False))


# ------------------------------------------------------------------------------ fitting

_LAST_SPACE = re.compile(r".*\s", re.DOTALL)


def _cut(text: str, limit: int) -> str:
    """Shorten ``text`` to at most ``limit`` (>= 1) characters, ending with ``…``.

    Cuts at the last line or word boundary in the second half of the room, else mid-word
    (scripts such as CJK have no spaces to cut at).
    """
    if len(text) <= limit:
        return text
    room = limit - 1
    cut = room
    # The last whitespace at an index in (room // 2, room]: one backwards scan in C.
    last = _LAST_SPACE.match(text, room // 2 + 1, room + 1)
    if last is not None:
        cut = last.end() - 1
    return text[:cut].rstrip() + _ELLIPSIS


def _shorten_line(line: str, key: str, limit: int) -> str:
    """Shorten a ``key: value`` line to ``limit`` characters; the key always stays."""
    if len(line) <= limit:
        return line
    head = line[: len(key) + 1]
    value = line[len(key) + 1 :].strip()
    return f"{head} {_cut(value, max(limit - len(head) - 1, 1))}"


def fit_bundle(envelope: str, max_chars: int) -> str:
    """Bound an envelope to ``max_chars`` characters (code points), keeping it well-formed.

    ``envelope`` may also be raw scout output: the envelope is extracted first. One within
    the cap is returned unchanged. A longer one is rewritten in template order: the
    summary is shortened first, then list items are dropped from the end (skills, then
    tool calls), and a :data:`TRUNCATION_MARKER` line is placed before the closing tag.
    The ``has_enough_context`` and ``proposed_goal`` lines are always kept; only when they
    alone exceed the cap are their values shortened with ``…``.

    Raises:
        ValueError: ``max_chars`` is below :data:`MIN_FIT_CHARS`, or ``envelope`` holds
            no well-formed envelope.
    """
    if max_chars < MIN_FIT_CHARS:
        raise ValueError(
            f"max_chars={max_chars} is below the minimum of {MIN_FIT_CHARS} characters; "
            f"pass max_chars >= {MIN_FIT_CHARS}."
        )
    span = _locate(envelope)
    if isinstance(span, str):
        raise ValueError(
            f"Cannot fit the bundle: {span}; pass text holding exactly one "
            f"{OPEN_TAG} … {CLOSE_TAG} envelope."
        )
    extracted = envelope[span[0] : span[1]]
    if len(extracted) <= max_chars:
        return extracted
    return _rewritten_to_fit(extracted, max_chars)


_ASCII_SPACES = "".join(ch for ch in SPACES if ch.isascii())


def _least_length(values: Sequence[str], budget: int) -> int:
    """A lower bound of the length of an item rendered from ``values``: rendering only
    ever moves whitespace around, so every other character of them is written.

    Only whether it exceeds ``budget`` matters, so a long value is first counted on a
    prefix, which bounds the whole from below.
    """
    total = 0
    for value in values:
        window = value[: 4 * budget + 64]
        total += _non_blank(window)
        if total <= budget and len(window) < len(value):
            total += _non_blank(value) - _non_blank(window)
        if total > budget:
            break
    return total


def _non_blank(value: str) -> int:
    # A count per kind of blank: fast scans, where a pattern would visit each run.
    blanks = _ASCII_SPACES if value.isascii() else SPACES
    return len(value) - sum(value.count(blank) for blank in blanks)


def _item_parts(walk: _Walk, budget: int) -> tuple[list[str], list[str]]:
    """The tool and skill parts, in template order, rendered only while they could still
    fit in ``budget``: items go from the end, so one that cannot fit takes every item
    after it along, and none of those is rendered (or decoded) at all."""
    tools: list[str] = []
    skills: list[str] = []
    used = 0
    for kind, parts in (("tool", tools), ("skill", skills)):
        for item in walk.items[kind]:
            name, why = item.name, item.value("why")
            args = item.value("args") if kind == "tool" else ""
            # An installed flag is written only when it is a boolean: it is not counted.
            used += _least_length((name, args, why), budget - used)
            if used > budget:
                return tools, skills
            if kind == "tool":
                parts.append(tool_part(name, args, why))
            else:
                parts.append(skill_part(name, parse_bool(item.value("installed")), why))
    return tools, skills


def _rewritten_to_fit(extracted: str, max_chars: int) -> str:
    """``extracted`` (longer than ``max_chars``) written again in template order, the
    summary cut and list items dropped from the end until it fits (see fit_bundle)."""
    walk = _walk(_body(extracted[len(OPEN_TAG) : len(extracted) - len(CLOSE_TAG)]), report=False)
    hec_line = walk.first_lines.get(HAS_ENOUGH_CONTEXT)
    goal_line = walk.first_lines.get(PROPOSED_GOAL)
    summary = _blocks_text(walk.summary)
    tools, skills = _item_parts(walk, max_chars)
    tools_header, skills_header = f"{RECOMMENDED_TOOL_CALLS}:", f"{RECOMMENDED_SKILLS}:"

    def fixed_len() -> int:
        """Tags, marker and the two line fields, each with the newline after it."""
        heads = [line for line in (hec_line, goal_line) if line is not None]
        return sum(len(part) + 1 for part in (OPEN_TAG, *heads, TRUNCATION_MARKER, CLOSE_TAG))

    def summary_len(text: str) -> int:
        # "summary: " or "summary:\n" before the text, a newline after it.
        return len(SUMMARY) + 2 + len(text) + 1 if summary else 0

    # Sizes with their newlines; a section header counts only while the section has items.
    lists_len = sum(len(part) + 1 for part in (*tools, *skills))
    lists_len += (len(tools_header) + 1 if tools else 0) + (len(skills_header) + 1 if skills else 0)
    n_tools, n_skills = len(tools), len(skills)
    # Items go, last first, only when even a one-character summary leaves no room for them.
    while n_tools + n_skills and fixed_len() + summary_len(_ELLIPSIS) + lists_len > max_chars + 1:
        if n_skills:
            n_skills -= 1
            lists_len -= len(skills[n_skills]) + 1 + (len(skills_header) + 1 if not n_skills else 0)
        else:
            n_tools -= 1
            lists_len -= len(tools[n_tools]) + 1 + (len(tools_header) + 1 if not n_tools else 0)
    # The closing tag has no newline after it, hence the + 1 on the budget.
    room = max_chars + 1 - fixed_len() - lists_len - summary_len("")
    summary_text = _cut(summary, max(room, 1))
    over = fixed_len() + summary_len(summary_text) - (max_chars + 1)
    # Only the line fields are left to shorten: the goal first, then has_enough_context.
    if over > 0 and goal_line is not None:
        goal_line = _shorten_line(goal_line, PROPOSED_GOAL, len(goal_line) - over)
        over = fixed_len() + summary_len(summary_text) - (max_chars + 1)
    if over > 0 and hec_line is not None:
        hec_line = _shorten_line(hec_line, HAS_ENOUGH_CONTEXT, len(hec_line) - over)

    parts = [OPEN_TAG, *(line for line in (hec_line, goal_line) if line is not None)]
    if summary:
        parts.append(field_part(SUMMARY, summary_text))
    if n_tools:
        parts += [tools_header, *tools[:n_tools]]
    if n_skills:
        parts += [skills_header, *skills[:n_skills]]
    parts += [TRUNCATION_MARKER, CLOSE_TAG]
    return "\n".join(parts)
