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
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .._text import one_line
from .layouts import emit_item, item_lead, paragraph
from .units import MAX_UNIT_CHARS, SETTLING_WORDS, Document, Speaker, Unit, UnitKind, UnitWriter

__all__ = [
    "MAX_DOCUMENT_CHARS",
    "MAX_UNIT_CHARS",
    "SETTLING_WORDS",
    "Document",
    "Unit",
    "UnitKind",
    "read_document",
]

MAX_DOCUMENT_CHARS = 4_000_000
"""The most characters of one note read as a document (notes are bounded when read; this
bounds the work on a pathological text handed in some other way)."""


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


def _close_item(writer: UnitWriter) -> None:
    emit_item(writer, writer.items.pop(), writer.lead())
    writer.leads.pop()


def _walk(tokens: Sequence[Token], writer: UnitWriter) -> None:
    heading_level = 0
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "heading_open":
            heading_level = int(token.tag[1:]) if token.tag[1:].isdigit() else 1
        elif kind == "inline" and heading_level:
            text = one_line(_inline_text(token), 200)
            writer.path = [(lvl, t) for lvl, t in writer.path if lvl < heading_level]
            if text:
                writer.path.append((heading_level, text))
                writer.headings.append(text)
            # A new section: a speaker or sender above it no longer speaks.
            writer.speaker = Speaker()
            writer.senders.clear()
            heading_level = 0
        elif kind == "hr":
            writer.speaker = Speaker()
            writer.senders.clear()
        elif kind == "blockquote_open":
            writer.depth += 1
        elif kind == "blockquote_close":
            writer.senders.pop(writer.depth, None)
            writer.depth -= 1
        elif kind == "list_item_open":
            if writer.items and writer.items[-1]:
                # The text of the outer item so far is one unit, before its sub-items, and
                # the label they are read with: "Signal only, after 7 p.m." under "Gil
                # Marchetti — former code inspector" is how to reach him.
                emit_item(writer, writer.items[-1], writer.lead())
                writer.leads[-1] = item_lead(writer.items[-1])
                writer.items[-1] = []
            writer.items.append([])
            writer.leads.append("")
        elif kind == "list_item_close":
            _close_item(writer)
        elif kind in ("thead_open", "tbody_open"):
            continue
        elif kind == "tr_open":
            writer.row = []
            writer.row_lines = _lines(token, writer.row_lines)
        elif kind == "tr_close":
            _table_row(writer)
        elif kind == "inline" and writer.row is not None:
            writer.row.append(one_line(_inline_text(token)))
        elif kind == "table_close":
            writer.header = None
        elif kind == "inline":
            parent = tokens[index - 1] if index else None
            lines = _lines(parent, _lines(token, (1, 1)))
            text = _inline_text(token)
            if writer.items:
                writer.items[-1].append((text, lines))
            else:
                paragraph(writer, text, lines)
        elif kind in ("fence", "code_block"):
            code = [line.strip().replace("`", "'") for line in token.content.split("\n")]
            quoted = " ".join(f"`{line}`" for line in code if line)
            if quoted:
                writer.block(quoted)
                writer.add("code", quoted, _lines(token, (1, 1)))


def _table_row(writer: UnitWriter) -> None:
    cells = writer.row or []
    writer.row = None
    if writer.header is None:
        writer.header = cells
        return
    if not any(cells):
        return
    header = writer.header

    def pair(index: int) -> str:
        name = header[index] if index < len(header) else ""
        return f"{name}: {cells[index]}" if name else cells[index]

    # The first cell labels the row, unless it is empty or only a row number.
    first = cells[0]
    numbered = not first or first.replace(".", "").isdigit()
    label = "" if numbered else first
    text = "; ".join(pair(i) for i in range(0 if numbered else 1, len(cells)) if cells[i])
    writer.block(f"{label} — {text}" if label and text else label or text)
    writer.add("row", text or label, writer.row_lines, label if text else "")


@lru_cache(maxsize=1024)
def read_document(text: str) -> Document:
    """The units of ``text`` (a note's Markdown), in order (see the module docstring)."""
    text = text[:MAX_DOCUMENT_CHARS]
    source = text.split("\n")
    writer = UnitWriter(source)
    _walk(_MD.parse(text), writer)
    return Document(tuple(writer.units), tuple(writer.blocks), tuple(writer.headings))
