"""Layouts: what the lines of a paragraph or list item are, read as a person would.

A pasted e-mail's headers (``From:``, ``Sent:``, ``Date:``, ``Subject:``) and attribution
lines ("On Mon, 2 Mar 2026, Sam <sam@…> wrote:") say who wrote the message below them and
when, each quote level its own; ``**Sam**, 12:20`` on a line of its own names the speaker
of what follows; ``Name: text``, ``[10:24] name: text`` and a chat app's dated lines
(``[11/05/2026, 08:47] Name: text``) are chat turns; lines
that lead with a date or a time are log lines; a bullet or an item number at the start of
a line starts an item though Markdown reads it as the line above going on. A paragraph
whose lines are mostly such lines is cut at each; any other paragraph is prose, cut into
whole sentences. Every pattern is anchored and bounded, so each line is read in linear
time.
"""

from __future__ import annotations

import re

from .._text import one_line
from .sentences import split_sentences
from .units import Speaker, UnitKind, UnitWriter

__all__ = ["LEAD_CHARS", "emit_item", "item_lead", "item_unit", "marked_groups", "paragraph"]

_HEADER_RE = re.compile(r"^\s*(from|sent|date|to|cc|bcc|subject|reply-to)\s*:\s*(.*)$", re.I)

# "RE: ", "Fwd: ", "AW: ", "SV: " (and runs of them) before a reply's subject.
_REPLY_RE = re.compile(r"^(?:\s*(?:re|fwd?|aw|sv|antw)\s*(?:\[\d{1,3}\])?\s*:)+\s*", re.I)

_ORIGINAL_RE = re.compile(r"^\s*-{2,}\s*(original message|forwarded message)\s*-{2,}\s*$", re.I)

_WROTE_RE = re.compile(
    r"^\s*(?:on\s+(?P<date>.{1,80}?),?\s+)?(?P<who>[^,<>:]{1,60}?)\s*(?:<[^<>\s]{1,120}>)?\s+wrote:\s*$",
    re.I,
)

_ADDRESS_RE = re.compile(r"\s*[<\[(]?[\w.+-]{1,64}@[\w.-]{1,120}[>\])]?\s*")

_STAMPED_RE = re.compile(
    r"^\s*\[?(?P<time>\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?)\]?\s+(?P<who>[^:\s][^:]{0,39}):\s+(?P<text>\S.*)$",
    re.I,
)

# A chat app's export line, stamped with a date and a time in either order: WhatsApp's
# "[11/05/2026, 08:47] Graham Ashdown: …", "11/05/2026, 08:47 - Graham Ashdown: …" and
# "[08:47, 11/05/2026] Graham Ashdown: …", Teams' and Slack's "[10/09 15:30] Hugh
# Bennett: …". The speaker is written as a name (or a phone number) so that a dated log
# line with a colon ("12/05 10:00 Call with Wes: …") stays one.
_DATE = r"(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}(?:[./]\d{2,4})?)"
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?"
_DATED_RE = re.compile(
    rf"^\s*\[?(?P<time>{_DATE},?\s+{_CLOCK}|{_CLOCK},?\s+{_DATE})\]?\s+(?:[-–]\s+)?"
    r"(?P<who>[A-Z][\w.'’-]{0,24}(?: [A-Z][\w.'’-]{0,24}){0,2}|\+\d[\d ]{6,18}\d):\s+"
    r"(?P<text>\S.*)$",
    re.I,
)

# "Sam: …", "Sam (12:20): …", "Sam [12:20]: …" (as Teams and Slack paste a chat).
_NAMED_RE = re.compile(
    r"^\s*(?P<who>[A-Z][\w.'’-]{0,24}(?: [A-Z][\w.'’-]{0,24}){0,2})\s*"
    r"(?:[(\[](?P<time>[^()\[\]]{1,24})[)\]])?:\s+(?P<text>\S.*)$"
)

_SPEAKER_LINE_RE = re.compile(
    r"^\s*\*\*(?P<who>[^*\n]{1,40})\*\*\s*(?:[,(–—-]\s*(?P<time>[^()\n]{1,30}?)\)?)?\s*:?\s*$"
)

_LOG_LINE_RE = re.compile(
    r"^\s*(?:\[\s*)?(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|\d{1,2}\.\d{1,2}\.\d{2,4}"
    r"|\d{1,2}:\d{2}|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\.?\s+\d{1,2})\b",
    re.I,
)

_BULLETS = "•‣⁃◦▪●∙"

_MARKED_RE = re.compile(r"^\s{0,8}(?:[•‣⁃◦▪●∙]|\d{1,3}[.)])\s+")


def _stamped(row: str) -> re.Match[str] | None:
    """A chat line that opens with its time, or its date and time, then the speaker."""
    return _STAMPED_RE.match(row) or _DATED_RE.match(row)


def _sender(value: str) -> str:
    return one_line(_ADDRESS_RE.sub(" ", value).strip(" \"'"), 80)


def paragraph(writer: UnitWriter, text: str, lines: tuple[int, int]) -> None:
    """A paragraph (outside a list item): e-mail headers, chat lines, log lines or prose."""
    rows = [line for line in text.split("\n") if line.strip()]
    if not rows:
        return
    first = lines[0]
    headers = [_HEADER_RE.match(row) for row in rows]
    named = {m.group(1).lower(): m.group(2).strip() for m in headers if m is not None}
    if len(named) >= 2 and ("from" in named or "sent" in named or "date" in named):
        # The headers of a pasted e-mail: what follows at this level is its message.
        writer.senders[writer.depth] = Speaker(
            _sender(named.get("from", "")), one_line(named.get("sent") or named.get("date", ""), 60)
        )
        writer.speaker = Speaker()
        subject = named.get("subject", "")
        key = " ".join(_REPLY_RE.sub("", subject).casefold().split())
        if key and key not in writer.subjects:
            # The subject often says what the message is about, and often its figure;
            # the replies' "RE: …" repeat it, and are no unit of their own.
            writer.subjects.add(key)
            writer.add(
                "message", f"Subject: {subject}", lines, writer.senders[writer.depth].label()
            )
        rest = [row for row, m in zip(rows, headers, strict=True) if m is None]
        if not rest:
            return
        rows = rest
    kept: list[str] = []
    for row in rows:
        wrote = _WROTE_RE.match(row)
        if wrote is not None:
            speaker = Speaker(_sender(wrote.group("who")), one_line(wrote.group("date") or "", 60))
            # The attribution line sits just above the quote it introduces, or at its top.
            writer.senders[writer.depth + 1] = speaker
            if kept:
                _prose(writer, kept, (first, lines[1]))
                kept = []
            writer.senders[writer.depth] = (
                speaker if writer.depth else writer.senders.get(0, Speaker())
            )
            continue
        if _ORIGINAL_RE.match(row):
            continue
        kept.append(row)
    if not kept:
        return
    speaker_line = (
        _SPEAKER_LINE_RE.match(writer.source[first - 1]) if first - 1 < len(writer.source) else None
    )
    if speaker_line is not None:
        writer.senders.pop(writer.depth, None)
        writer.speaker = Speaker(
            one_line(speaker_line.group("who"), 40), one_line(speaker_line.group("time") or "", 30)
        )
        kept = kept[1:]
        if not kept:
            return
    if len(kept) >= 2 and _line_units(writer, kept, first):
        return
    groups = marked_groups(kept)
    if len(groups) > 1:
        # Bullets or numbered items the editor wrote under a paragraph's first line.
        _prose(writer, groups[0], lines)
        for group in groups[1:]:
            item_unit(writer, " ".join(row.strip() for row in group), lines)
        return
    if len(kept) == 1:
        match = _stamped(kept[0]) or _NAMED_RE.match(kept[0])
        if match is not None and writer.speaker.who == "" and not writer.senders.get(writer.depth):
            writer.block(kept[0])
            _turn(writer, match, (first, lines[1]))
            return
    _prose(writer, kept, lines)


def _turn(writer: UnitWriter, match: re.Match[str], lines: tuple[int, int]) -> None:
    who = one_line(match.group("who"), 40)
    when = one_line(match.group("time") or "", 30)
    # The speaker once, in front: "[10:24] sam: …", "Sam (10:24): …" and "Sam [10:24]: …"
    # are all "Sam: …", said at the time the label gives.
    text = f"{who}: {match.group('text').strip()}"
    writer.add("turn", text, lines, f"{who} ({when})" if when else who)


def _line_units(writer: UnitWriter, rows: list[str], first: int) -> bool:
    """Whether the lines of a paragraph are units of their own (chat lines, log lines,
    bullets), and if so add them; a paragraph of wrapped prose is not."""
    stamped = [_stamped(row) for row in rows]
    named = [_NAMED_RE.match(row) for row in rows]
    logged = [_LOG_LINE_RE.match(row) is not None or row.lstrip()[:1] in _BULLETS for row in rows]
    leads = sum(1 for s, n, g in zip(stamped, named, logged, strict=True) if s or n or g)
    # Most lines must lead so, or it is prose that wraps at a colon now and then.
    if leads < 2 or leads * 3 < len(rows) * 2:
        return False
    current: list[str] = []
    start = first
    for offset, row in enumerate(rows):
        if writer.full:
            return True
        match = stamped[offset] or named[offset]
        if match is not None or logged[offset]:
            if current:
                _flush_line(writer, current, (start, first + offset - 1))
            current, start = [row], first + offset
        else:
            current.append(row)  # a continuation of the line above
    if current:
        _flush_line(writer, current, (start, first + len(rows) - 1))
    return True


def _flush_line(writer: UnitWriter, rows: list[str], lines: tuple[int, int]) -> None:
    text = " ".join(row.strip() for row in rows)
    writer.block(text)
    match = _stamped(text) or _NAMED_RE.match(text)
    if match is not None:
        _turn(writer, match, lines)
    else:
        writer.add("item", text.lstrip(_BULLETS + " "), lines)


def _prose(writer: UnitWriter, rows: list[str], lines: tuple[int, int]) -> None:
    text = " ".join(row.strip() for row in rows)
    sender = writer.senders.get(writer.depth)
    if sender is not None and sender.who:
        kind: UnitKind = "message"
        context = sender.label()
    elif writer.speaker.who:
        kind, context = "turn", writer.speaker.label()
    else:
        kind, context = ("quote" if writer.depth else "sentence"), ""
    writer.block(text, context)
    sentences = split_sentences(text)
    for sentence in sentences:
        writer.add(kind, sentence, lines, context, opening=sentences[0])


def marked_groups(rows: list[str]) -> list[list[str]]:
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


LEAD_CHARS = 100
"""The longest label a list item gives its sub-items (its first sentence, cut at a word)."""


def item_lead(parts: list[tuple[str, tuple[int, int]]]) -> str:
    """The label a list item gives its sub-items: its first sentence, at most
    :data:`LEAD_CHARS` characters cut at a word, without its closing colon or stop."""
    text = one_line(" ".join(part for part, _ in parts))
    sentences = split_sentences(text[: LEAD_CHARS * 4])
    lead = sentences[0] if sentences else text
    if len(lead) > LEAD_CHARS:
        lead = lead[:LEAD_CHARS].rsplit(" ", 1)[0] + " …"
    return lead.rstrip(" :.;")


def emit_item(writer: UnitWriter, parts: list[tuple[str, tuple[int, int]]], lead: str = "") -> None:
    """Add a list item's units; ``lead`` is the label of the item it is a sub-item of."""
    if not parts:
        return
    lines = (parts[0][1][0], parts[-1][1][1])
    rows = [row for part, _ in parts for row in part.split("\n")]
    groups = marked_groups(rows)
    for group in groups[:-1]:
        item_unit(writer, " ".join(row.strip() for row in group), lines, lead)
    item_unit(writer, " ".join(row.strip() for row in groups[-1]), lines, lead)


def item_unit(writer: UnitWriter, text: str, lines: tuple[int, int], lead: str = "") -> None:
    text = one_line(text)
    match = _stamped(text) or _NAMED_RE.match(text)
    if match is not None and not writer.senders.get(writer.depth):
        writer.block(text)
        _turn(writer, match, lines)
        return
    sender = writer.senders.get(writer.depth)
    context = sender.label() if sender is not None and sender.who else lead
    writer.block(text, context)
    writer.add("item", text, lines, context)
