"""A note read as a document: the units a reader sees, each with what makes it readable.

A note is not flat text. A table row means nothing without its header, a log line nothing
without its date, a pasted e-mail is several messages from several people, a chat is turns
that later turns may correct. This module is the one place a note is cut: it parses the
note with markdown-it-py (CommonMark, plus GitHub's tables; the parser under MyST and
Jupyter Book) and walks its blocks into :class:`Unit` records:

``sentence``
    a sentence of a paragraph (:func:`~.sentences.split_sentences`);
``item``
    a list item, or one line of a paragraph whose lines are log lines ("03/02: batch
    B-12 failed QC. pH 7.9, out of spec.") or bullets, kept whole however many sentences
    it has: a log line's date and subject belong to its reason;
``row``
    a table row, each cell with its column's header, the first cell as its label:
    ``Release 14 — Window: freeze ±2 days; Checks: load test + DR drill``;
``code``
    a fenced code block, one unit quoted line by line in backticks;
``quote``
    a paragraph of a block quote;
``message``
    a paragraph of a pasted e-mail, with the sender and date its headers (``From:``,
    ``Sent:``, ``Date:``) or its attribution line ("On Mon, 2 Mar, Sam wrote:") give, the
    quote level told apart: a reply's quoted history is the earlier message's, not the
    reply's;
``turn``
    a line of a chat: ``Name: text``, ``[10:24] name: text``, or the paragraphs under a
    ``**Name**, 12:20`` line, with its speaker and time.

Every unit knows the heading path above it, its lines in the note (the citation a chip can
open), its position, the first date it or its label gives, and whether it says that it
settles or corrects what came before (:data:`SETTLING_WORDS`: "OK, final: …", "Correction:
…", "instead"). Headings are what a section is about, never a fact themselves.

Linear in the note: markdown-it-py parses in one pass, and every line is looked at a
bounded number of times; a note longer than :data:`MAX_DOCUMENT_CHARS` is read up to
there. A note's document is built once per text and kept in a small cache, so the scout,
the pack, the extractive writer and the grounding check all read the same units without
parsing again.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .._text import one_line
from .sentences import split_sentences
from .words import words

__all__ = [
    "MAX_DOCUMENT_CHARS",
    "MAX_UNIT_CHARS",
    "SETTLING_WORDS",
    "Document",
    "Unit",
    "UnitKind",
    "read_document",
]

UnitKind = Literal["sentence", "item", "row", "code", "quote", "message", "turn"]

MAX_DOCUMENT_CHARS = 4_000_000
"""The most characters of one note read as a document (notes are bounded when read; this
bounds the work on a pathological one)."""

MAX_UNIT_CHARS = 500
"""The longest unit kept whole: a longer list item, log line or turn is cut into its
sentences, and a longer sentence is not quoted at all (never cut inside)."""

SETTLING_WORDS = frozenset(
    """
    final finally finalised finalized decided decision agreed settled confirmed confirm
    correction corrected correct instead actually update updated revised revision
    supersedes superseded replaces replaced rescheduled moved changed
    """.split()
)
"""Words by which a unit says it settles or corrects what came before it."""

_HEADING_JOIN = " › "
_HEADER_RE = re.compile(r"^\s*(from|sent|date|to|cc|bcc|subject|reply-to)\s*:\s*(.*)$", re.I)
_ORIGINAL_RE = re.compile(r"^\s*-{2,}\s*(original message|forwarded message)\s*-{2,}\s*$", re.I)
# "On Mon, 2 Mar 2026 at 09:14, Sam Lee <sam@example.org> wrote:"; bounded and anchored.
_WROTE_RE = re.compile(
    r"^\s*(?:on\s+(?P<date>.{1,80}?),?\s+)?(?P<who>[^,<>:]{1,60}?)\s*(?:<[^<>\s]{1,120}>)?\s+wrote:\s*$",
    re.I,
)
_ADDRESS_RE = re.compile(r"\s*[<\[(]?[\w.+-]{1,64}@[\w.-]{1,120}[>\])]?\s*")
# "[10:24] sam: …", "10:24 Sam: …"
_STAMPED_RE = re.compile(
    r"^\s*\[?(?P<time>\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?)\]?\s+(?P<who>[^:\s][^:]{0,39}):\s+(?P<text>\S.*)$",
    re.I,
)
# "Sam: …", "Dr. Obi: …", "User: …"; a name of up to three capitalised words.
_NAMED_RE = re.compile(
    r"^\s*(?P<who>[A-Z][\w.'’-]{0,24}(?: [A-Z][\w.'’-]{0,24}){0,2})\s*(?:\((?P<time>[^()]{1,24})\))?:\s+(?P<text>\S.*)$"
)
# "**Sam**, 12:20" or "**Sam** (12:20):" alone on a line: the speaker of what follows.
_SPEAKER_LINE_RE = re.compile(
    r"^\s*\*\*(?P<who>[^*\n]{1,40})\*\*\s*(?:[,(–—-]\s*(?P<time>[^()\n]{1,30}?)\)?)?\s*:?\s*$"
)
_DATE_RE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{1,2}\.\d{1,2}\.\d{2,4}\b"
    r"|\b(?:\d{1,2}\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]{0,6}\.?"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?\b",
    re.I,
)
# A line that leads with a date or time: a log line.
_LOG_LINE_RE = re.compile(
    r"^\s*(?:\[\s*)?(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{1,2}\.\d{1,2}\.\d{2,4}"
    r"|\d{1,2}:\d{2}|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\.?\s+\d{1,2})\b",
    re.I,
)
_BULLETS = "•‣⁃◦▪●∙"
# A line that starts an item though Markdown reads it as the line above going on: a
# bullet character, or "1)" / "12." after a list item.
_MARKED_RE = re.compile(r"^\s{0,8}(?:[•‣⁃◦▪●∙]|\d{1,3}[.)])\s+")


@dataclass(frozen=True)
class Unit:
    """One unit of a note: what a bundle quotes as one fact."""

    kind: UnitKind
    text: str
    """The unit on one line, as written (a row's cells with their headers)."""
    context: str = ""
    """What makes it readable: a row's label (its first cell), a message's sender and date,
    a turn's speaker and time; ``""`` for the others."""
    heading: str = ""
    """The path of headings above the unit, outermost first (``"Plan › Risks"``)."""
    lines: tuple[int, int] = (1, 1)
    """The first and last line of the note the unit comes from (1-based, both included)."""
    position: int = 0
    """Its index among the note's units."""
    date: str = ""
    """The first date its label or text gives (``""`` when none)."""
    settles: bool = False
    """Whether it says it settles or corrects what came before (:data:`SETTLING_WORDS`)."""
    depth: int = 0
    """How deep in block quotes it sits (a quoted e-mail's level)."""

    @property
    def quoted(self) -> str:
        """The unit as a bundle quotes it: its label, then the unit."""
        if not self.context:
            return self.text
        if self.kind == "row":
            return f"{self.context} — {self.text}" if self.text else self.context
        if self.kind == "turn" and self.text.startswith(self.context.split(" (")[0] + ":"):
            return self.text  # "Sam: …" already says who spoke
        return f"{self.context}: {self.text}"


@dataclass(frozen=True)
class Document:
    """The ordered units of one note, and its headings."""

    units: tuple[Unit, ...]
    blocks: tuple[str, ...] = ()
    """Every block (paragraph, list item, log or chat line, table row, code block) on one
    line, uncut and however long, as a unit's label and text read: what the grounding
    check compares a quoted fact with."""
    headings: tuple[str, ...] = ()
    """Every heading of the note, in order."""


@dataclass
class _Speaker:
    who: str = ""
    when: str = ""

    def label(self) -> str:
        if not self.who:
            return ""
        return f"{self.who} ({self.when})" if self.when else self.who


@dataclass
class _State:
    source: Sequence[str]
    units: list[Unit] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    path: list[tuple[int, str]] = field(default_factory=list)
    depth: int = 0
    senders: dict[int, _Speaker] = field(default_factory=dict)
    speaker: _Speaker = field(default_factory=_Speaker)
    items: list[list[tuple[str, tuple[int, int]]]] = field(default_factory=list)
    header: list[str] | None = None
    row: list[str] | None = None
    row_lines: tuple[int, int] = (1, 1)

    def heading(self) -> str:
        return _HEADING_JOIN.join(text for _, text in self.path)

    def block(self, text: str, context: str = "") -> None:
        flat = one_line(text)
        if flat:
            self.blocks.append(f"{one_line(context, 200)}: {flat}" if context else flat)

    def add(self, kind: UnitKind, text: str, lines: tuple[int, int], context: str = "") -> None:
        text = one_line(text)
        if len(text) <= 3 and not context:
            return
        pieces = [text]
        if len(text) > MAX_UNIT_CHARS and kind != "code":
            pieces = [one_line(s) for s in split_sentences(text)]
        for piece in pieces:
            if not (3 < len(piece) <= MAX_UNIT_CHARS or (kind == "row" and context)):
                continue
            if len(piece) > MAX_UNIT_CHARS:
                continue
            dated = _DATE_RE.search(f"{context} {piece}")
            self.units.append(
                Unit(
                    kind,
                    piece,
                    one_line(context, 200),
                    self.heading(),
                    lines,
                    len(self.units),
                    dated.group(0) if dated else "",
                    not SETTLING_WORDS.isdisjoint(words(piece[:200])),
                    self.depth,
                )
            )


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    # Indented text is a wrapped line or a pasted e-mail far more often than code in a
    # note; code comes fenced.
    md.disable("code")
    # Inline text is read by _inline_text, linear on any input.
    md.core.ruler.disable("inline")
    return md


_MD = _parser()


# A Markdown link or image keeps its text: "[are faster](https://…)" reads "are faster".
# The bounds keep the search linear on a note full of unmatched brackets.
_LINK_RE = re.compile(r"!?\[([^\[\]\n]{0,300})\]\([^()\s]{0,2000}\)")
_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _inline_text(token: Token) -> str:
    """An inline token's source as plain text: strong emphasis marks dropped, a link's or
    image's text kept, escapes undone, line breaks kept as ``"\\n"`` (lines mean
    something in logs and chats).

    Not markdown-it's inline parser: it runs at about 60 KB/s on runs of brackets, which a
    hostile note would turn into seconds of a pre-flight; these bounded patterns are linear
    and fast on any text."""
    text = token.content
    if "[" in text:
        text = _LINK_RE.sub(r"\1", text)
    if "**" in text or "__" in text:
        text = text.replace("**", "").replace("__", "")
    if "\\" in text:
        text = _ESCAPE_RE.sub(r"\1", text)
    if "&" in text:
        text = html.unescape(text)
    return text


def _lines(token: Token | None, fallback: tuple[int, int]) -> tuple[int, int]:
    if token is None or token.map is None:
        return fallback
    return token.map[0] + 1, max(token.map[1], token.map[0] + 1)


def _sender(value: str) -> str:
    return one_line(_ADDRESS_RE.sub(" ", value).strip(" \"'"), 80)


def _paragraph(state: _State, text: str, lines: tuple[int, int]) -> None:
    """A paragraph (outside a list item): e-mail headers, chat lines, log lines or prose."""
    rows = [line for line in text.split("\n") if line.strip()]
    if not rows:
        return
    first = lines[0]
    headers = [_HEADER_RE.match(row) for row in rows]
    named = {m.group(1).lower(): m.group(2).strip() for m in headers if m is not None}
    if len(named) >= 2 and ("from" in named or "sent" in named or "date" in named):
        # The headers of a pasted e-mail: what follows at this level is its message.
        state.senders[state.depth] = _Speaker(
            _sender(named.get("from", "")), one_line(named.get("sent") or named.get("date", ""), 60)
        )
        state.speaker = _Speaker()
        subject = named.get("subject", "")
        if subject:
            # The subject often says what the message is about, and often its figure.
            state.add("message", f"Subject: {subject}", lines, state.senders[state.depth].label())
        rest = [row for row, m in zip(rows, headers, strict=True) if m is None]
        if not rest:
            return
        rows = rest
    kept: list[str] = []
    for row in rows:
        wrote = _WROTE_RE.match(row)
        if wrote is not None:
            speaker = _Speaker(_sender(wrote.group("who")), one_line(wrote.group("date") or "", 60))
            # The attribution line sits just above the quote it introduces, or at its top.
            state.senders[state.depth + 1] = speaker
            if kept:
                _prose(state, kept, (first, lines[1]))
                kept = []
            state.senders[state.depth] = (
                speaker if state.depth else state.senders.get(0, _Speaker())
            )
            continue
        if _ORIGINAL_RE.match(row):
            continue
        kept.append(row)
    if not kept:
        return
    speaker_line = (
        _SPEAKER_LINE_RE.match(state.source[first - 1]) if first - 1 < len(state.source) else None
    )
    if speaker_line is not None:
        state.senders.pop(state.depth, None)
        state.speaker = _Speaker(
            one_line(speaker_line.group("who"), 40), one_line(speaker_line.group("time") or "", 30)
        )
        kept = kept[1:]
        if not kept:
            return
    if len(kept) >= 2 and _line_units(state, kept, first):
        return
    groups = _marked_groups(kept)
    if len(groups) > 1:
        # Bullets or numbered items the editor wrote under a paragraph's first line.
        _prose(state, groups[0], lines)
        for group in groups[1:]:
            _item_unit(state, " ".join(row.strip() for row in group), lines)
        return
    if len(kept) == 1:
        match = _STAMPED_RE.match(kept[0]) or _chat_line(kept[0])
        if match is not None and state.speaker.who == "" and not state.senders.get(state.depth):
            state.block(kept[0])
            _turn(state, match, (first, lines[1]))
            return
    _prose(state, kept, lines)


def _chat_line(row: str) -> re.Match[str] | None:
    return _NAMED_RE.match(row)


def _turn(state: _State, match: re.Match[str], lines: tuple[int, int]) -> None:
    who = one_line(match.group("who"), 40)
    when = one_line(match.group("time") or "", 30)
    text = match.group(0).strip()
    if _STAMPED_RE.match(text):
        text = f"{who}: {match.group('text').strip()}"
    state.add("turn", text, lines, f"{who} ({when})" if when else who)


def _line_units(state: _State, rows: list[str], first: int) -> bool:
    """Whether the lines of a paragraph are units of their own (chat lines, log lines,
    bullets), and if so add them; a paragraph of wrapped prose is not."""
    stamped = [_STAMPED_RE.match(row) for row in rows]
    named = [_NAMED_RE.match(row) for row in rows]
    logged = [_LOG_LINE_RE.match(row) is not None or row.lstrip()[:1] in _BULLETS for row in rows]
    leads = sum(1 for s, n, g in zip(stamped, named, logged, strict=True) if s or n or g)
    # Most lines must lead so, or it is prose that wraps at a colon now and then.
    if leads < 2 or leads * 3 < len(rows) * 2:
        return False
    current: list[str] = []
    start = first
    for offset, row in enumerate(rows):
        match = stamped[offset] or named[offset]
        if match is not None or logged[offset]:
            if current:
                _flush_line(state, current, (start, first + offset - 1))
            current, start = [row], first + offset
        else:
            current.append(row)  # a continuation of the line above
    if current:
        _flush_line(state, current, (start, first + len(rows) - 1))
    return True


def _flush_line(state: _State, rows: list[str], lines: tuple[int, int]) -> None:
    text = " ".join(row.strip() for row in rows)
    state.block(text)
    match = _STAMPED_RE.match(text) or _NAMED_RE.match(text)
    if match is not None:
        _turn(state, match, lines)
    else:
        state.add("item", text.lstrip(_BULLETS + " "), lines)


def _prose(state: _State, rows: list[str], lines: tuple[int, int]) -> None:
    text = " ".join(row.strip() for row in rows)
    sender = state.senders.get(state.depth)
    if sender is not None and sender.who:
        kind: UnitKind = "message"
        context = sender.label()
    elif state.speaker.who:
        kind, context = "turn", state.speaker.label()
    else:
        kind, context = ("quote" if state.depth else "sentence"), ""
    state.block(text, context)
    for sentence in split_sentences(text):
        state.add(kind, sentence, lines, context)


def _close_item(state: _State) -> None:
    _emit_item(state, state.items.pop())


def _marked_groups(rows: list[str]) -> list[list[str]]:
    """The lines of a block in groups, a new group at each line that starts with a bullet
    or an item number (its marker dropped)."""
    groups: list[list[str]] = []
    for row in rows:
        marked = _MARKED_RE.match(row)
        if marked is not None or not groups:
            groups.append([row[marked.end() :] if marked is not None else row])
        else:
            groups[-1].append(row)
    return groups


def _emit_item(state: _State, parts: list[tuple[str, tuple[int, int]]]) -> None:
    if not parts:
        return
    lines = (parts[0][1][0], parts[-1][1][1])
    rows = [row for part, _ in parts for row in part.split("\n")]
    groups = _marked_groups(rows)
    for group in groups[:-1]:
        _item_unit(state, " ".join(row.strip() for row in group), lines)
    _item_unit(state, " ".join(row.strip() for row in groups[-1]), lines)


def _item_unit(state: _State, text: str, lines: tuple[int, int]) -> None:
    text = one_line(text)
    match = _STAMPED_RE.match(text) or _NAMED_RE.match(text)
    if match is not None and not state.senders.get(state.depth):
        state.block(text)
        _turn(state, match, lines)
        return
    sender = state.senders.get(state.depth)
    context = sender.label() if sender is not None and sender.who else ""
    state.block(text, context)
    state.add("item", text, lines, context)


def _walk(tokens: Sequence[Token], state: _State) -> None:
    heading_level = 0
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "heading_open":
            heading_level = int(token.tag[1:]) if token.tag[1:].isdigit() else 1
        elif kind == "inline" and heading_level:
            text = one_line(_inline_text(token), 200)
            state.path = [(lvl, t) for lvl, t in state.path if lvl < heading_level]
            if text:
                state.path.append((heading_level, text))
                state.headings.append(text)
            # A new section: a speaker or sender above it no longer speaks.
            state.speaker = _Speaker()
            state.senders.clear()
            heading_level = 0
        elif kind == "hr":
            state.speaker = _Speaker()
            state.senders.clear()
        elif kind == "blockquote_open":
            state.depth += 1
        elif kind == "blockquote_close":
            state.senders.pop(state.depth, None)
            state.depth -= 1
        elif kind == "list_item_open":
            if state.items and state.items[-1]:
                # The text of the outer item so far is one unit, before its sub-items.
                _emit_item(state, state.items[-1])
                state.items[-1] = []
            state.items.append([])
        elif kind == "list_item_close":
            _close_item(state)
        elif kind in ("thead_open", "tbody_open"):
            continue
        elif kind == "tr_open":
            state.row = []
            state.row_lines = _lines(token, state.row_lines)
        elif kind == "tr_close":
            _table_row(state)
        elif kind == "inline" and state.row is not None:
            state.row.append(one_line(_inline_text(token)))
        elif kind == "table_close":
            state.header = None
        elif kind == "inline":
            parent = tokens[index - 1] if index else None
            lines = _lines(parent, _lines(token, (1, 1)))
            text = _inline_text(token)
            if state.items:
                state.items[-1].append((text, lines))
            else:
                _paragraph(state, text, lines)
        elif kind in ("fence", "code_block"):
            code = [line.strip().replace("`", "'") for line in token.content.split("\n")]
            quoted = " ".join(f"`{line}`" for line in code if line)
            if quoted:
                state.block(quoted)
                state.add("code", quoted, _lines(token, (1, 1)))


def _table_row(state: _State) -> None:
    cells = state.row or []
    state.row = None
    if state.header is None:
        state.header = cells
        return
    if not any(cells):
        return
    header = state.header

    def pair(index: int) -> str:
        name = header[index] if index < len(header) else ""
        return f"{name}: {cells[index]}" if name else cells[index]

    # The first cell labels the row, unless it is empty or only a row number.
    first = cells[0]
    numbered = not first or first.replace(".", "").isdigit()
    label = "" if numbered else first
    text = "; ".join(pair(i) for i in range(0 if numbered else 1, len(cells)) if cells[i])
    state.block(f"{label} — {text}" if label and text else label or text)
    state.add("row", text or label, state.row_lines, label if text else "")


@lru_cache(maxsize=1024)
def read_document(text: str) -> Document:
    """The units of ``text`` (a note's Markdown), in order (see the module docstring)."""
    text = text[:MAX_DOCUMENT_CHARS]
    source = text.split("\n")
    state = _State(source)
    _walk(_MD.parse(text), state)
    units = tuple(replace(unit, position=i) for i, unit in enumerate(state.units))
    return Document(units, tuple(state.blocks), tuple(state.headings))
