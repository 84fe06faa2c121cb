"""The one writer of ``[context_bundle]`` envelopes, and the renderings of a bundle.

:func:`write_envelope` lays fields out in the template of SPEC §2. Every envelope the lab
writes itself goes through it: the offline scout's, the one rendered from a structured
(JSON) reply, the harness's "already prepared" one and the test doubles'. Its values are
untrusted (memory content, model output), so it makes them safe on the way:
:func:`~supercontext_lab.bundle.lookalikes.neutralise` turns any look-alike tag, prepared-block
heading or separator line into plain text, one-line fields are kept on one line, and a
summary line that would read as a key is joined to the line above.

:func:`field_part`, :func:`tool_part` and :func:`skill_part` are the layout of one field or
list item; ``fit_bundle`` rewrites a shortened envelope with the same parts, so both lay
items out alike.

The plain-text and Markdown renderings live with the records
(:func:`~supercontext_lab.bundle.records.render_plain`,
:func:`~supercontext_lab.bundle.records.render_markdown`) and are re-exported here with
the Markdown escapes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from .._markdown import md_block, md_inline
from .._text import one_line
from .grammar import (
    CLOSE_TAG,
    FIELD_LINE_RE,
    HAS_ENOUGH_CONTEXT,
    OPEN_TAG,
    PROPOSED_GOAL,
    RECOMMENDED_SKILLS,
    RECOMMENDED_TOOL_CALLS,
    STRUCTURAL_LINE_RE,
    SUMMARY,
    dedent_text,
    normalise_line_breaks,
)
from .lookalikes import neutralise
from .records import Source, find_attributions, render_markdown, render_plain

__all__ = [
    "attributions_as_text",
    "field_part",
    "md_block",
    "md_inline",
    "render_markdown",
    "render_plain",
    "skill_part",
    "tool_part",
    "write_envelope",
]

_NON_EMPTY_LINE = re.compile("^(?=.)", re.MULTILINE)


def _is_structural(line: str) -> bool:
    return STRUCTURAL_LINE_RE.match("\n" + line) is not None


def _join_structural(
    lines: str,
    head: str,
    pattern: re.Pattern[str],
    *,
    keep_first: bool,
) -> tuple[str, list[str]]:
    """Split ``lines`` (joined by ``"\\n"``) into the lines of a field's continuation.

    A line ``pattern`` reads as structure would start a new field when re-parsed, so it
    is joined, trimmed, to the line above (or to ``head``); with ``keep_first``, one that
    comes before any other line is kept as a line. The blank lines above it go, so it
    joins a line that has text (joined to a blank line it would start that line). Only the structural lines are visited one by one, so the cost is linear
    in the length of ``lines``.
    """
    out: list[str] = []  # groups of lines; the last one may still take joined text
    position = 0
    # The patterns match at the "\n" before a line: in ``"\n" + lines`` that is where
    # the line starts in ``lines``.
    for match in pattern.finditer("\n" + lines):
        start = match.start()
        end = lines.find("\n", start)
        end = len(lines) if end < 0 else end
        if start > position:
            out.append(lines[position : start - 1])
        structural = lines[start:end]
        if out:
            out[-1] = out[-1].rstrip()
            if not out[-1]:
                out.pop()
        if not out and keep_first:
            out.append(structural)
        elif out:
            out[-1] = f"{out[-1]} {structural.strip()}"
        else:
            head = f"{head} {structural.strip()}"
        position = end + 1
    if position <= len(lines):
        out.append(lines[position:])
    return head, out


def field_part(key: str, value: str, prefix: str = "", continuation: str = "") -> str:
    """Render ``key: value``; on one line it takes ``len(prefix + key) + 2 + len(value)``.

    Re-parsing trims the key line's text and dedents the continuation lines together. When
    that would alter ``value``, the whole value starts on the line below its key and is
    dedented as one block, which restores it exactly; its first line then stands alone, so
    that is done only when the line cannot be mistaken for a key. A continuation line that
    reads as a key or an item (two blocks of one field joined, say) would start a new
    field when re-parsed: it is kept on the line above.
    """
    first, _, rest = value.partition("\n")
    unstable = first != first.strip() or (bool(rest) and dedent_text(rest) != rest)
    if unstable and not _is_structural(first):
        first, rest = "", value
    head = f"{prefix}{key}: {first}" if first else f"{prefix}{key}:"
    if not rest:
        return head
    head, groups = _join_structural(rest, head, STRUCTURAL_LINE_RE, keep_first=not first)
    # Joining never leaves a group empty unless it was an empty line; an empty result
    # means every line went onto the head.
    body = "\n".join(groups)
    if not groups:
        return head
    return f"{head}\n{_NON_EMPTY_LINE.sub(continuation, body)}"


def tool_part(tool: str, args: str, why: str) -> str:
    """One ``recommended_tool_calls`` item; empty ``args`` or ``why`` are left out."""
    parts = [f"  - tool: {tool}".rstrip()]
    if args:
        parts.append(field_part("args", args, "    ", "      "))
    if why:
        parts.append(field_part("why", why, "    ", "      "))
    return "\n".join(parts)


def skill_part(skill: str, installed: bool | None, why: str) -> str:
    """One ``recommended_skills`` item; ``installed=None`` and an empty ``why`` are left out."""
    parts = [f"  - skill: {skill}".rstrip()]
    if installed is not None:
        parts.append(f"    installed: {'true' if installed else 'false'}")
    if why:
        parts.append(field_part("why", why, "    ", "      "))
    return "\n".join(parts)


def _one_line(value: str) -> str:
    """An untrusted value for a one-line field: neutralised, trimmed, on one line."""
    text = neutralise(value)
    return one_line(text) if normalise_line_breaks(text).count("\n") else text.strip()


def _block(value: str) -> str:
    """An untrusted multi-line value: neutralised, line breaks as ``"\\n"``, trimmed (as
    the parser reads it back), so its first line is on its key's line."""
    return neutralise(normalise_line_breaks(value)).strip()


def _summary_layout(summary: str) -> tuple[str, str]:
    """``summary`` as ``(text on the key line, lines below it)``.

    A line that would be read as a top-level key or the truncation marker is joined to
    the line above, or put on the key line when it comes first, so it stays summary text.
    """
    inline, groups = _join_structural(summary, "", FIELD_LINE_RE, keep_first=False)
    return inline.strip(), "\n".join(groups)


def attributions_as_text(text: str, sources: Collection[Source] | None = None) -> str:
    """``text`` with its attributions (only those citing ``sources``, when given) written
    in square brackets, ``[memory: other/note]``, which no parser reads as a citation.

    A fact copied from a note is the note's text: an attribution inside it says what the
    note says, not where the fact comes from. Whoever writes a fact into a summary line
    (``- <fact> (<its source>)``) puts the fact through this first, so the only citation
    of the line is the one the writer adds. Nothing grows: the result has the length of
    ``text``.
    """
    found = [a for a in find_attributions(text) if sources is None or a.source in sources]
    if not found:
        return text
    pieces: list[str] = []
    position = 0
    for attribution in found:
        inner = text[attribution.start + 1 : attribution.end - 1]
        pieces += [text[position : attribution.start], f"[{inner}]"]
        position = attribution.end
    pieces.append(text[position:])
    return "".join(pieces)


def write_envelope(
    *,
    has_enough_context: bool | None,
    proposed_goal: str | None,
    summary: str,
    tool_calls: Sequence[tuple[str, str, str]] = (),
    skills: Sequence[tuple[str, bool | None, str]] = (),
    summary_on_key_line: bool = False,
) -> str:
    """The ``[context_bundle]`` envelope in the template's layout.

    ``tool_calls`` are ``(tool, args, why)`` and ``skills`` ``(skill, installed, why)``.
    Every value is untrusted and made safe here (see the module docstring); ``args`` and
    ``summary`` may span lines. ``has_enough_context=None`` leaves that line out,
    ``installed=None`` the ``installed`` line, ``proposed_goal=None`` (or an empty one)
    writes ``none``. The summary goes on the lines below its key, or on the key line
    itself with ``summary_on_key_line`` when it is one line.
    """
    out = [OPEN_TAG]
    if has_enough_context is not None:
        out.append(f"{HAS_ENOUGH_CONTEXT}: {'true' if has_enough_context else 'false'}")
    goal = _one_line(proposed_goal) if proposed_goal else ""
    out.append(f"{PROPOSED_GOAL}: {goal or 'none'}")
    inline, below = _summary_layout(_block(summary)) if summary else ("", "")
    if summary_on_key_line and not inline and "\n" not in below:
        inline, below = below.strip(), ""
    out.append(f"{SUMMARY}: {inline}" if inline else f"{SUMMARY}:")
    if below.strip():
        out[-1] += "\n" + below
    if tool_calls:
        out.append(f"{RECOMMENDED_TOOL_CALLS}:")
        out += [
            tool_part(_one_line(tool), _block(args), _one_line(why))
            for tool, args, why in tool_calls
        ]
    else:
        out.append(f"{RECOMMENDED_TOOL_CALLS}: []")
    if skills:
        out.append(f"{RECOMMENDED_SKILLS}:")
        out += [
            skill_part(_one_line(skill), installed, _one_line(why))
            for skill, installed, why in skills
        ]
    else:
        out.append(f"{RECOMMENDED_SKILLS}: []")
    out.append(CLOSE_TAG)
    return "\n".join(out)
