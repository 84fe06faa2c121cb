"""The walk: one pass over an envelope that reads its fields and records what it skipped
(SPEC §2.2, §2.3)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .._bounded import json_loads
from .extract import extract_context_bundle, locate_envelope
from .findings import MAX_FINDINGS, BundleReading, Finding
from .grammar import (
    CLOSE_TAG,
    HAS_ENOUGH_CONTEXT,
    ITEM_PREFIX_RE,
    LINE_BLANK,
    LIST_KINDS,
    LIST_LINE_RES,
    ONE_LINE_KEYS,
    OPEN_TAG,
    PROPOSED_GOAL,
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
from .records import ContextBundle, RecommendedSkill, RecommendedToolCall

__all__ = [
    "EnvelopeWalk",
    "blocks_text",
    "envelope_body",
    "parse_context_bundle",
    "parse_has_enough_context",
    "parse_proposed_goal",
    "read_context_bundle",
    "walk_envelope",
]


MIN_FIT_CHARS = 200
"""The smallest ``max_chars`` :func:`fit_bundle` accepts."""


_ELLIPSIS = "…"
_TOP_KEY_SET = frozenset(TOP_KEYS)

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


def blocks_text(blocks: list[_Block]) -> str:
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
        return blocks_text(self.fields.get(key, []))


@dataclass
class EnvelopeWalk:
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


def envelope_body(inside: str) -> str:
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


def _ignore(walk: EnvelopeWalk, span: str, line: int, where: str | None, item: str | None) -> None:
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


def _span(walk: EnvelopeWalk, section: str | None, span: str, line: int) -> None:
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
    walk: EnvelopeWalk, section: str, found: str | None, word: str, text: str, rest: str, line: int
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


def _key_line(walk: EnvelopeWalk, key: str, line_text: str, rest: str, line: int) -> None:
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


def walk_envelope(text: str, *, report: bool) -> EnvelopeWalk:
    """Read ``text`` (see :func:`_body`) once, from structural line to structural line.

    Only the places :func:`key_words` finds are looked at one by one; the lines between
    two structural ones go to the field being read in one piece.
    """
    walk = EnvelopeWalk(report)
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


def _finish(walk: EnvelopeWalk) -> None:
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
    elif not blocks_text(walk.summary):
        walk.findings.append(Finding("empty_summary", SUMMARY))


# --------------------------------------------------------------------------- line fields


def _inside(text: str) -> str:
    """The text between the tags when ``text`` holds an envelope, else ``text`` itself."""
    span = locate_envelope(text)
    if isinstance(span, str):
        return text
    return text[span[0] + len(OPEN_TAG) : span[1] - len(CLOSE_TAG)]


def _has_enough_context(walk: EnvelopeWalk) -> bool | None:
    line = walk.first_lines.get(HAS_ENOUGH_CONTEXT)
    return None if line is None else parse_bool(line[len(HAS_ENOUGH_CONTEXT) + 1 :])


def _proposed_goal(walk: EnvelopeWalk) -> str | None:
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
    return _has_enough_context(walk_envelope(envelope_body(_inside(envelope)), report=False))


def parse_proposed_goal(envelope: str) -> str | None:
    """Read ``proposed_goal`` from the first line that starts with that key.

    Only the text on that same line counts, trimmed. Empty text, or ``none`` in any case
    with surrounding backticks/quotes or a trailing period, gives ``None``.
    """
    return _proposed_goal(walk_envelope(envelope_body(_inside(envelope)), report=False))


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


def _bundle(envelope: str, walk: EnvelopeWalk) -> ContextBundle:
    return ContextBundle(
        envelope=envelope,
        has_enough_context=_has_enough_context(walk),
        proposed_goal=_proposed_goal(walk),
        summary=blocks_text(walk.summary),
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
    walk = walk_envelope(
        envelope_body(envelope[len(OPEN_TAG) : len(envelope) - len(CLOSE_TAG)]), report=True
    )
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
    return _bundle(envelope, walk_envelope(envelope_body(inside), report=False))


# ------------------------------------------------------------------------------ fitting
