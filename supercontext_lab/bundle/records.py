"""The records of a parsed envelope, and the attributions its summary cites (SPEC §2, §13).

:class:`ContextBundle` (with its :class:`RecommendedToolCall` and
:class:`RecommendedSkill` items) is what :func:`~supercontext_lab.bundle.parse_context_bundle`
returns; this module sits below both the parser and the writer, so neither needs the
other to name these types. They are also importable from :mod:`supercontext_lab` and
:mod:`supercontext_lab.bundle`.

A summary cites where each fact came from: ``(memory)`` or ``(memory: <namespace>/<key>)``,
``(profile)``, ``(integrations)``, ``(skill: <id>)``, ``(web: <url>)`` and
``(transcript: <thread>)``, the kind in any letter case. :func:`find_attributions` finds
them in any text (one pass, linear however the text is made), :func:`split_summary` splits
a summary into :class:`SummaryLine` records, and :attr:`ContextBundle.bullets` gives each
summary bullet with its :class:`Source` records, which is what a grounding check reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from .._markdown import md_block, md_inline

__all__ = [
    "SOURCE_KINDS",
    "Attribution",
    "ContextBundle",
    "RecommendedSkill",
    "RecommendedToolCall",
    "Source",
    "SourceKind",
    "SummaryLine",
    "find_attributions",
    "render_markdown",
    "render_plain",
    "split_summary",
    "strip_bullet",
]

SourceKind = Literal["memory", "profile", "integrations", "skill", "web", "transcript"]
"""Where a summary fact may come from."""

SOURCE_KINDS: tuple[SourceKind, ...] = get_args(SourceKind)
"""Every :data:`SourceKind`, in the order above."""


@dataclass(frozen=True)
class Source:
    """One cited source: its kind, and the document it names (``None`` when it names none).

    ``ref`` is the text after the colon, trimmed: ``"project-grant/budget-summary"`` for
    ``(memory: project-grant/budget-summary)``, a URL for ``(web: …)``, a skill id or a
    thread name. Only ``memory`` may be cited with or without one; ``profile`` and
    ``integrations`` never have one, ``skill``, ``web`` and ``transcript`` always do.
    """

    kind: SourceKind
    ref: str | None = None

    @property
    def label(self) -> str:
        """``"memory"``, or ``"memory: <namespace>/<key>"`` when a document is named."""
        return self.kind if self.ref is None else f"{self.kind}: {self.ref}"

    @property
    def memory_document(self) -> tuple[str, str] | None:
        """``(namespace, key)`` for ``(memory: <namespace>/<key>)``, else ``None``."""
        if self.kind != "memory" or self.ref is None:
            return None
        namespace, slash, key = self.ref.partition("/")
        if not slash or not namespace.strip() or not key.strip():
            return None
        return namespace.strip(), key.strip()


@dataclass(frozen=True)
class Attribution:
    """An attribution found in a text: the :class:`Source` and where it is written.

    ``text[start:end]`` is the whole parenthesised attribution, parentheses included.
    """

    source: Source
    start: int
    end: int


# The kinds are matched in ASCII letters only (no Kelvin sign for the "k" of "skill").
# A reference starts with a non-space and may hold one level of balanced parentheses, as
# Wikipedia URLs do. No two parts of the pattern can take the same character, so a failed
# match is given up after one scan of its line: linear on any text.
_REF = r"(?:[^()\s]|\([^()\n]*\))(?:[^()\n]|\([^()\n]*\))*"
_ATTRIBUTION_RE = re.compile(
    r"\(\s*(?:(?P<plain>(?ai:memory|profile|integrations))\s*\)"
    rf"|(?P<kind>(?ai:memory|skill|web|transcript))\s*:\s*(?P<ref>{_REF})\))"
)


def find_attributions(text: str) -> tuple[Attribution, ...]:
    """Every attribution in ``text``, in order (see the module docstring for the forms).

    A form that is not one of those (``(memories)``, ``(web:)``, ``(profile: x)``) is not
    an attribution and stays text.
    """
    found: list[Attribution] = []
    for match in _ATTRIBUTION_RE.finditer(text):
        plain = match.group("plain")
        if plain is not None:
            source = Source(_kind(plain))
        else:
            source = Source(_kind(match.group("kind")), match.group("ref").strip())
        found.append(Attribution(source, match.start(), match.end()))
    return tuple(found)


def _kind(word: str) -> SourceKind:
    lowered = word.lower()
    for kind in SOURCE_KINDS:
        if kind == lowered:
            return kind
    raise AssertionError(f"the attribution pattern matched an unknown kind {word!r}")


# A list item's marker: "- ", "* ", "+ ", "• " (and the other bullets people type), "1. ",
# "1) ", "a. " or "a) ", after any indentation.
_BULLET_RE = re.compile(
    r"[ \t]*(?:[-*+\u2022\u2023\u2043\u2219\u25aa\u25e6]|\d{1,9}[.)]|[A-Za-z][.)])[ \t]+"
)


def strip_bullet(line: str) -> str:
    """``line`` without a leading list marker (``- ``, ``* ``, ``+ ``, ``• ``, ``1. ``,
    ``1) ``, ``a) ``); a line without one is returned as it is."""
    bullet = _BULLET_RE.match(line)
    return line[bullet.end() :] if bullet else line


@dataclass(frozen=True)
class SummaryLine:
    """One item of a summary: a non-blank line and the indented lines that continue it.

    ``text`` is the item trimmed, without its list marker when it has one (``- ``, ``* ``,
    ``+ ``, ``• ``, ``1. ``, ``1) ``, ``a) ``), its continuation lines joined to it by one
    space; ``attributions`` are those of ``text`` (their offsets index ``text``). A line
    indented deeper than the item above it, with no marker of its own, continues that
    item (a wrapped bullet); a blank line ends an item. Lines that are not list items
    (``Missing: …``, prose) are kept too, with ``bullet`` false, so nothing the summary
    says is lost. ``first`` and ``last`` number the lines of the summary the item spans
    (counted from 0 over ``summary.split("\n")``) and ``marker`` is the first line's
    indentation and marker as written.
    """

    text: str
    bullet: bool
    attributions: tuple[Attribution, ...]
    first: int = 0
    last: int = 0
    marker: str = ""

    @property
    def sources(self) -> tuple[Source, ...]:
        """The distinct sources the line cites, in the order it cites them."""
        return tuple(dict.fromkeys(a.source for a in self.attributions))

    @property
    def claim(self) -> str:
        """``text`` without its attributions, whitespace collapsed: what the line asserts."""
        parts: list[str] = []
        position = 0
        for attribution in self.attributions:
            parts.append(self.text[position : attribution.start])
            position = attribution.end
        parts.append(self.text[position:])
        return " ".join("".join(parts).split())


def _indent(raw: str) -> int:
    return len(raw.expandtabs(4)) - len(raw.expandtabs(4).lstrip(" "))


def split_summary(summary: str) -> tuple[SummaryLine, ...]:
    """The items of ``summary`` (lines end at ``"\n"``), as :class:`SummaryLine`."""
    lines: list[SummaryLine] = []
    # The item being read: its first line's number and indentation, marker, parts.
    first = indent = 0
    marker = ""
    parts: list[str] = []
    last = -1

    def close() -> None:
        if parts:
            text = " ".join(parts)
            bullet = bool(marker.strip())
            lines.append(SummaryLine(text, bullet, find_attributions(text), first, last, marker))
            parts.clear()

    for number, raw in enumerate(summary.split("\n")):
        stripped = raw.strip()
        if not stripped:
            close()
            continue
        bullet = _BULLET_RE.match(raw)
        if parts and bullet is None and _indent(raw) > indent:
            parts.append(stripped)
            last = number
            continue
        close()
        head = raw[: bullet.end()] if bullet else raw[: len(raw) - len(raw.lstrip())]
        text = (raw[bullet.end() :] if bullet else raw).strip()
        if text:
            first = last = number
            indent, marker = _indent(raw), head
            parts.append(text)
    close()
    return tuple(lines)


class RecommendedToolCall(BaseModel):
    """One orchestrator tool call the scout recommends, in the order it should run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    """The exact orchestrator tool name, with surrounding backticks or quotes removed."""
    args: str
    """The arguments as written: a JSON object or a tight free-text sketch."""
    args_json: dict[str, Any] | None
    """The arguments as a dict when ``args`` is a JSON object, else ``None``."""
    why: str
    """Why the call helps, usually one line."""


class RecommendedSkill(BaseModel):
    """One skill (workflow) the scout recommends, installed or from the registry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    skill: str
    """The installed ``dir_name`` slug or the registry entry id."""
    installed: bool | None
    """``True``/``False`` as written, ``None`` when missing or not a boolean."""
    why: str
    """Why the skill fits the request, usually one line."""


class ContextBundle(BaseModel):
    """A parsed ``[context_bundle]`` envelope; build one with ``parse_context_bundle``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    envelope: str
    """The extracted envelope, tags included, byte for byte as the scout wrote it."""
    has_enough_context: bool | None
    """Whether the orchestrator can act now; ``None`` when the line is missing or unclear."""
    proposed_goal: str | None
    """The one-line durable goal for the thread, or ``None`` (``none`` or empty)."""
    summary: str
    """The distilled, source-attributed context; inner line breaks are kept."""
    recommended_tool_calls: list[RecommendedToolCall]
    """Recommended orchestrator tool calls, in order."""
    recommended_skills: list[RecommendedSkill]
    """Recommended skills, in order."""

    @cached_property
    def summary_lines(self) -> tuple[SummaryLine, ...]:
        """Every non-blank summary line, bullets and other lines alike, in order."""
        return split_summary(self.summary)

    @property
    def bullets(self) -> tuple[SummaryLine, ...]:
        """The summary's bullets, each with the sources it cites (SPEC §13)."""
        return tuple(line for line in self.summary_lines if line.bullet)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape used by ``supercontext-lab scout --json`` (no envelope)."""
        return {
            "has_enough_context": self.has_enough_context,
            "proposed_goal": self.proposed_goal,
            "summary": self.summary,
            "recommended_tool_calls": [
                {"tool": call.tool, "args": call.args, "why": call.why}
                for call in self.recommended_tool_calls
            ],
            "recommended_skills": [
                {"skill": skill.skill, "installed": skill.installed, "why": skill.why}
                for skill in self.recommended_skills
            ],
        }

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """Plain text for terminals and nbval, escaped markdown for notebooks."""
        data = {"text/plain": render_plain(self), "text/markdown": render_markdown(self)}
        if include:
            data = {mime: text for mime, text in data.items() if mime in include}
        if exclude:
            data = {mime: text for mime, text in data.items() if mime not in exclude}
        return data


# ---------------------------------------------------------------------------- display


def _plain_value(value: str, indent: str) -> str:
    return value.replace("\n", "\n" + indent)


_INSTALLED_STATE = {True: "installed", False: "not installed", None: "installed: unknown"}


def render_plain(bundle: ContextBundle) -> str:
    """A stable plain-text account of ``bundle`` (no ids, addresses or timings)."""
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
        out.append(f"    {number}. {skill.skill} ({_INSTALLED_STATE[skill.installed]})")
        if skill.why:
            out.append("       why: " + _plain_value(skill.why, "         "))
    return "\n".join(out)


def render_markdown(bundle: ContextBundle) -> str:
    """``bundle`` as Markdown with every untrusted string escaped (no link, emphasis,
    heading or raw HTML can come from memory content or model output)."""
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
        line = f"{number}. **{md_inline(skill.skill)}** ({_INSTALLED_STATE[skill.installed]})"
        if skill.why:
            line += f" — {md_inline(skill.why)}"
        out.append(line)
    if not bundle.recommended_skills:
        out.append("*none*")
    return "\n".join(out)
