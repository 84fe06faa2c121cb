"""Plain-text and Markdown renderings of a :class:`~supercontext_lab.bundle.ContextBundle`,
and the envelope text itself, written from its fields.

The plain text is stable (no ids, addresses or timings) so terminals, doctests and nbval
can compare it; the Markdown escapes every untrusted string, so memory content or model
output can open no link, emphasis, heading or raw HTML.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .bundle import ContextBundle

__all__ = ["md_block", "md_inline", "render_markdown", "render_plain", "write_envelope"]


def write_envelope(
    *,
    has_enough_context: bool,
    proposed_goal: str | None,
    summary: str,
    tool_calls: Sequence[tuple[str, str, str]] = (),
    skills: Sequence[tuple[str, bool, str]] = (),
) -> str:
    """The ``[context_bundle]`` envelope in the template's layout.

    ``tool_calls`` are ``(tool, args, why)`` and ``skills`` ``(skill, installed, why)``.
    Every value but ``summary`` must already be one line, and the caller makes untrusted
    text safe first: this only lays the fields out.
    """
    out = [
        "[context_bundle]",
        f"has_enough_context: {'true' if has_enough_context else 'false'}",
        f"proposed_goal: {proposed_goal or 'none'}",
        f"summary:\n{summary}" if summary else "summary:",
    ]
    if tool_calls:
        out.append("recommended_tool_calls:")
        for tool, args, why in tool_calls:
            out += [f"  - tool: {tool}", f"    args: {args}", f"    why: {why}"]
    else:
        out.append("recommended_tool_calls: []")
    if skills:
        out.append("recommended_skills:")
        for skill, installed, why in skills:
            out += [
                f"  - skill: {skill}",
                f"    installed: {'true' if installed else 'false'}",
                f"    why: {why}",
            ]
    else:
        out.append("recommended_skills: []")
    out.append("[/context_bundle]")
    return "\n".join(out)


def _plain_value(value: str, indent: str) -> str:
    return value.replace("\n", "\n" + indent)


def render_plain(bundle: ContextBundle) -> str:
    enough = {True: "true", False: "false", None: "unknown"}[bundle.has_enough_context]
    out = [
        "ContextBundle",
        f"  has_enough_context: {enough}",
        f"  proposed_goal: {bundle.proposed_goal if bundle.proposed_goal is not None else 'none'}",
    ]
    if bundle.summary:
        out.append("  summary:")
        out.append("    " + _plain_value(bundle.summary, "    "))
    else:
        out.append("  summary: (empty)")
    out.append(f"  recommended_tool_calls: {len(bundle.recommended_tool_calls)}")
    for number, call in enumerate(bundle.recommended_tool_calls, start=1):
        out.append(f"    {number}. {call.tool}")
        if call.args:
            out.append("       args: " + _plain_value(call.args, "         "))
        if call.why:
            out.append("       why: " + _plain_value(call.why, "         "))
    out.append(f"  recommended_skills: {len(bundle.recommended_skills)}")
    for number, skill in enumerate(bundle.recommended_skills, start=1):
        state = {True: "installed", False: "not installed", None: "installed: unknown"}
        out.append(f"    {number}. {skill.skill} ({state[skill.installed]})")
        if skill.why:
            out.append("       why: " + _plain_value(skill.why, "         "))
    return "\n".join(out)


# HTML-significant characters become entities; every other ASCII punctuation character is
# backslash-escaped (CommonMark allows it for all of them), so untrusted text can open no
# link, emphasis, heading, list, table, autolink or raw HTML.
_MD_ESCAPES = {ord(ch): "\\" + ch for ch in string.punctuation}
_MD_ESCAPES.update({ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"})


def md_inline(text: str) -> str:
    """Escape untrusted text for one markdown line (whitespace runs collapse)."""
    return " ".join(text.split()).translate(_MD_ESCAPES)


def md_block(text: str) -> str:
    """Escape untrusted multi-line text, keeping line breaks and blank-line paragraphs."""
    paragraphs: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            paragraphs[-1].append(md_inline(line))
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join("\\\n".join(lines) for lines in paragraphs if lines)


def render_markdown(bundle: ContextBundle) -> str:
    enough = {True: "yes", False: "no", None: "unknown"}[bundle.has_enough_context]
    goal = "*none*" if bundle.proposed_goal is None else md_inline(bundle.proposed_goal)
    out = [
        f"**Context bundle** · has enough context: **{enough}**",
        "",
        f"**Proposed goal:** {goal}",
        "",
        "**Summary**",
        "",
        md_block(bundle.summary) or "*empty*",
        "",
        "**Recommended tool calls**",
        "",
    ]
    for number, call in enumerate(bundle.recommended_tool_calls, start=1):
        line = f"{number}. **{md_inline(call.tool)}**"
        if call.why:
            line += f" — {md_inline(call.why)}"
        if call.args:
            line += f"\\\n   args: {md_inline(call.args)}"
        out.append(line)
    if not bundle.recommended_tool_calls:
        out.append("*none*")
    out += ["", "**Recommended skills**", ""]
    for number, skill in enumerate(bundle.recommended_skills, start=1):
        state = {True: "installed", False: "not installed", None: "installed: unknown"}
        line = f"{number}. **{md_inline(skill.skill)}** ({state[skill.installed]})"
        if skill.why:
            line += f" — {md_inline(skill.why)}"
        out.append(line)
    if not bundle.recommended_skills:
        out.append("*none*")
    return "\n".join(out)
