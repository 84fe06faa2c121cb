"""Small HTML building blocks for the widgets: escaping, attribution chips, badges, tables.

``ipywidgets.HTML`` values are inserted into the page as they are, without sanitising, so
everything that did not come from this module (memory content, model output, tool names,
arguments, reasons, file paths) goes through :func:`escape` before it becomes HTML. The
helpers here take *plain text* unless their parameter is called ``*_html``.

:func:`escape` also draws what a page would hide: a bidirectional control (U+202E shows
``1234-5678`` as ``8765-4321``), a zero-width character, a control character or a lone
surrogate is written as its escape (``\u202e``), as the command line shows it, so the
reviewer reads what the orchestrator reads. A zero-width joiner or non-joiner between
two letters of other scripts (an emoji sequence, Persian) is left as it is.

Styles are inline on purpose: an ``HTML`` widget may render in a page without the lab's
stylesheet (a saved notebook, nbviewer), and inline styles travel with the markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from ..._text import INVISIBLE
from ...bundle.records import Source, find_attributions, strip_bullet
from ...scout.sources import SourceText

__all__ = [
    "BADGE_KINDS",
    "CHIP_COLOURS",
    "NOT_READ",
    "PLAIN_CHIP_LABELS",
    "badge",
    "chip",
    "escape",
    "link_or_text",
    "note",
    "note_chip",
    "pre",
    "render_attributions",
    "render_summary_html",
    "section",
    "source_chip",
    "strip_bullet",
    "table",
]

_FONT = "font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px;"

BADGE_KINDS: dict[str, tuple[str, str]] = {
    "ok": ("#1b5e20", "#e8f5e9"),
    "warn": ("#7a4f01", "#fff4d6"),
    "error": ("#8e1b1b", "#fdecea"),
    "info": ("#0d47a1", "#e3f0fd"),
    "neutral": ("#424242", "#eeeeee"),
}
"""Badge kind → (text colour, background colour)."""

_BADGE_ALIASES = {
    "success": "ok",
    "good": "ok",
    "warning": "warn",
    "danger": "error",
    "bad": "error",
    "muted": "neutral",
    "unknown": "neutral",
}

CHIP_COLOURS: dict[str, tuple[str, str]] = {
    "memory": ("#4a148c", "#f1e6fb"),
    "profile": ("#0d47a1", "#e3f0fd"),
    "integrations": ("#1b5e20", "#e6f4e7"),
    "skill": ("#6d4c00", "#fbf1d9"),
    "transcript": ("#8a3b00", "#fdeede"),
    "web": ("#00545c", "#dff5f6"),
}
"""Attribution kind → (text colour, background colour); one entry per ``SourceKind``."""

PLAIN_CHIP_LABELS: dict[str, str] = {"memory": "memory: MEMORY.md or a note"}
"""What a chip says for an attribution that names no document, where the kind alone would
look like the named form: a plain ``(memory)`` may cite MEMORY.md or any note read."""

_HOVER_CHARS = 600

_UNSAFE_URL_CHARS = re.compile(
    r"[\s\x00-\x1f\x7f<>\"'`" + "".join(chr(code) for code in sorted(INVISIBLE)) + "]"
)
_JOINERS = frozenset({0x200C, 0x200D})
# What escape() shows as an escape: the invisible characters (joiners aside), controls but
# tab and line breaks, line and paragraph separators, and lone surrogates.
_SHOWN = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (
        *(INVISIBLE - _JOINERS),
        *(c for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)),
        *range(0x7F, 0xA0),
        0x2028,
        0x2029,
        *range(0xD800, 0xE000),
    )
}
# A joiner next to ASCII (or at either end) joins nothing a script needs: it is shown.
_LONE_JOINER = re.compile(r"(?:^|(?<=[\x00-\x7f]))[\u200c\u200d]|[\u200c\u200d](?=[\x00-\x7f]|$)")


def escape(text: object) -> str:
    """``html.escape(str(text), quote=True)``, with every character a page would hide shown
    as its escape (see the module docstring): safe in element content and attribute
    values, and read as the orchestrator reads it."""
    shown = html.escape(str(text), quote=True).translate(_SHOWN)
    return _LONE_JOINER.sub(lambda match: f"\\u{ord(match.group()):04x}", shown)


def badge(text: str, kind: str) -> str:
    """A small rounded label; ``kind`` is one of :data:`BADGE_KINDS` (``ok``, ``warn``,
    ``error``, ``info``, ``neutral``) or an alias such as ``success`` or ``warning``."""
    name = _BADGE_ALIASES.get(kind, kind)
    if name not in BADGE_KINDS:
        raise ValueError(
            f"badge kind {kind!r} is not known; use one of {', '.join(sorted(BADGE_KINDS))}."
        )
    colour, background = BADGE_KINDS[name]
    return (
        f'<span class="scl-badge scl-badge-{name}" style="display:inline-block; '
        f"padding:1px 8px; border-radius:9px; font-size:12px; font-weight:600; "
        f'color:{colour}; background:{background}; border:1px solid {colour}33;">'
        f"{escape(text)}</span>"
    )


def _chip_html(kind: str, label_html: str, hover: str | None = None) -> str:
    colour, background = CHIP_COLOURS[kind]
    title = f"source: {kind}" if hover is None else hover
    return (
        f'<span class="scl-chip scl-chip-{kind}" title="{escape(title)}" '
        f'style="display:inline-block; padding:0 7px; margin:0 1px; border-radius:8px; '
        f"font-size:11.5px; line-height:18px; color:{colour}; background:{background}; "
        f'border:1px solid {colour}44; white-space:nowrap;">{label_html}</span>'
    )


def chip(kind: str, ref: str | None = None, *, hover: str | None = None) -> str:
    """One attribution chip: ``chip("memory")`` (shown as ``memory: MEMORY.md or a note``,
    see :data:`PLAIN_CHIP_LABELS`), ``chip("memory", "ns/key")`` (shown as
    ``memory: ns/key``) or ``chip("web", "https://…")``. ``hover`` is the plain text shown
    on hover (default: ``source: <kind>``).

    A web reference becomes a link only when it is a plain ``http``/``https`` URL (opened
    in a new tab with ``rel="noopener noreferrer"``); anything else is shown as text.
    """
    name = kind.lower()
    if name not in CHIP_COLOURS:
        raise ValueError(
            f"attribution kind {kind!r} is not known; use one of {', '.join(CHIP_COLOURS)}."
        )
    if ref is None:
        return _chip_html(name, escape(PLAIN_CHIP_LABELS.get(name, name)), hover)
    shown = link_or_text(ref) if name == "web" else escape(ref)
    return _chip_html(name, f"{escape(name)}: {shown}", hover)


def source_chip(source: Source, *, hover: str | None = None) -> str:
    """The chip of a parsed :class:`~supercontext_lab.bundle.records.Source`."""
    return chip(source.kind, source.ref, hover=hover)


def link_or_text(url: str) -> str:
    """An ``<a>`` for a well-formed http(s) URL, else the escaped text of ``url``."""
    candidate = url.strip()
    if candidate and not _UNSAFE_URL_CHARS.search(candidate):
        parts = urlsplit(candidate)
        if parts.scheme.lower() in ("http", "https") and parts.netloc:
            return (
                f'<a href="{escape(candidate)}" rel="noopener noreferrer" target="_blank" '
                f'style="color:inherit; text-decoration:underline;">{escape(candidate)}</a>'
            )
    return escape(url)


def _hover(text: str) -> str:
    """A source's text as a hover shows it: the start of it."""
    return text if len(text) <= _HOVER_CHARS else text[:_HOVER_CHARS].rstrip() + " …"


def note_chip(source: Source, text: str, *, title: str = "") -> str:
    """The chip of a source the run read: the chip alone in the line, the source's text
    on hover, and the whole text opened below it on click (a ``<details>`` element: no
    script needed). A transcript chip with a ``title`` (its conversation's title and
    date) shows that instead of the conversation's id."""
    if title and source.kind == "transcript":
        shown = _chip_html(source.kind, f"transcript: {escape(title)}", _hover(text))
    else:
        shown = source_chip(source, hover=_hover(text))
    return (
        f'<details class="scl-cited" style="display:inline;"><summary style="display:inline; '
        f'cursor:pointer; list-style:none;">{shown}'
        f"</summary>{pre(text, max_height='240px')}</details>"
    )


NOT_READ = "not read by this run: there is nothing to open"
"""The hover of a chip whose source the run did not read."""


def render_attributions(text: str, notes: Mapping[Source, SourceText] | None = None) -> str:
    """``text`` escaped, with every attribution the bundle parser finds in it
    (:func:`~supercontext_lab.bundle.records.find_attributions`) turned into a chip
    (inline, no wrapper). With ``notes`` (what the run read, see
    :func:`~supercontext_lab.lab.widgets.cited.cited_sources`), a source found there gets
    the chip of :func:`note_chip`, and one missing says it was not read."""
    pieces: list[str] = []
    position = 0
    for attribution in find_attributions(text):
        pieces.append(escape(text[position : attribution.start]))
        read = notes.get(attribution.source) if notes is not None else None
        if read is not None:
            pieces.append(note_chip(attribution.source, read.text, title=read.title))
        else:
            hover = NOT_READ if notes is not None else None
            pieces.append(source_chip(attribution.source, hover=hover))
        position = attribution.end
    pieces.append(escape(text[position:]))
    return "".join(pieces)


def _is_bullet(line: str) -> bool:
    return strip_bullet(line) != line


def render_summary_html(summary: str, notes: Mapping[Source, SourceText] | None = None) -> str:
    """The summary as HTML: every attribution becomes a coloured chip (its source's text
    on hover and, clicked, below it when ``notes`` has it), every other character is
    escaped, and line breaks are kept (the block uses ``pre-wrap``).

    Bullet lines (``- fact``) become the items of a list, so the reader sees bullets, not
    a literal dash; other lines are kept as they are, in order.
    """
    style = f"white-space:pre-wrap; line-height:1.55; {_FONT}"
    lines = summary.split("\n")
    if not any(_is_bullet(line) for line in lines):
        return (
            f'<div class="scl-summary" style="{style}">{render_attributions(summary, notes)}</div>'
        )
    parts: list[str] = []
    items: list[str] = []

    def close_list() -> None:
        if items:
            parts.append(f'<ul style="margin:2px 0; padding-left:20px;">{"".join(items)}</ul>')
            items.clear()

    for line in lines:
        if _is_bullet(line):
            items.append(f"<li>{render_attributions(strip_bullet(line), notes)}</li>")
        elif line.strip():
            close_list()
            parts.append(f"<div>{render_attributions(line, notes)}</div>")
    close_list()
    return f'<div class="scl-summary" style="{style}">{"".join(parts)}</div>'


def pre(text: str, *, max_height: str | None = None) -> str:
    """Escaped text in a ``<pre>`` block that wraps long lines."""
    scroll = f" max-height:{max_height}; overflow:auto;" if max_height else ""
    return (
        '<pre class="scl-pre" style="white-space:pre-wrap; word-break:break-word; margin:2px 0; '
        f'font-size:12px; background:#f7f7f7; padding:4px 6px; border-radius:4px;{scroll}">'
        f"{escape(text)}</pre>"
    )


def section(title: str, body_html: str = "") -> str:
    """A small heading (escaped) followed by ``body_html`` (already HTML)."""
    return (
        f'<div class="scl-section" style="margin:6px 0 2px 0; {_FONT}">'
        f'<div style="font-weight:600; margin-bottom:3px;">{escape(title)}</div>{body_html}</div>'
    )


def note(text: str, kind: str = "info", *, strong: str = "") -> str:
    """A one-paragraph callout coloured like :func:`badge`; ``strong`` is a bold prefix."""
    name = _BADGE_ALIASES.get(kind, kind)
    if name not in BADGE_KINDS:
        raise ValueError(
            f"note kind {kind!r} is not known; use one of {', '.join(sorted(BADGE_KINDS))}."
        )
    colour, background = BADGE_KINDS[name]
    lead = f"<b>{escape(strong)}</b> " if strong else ""
    return (
        f'<div class="scl-note scl-note-{name}" style="{_FONT} color:{colour}; '
        f"background:{background}; border-left:4px solid {colour}; padding:6px 10px; "
        f'margin:4px 0; white-space:pre-wrap;">{lead}{escape(text)}</div>'
    )


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, empty: str = "none") -> str:
    """A compact table: ``headers`` are plain text, each cell of ``rows`` is already HTML.

    With no rows, the escaped ``empty`` text is shown instead.
    """
    body = [
        "<tr>"
        + "".join(
            f'<td style="padding:3px 8px; vertical-align:top; border-top:1px solid #e0e0e0;">'
            f"{cell}</td>"
            for cell in row
        )
        + "</tr>"
        for row in rows
    ]
    if not body:
        return f'<div style="{_FONT} color:#757575; font-style:italic;">{escape(empty)}</div>'
    head = "".join(
        f'<th style="text-align:left; padding:3px 8px; font-weight:600;">{escape(h)}</th>'
        for h in headers
    )
    return (
        f'<table class="scl-table" style="border-collapse:collapse; {_FONT}">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
