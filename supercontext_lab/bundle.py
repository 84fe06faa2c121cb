"""The context-bundle contract: extract, parse and bound the scout's envelope (SPEC §2).

The scout answers with exactly one ``[context_bundle] … [/context_bundle]`` envelope.
This module is the one place that knows its grammar:

* :func:`extract_context_bundle` keeps the envelope and drops everything around it, or
  returns ``None`` when the tags are missing, unterminated, reversed, duplicated or the
  envelope is empty; :func:`bundle_rejection_reason` names the rule that failed.
* :func:`parse_context_bundle` turns the envelope into a :class:`ContextBundle` and never
  raises on text; :func:`parse_has_enough_context` and :func:`parse_proposed_goal` read
  the two line fields the harness acts on.
* :func:`fit_bundle` bounds an envelope to a number of characters (code points) and keeps
  it well-formed.

The grammar is line oriented. A *key line* is a line whose trimmed text starts with a key
immediately followed by ``:``; the five top-level keys are matched case-insensitively
(ASCII only) at any indentation, and every other line belongs to the field being read.
A line holding only :data:`TRUNCATION_MARKER` is structure written by :func:`fit_bundle`,
never content.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from ._bounded import json_loads

__all__ = [
    "CLOSE_TAG",
    "MIN_FIT_CHARS",
    "OPEN_TAG",
    "TRUNCATION_MARKER",
    "ContextBundle",
    "RecommendedSkill",
    "RecommendedToolCall",
    "bundle_rejection_reason",
    "extract_context_bundle",
    "fit_bundle",
    "parse_context_bundle",
    "parse_has_enough_context",
    "parse_proposed_goal",
]

OPEN_TAG = "[context_bundle]"
"""The literal, case-sensitive opening tag of the envelope."""

CLOSE_TAG = "[/context_bundle]"
"""The literal, case-sensitive closing tag of the envelope."""

TRUNCATION_MARKER = "[...truncated]"
"""The line :func:`fit_bundle` places inside an envelope it had to shorten."""

MIN_FIT_CHARS = 200
"""The smallest ``max_chars`` :func:`fit_bundle` accepts."""

_ELLIPSIS = "…"
_HEC_KEY = "has_enough_context"
_GOAL_KEY = "proposed_goal"
_SUMMARY_KEY = "summary"
_TOOLS_KEY = "recommended_tool_calls"
_SKILLS_KEY = "recommended_skills"

# re.ASCII keeps case-insensitive matching to ASCII letters: the Kelvin sign is not a "k".
_TOP_KEY_RE = re.compile(
    rf"({_HEC_KEY}|{_GOAL_KEY}|{_SUMMARY_KEY}|{_TOOLS_KEY}|{_SKILLS_KEY}):",
    re.IGNORECASE | re.ASCII,
)
# Models write list items as "- tool:", "* tool:", "1. tool:" or a bare "tool:".
_ITEM_RE = re.compile(r"(?:(?:[-*+•]|\d{1,3}[.)])\s*)?(tool|skill):", re.IGNORECASE | re.ASCII)
_SUBKEY_RE = re.compile(r"(?:[-*+•]\s*)?(args|why|installed):", re.IGNORECASE | re.ASCII)
_FENCE_RE = re.compile(r"(?:```|~~~)[\w+.-]*")
_NEAR_TAG_RE = re.compile(r"\[\s*(/?)\s*context[\s_-]*bundle\s*\]", re.IGNORECASE)
_QUOTES = "`'\""

# Which list section holds which item kind and which sub-keys.
_LIST_KINDS = {_TOOLS_KEY: "tool", _SKILLS_KEY: "skill"}
_SUBKEYS = {"tool": frozenset({"args", "why"}), "skill": frozenset({"installed", "why"})}


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
    """A parsed ``[context_bundle]`` envelope; build one with :func:`parse_context_bundle`."""

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
        from .bundle_render import render_markdown, render_plain

        data = {"text/plain": render_plain(self), "text/markdown": render_markdown(self)}
        if include:
            data = {mime: text for mime, text in data.items() if mime in include}
        if exclude:
            data = {mime: text for mime, text in data.items() if mime not in exclude}
        return data


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


def _near_miss(output: str, *, closing: bool, joiner: str) -> str:
    """Point at a tag written with the wrong case or spacing, the usual model slip."""
    for match in _NEAR_TAG_RE.finditer(output):
        if bool(match.group(1)) == closing:
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


# ------------------------------------------------------------------------- line fields


def _inside(text: str) -> str:
    """The text between the tags when ``text`` holds an envelope, else ``text`` itself."""
    span = _locate(text)
    if isinstance(span, str):
        return text
    return text[span[0] + len(OPEN_TAG) : span[1] - len(CLOSE_TAG)]


def _first_key_line(lines: list[str], key: str) -> str | None:
    """The first trimmed line that is a key line for ``key`` (case-insensitive)."""
    for raw in lines:
        line = raw.strip()
        match = _TOP_KEY_RE.match(line)
        if match and match.group(1).lower() == key:
            return line
    return None


def _unquote(value: str) -> str:
    """Trim whitespace and surrounding backticks or quotes, however they nest."""
    while True:
        trimmed = value.strip().strip(_QUOTES)
        if trimmed == value:
            return value
        value = trimmed


def _parse_bool(value: str) -> bool | None:
    word = _unquote(value).lower()
    if word == "true":
        return True
    if word == "false":
        return False
    return None


def parse_has_enough_context(envelope: str) -> bool | None:
    """Read ``has_enough_context`` from the first line that starts with that key.

    ``true``/``false`` in any case, with surrounding backticks or quotes ignored, give a
    bool; any other value, or no such line, gives ``None``.
    """
    line = _first_key_line(_inside(envelope).splitlines(), _HEC_KEY)
    if line is None:
        return None
    return _parse_bool(line[len(_HEC_KEY) + 1 :])


def parse_proposed_goal(envelope: str) -> str | None:
    """Read ``proposed_goal`` from the first line that starts with that key.

    Only the text on that same line counts, trimmed. Empty text, or ``none`` in any case
    with surrounding backticks/quotes or a trailing period, gives ``None``.
    """
    line = _first_key_line(_inside(envelope).splitlines(), _GOAL_KEY)
    if line is None:
        return None
    value = line[len(_GOAL_KEY) + 1 :].strip()
    if not value or _unquote(_unquote(value).rstrip(".")).lower() == "none":
        return None
    return value


# ----------------------------------------------------------------------------- parsing


def _dedent(lines: list[str]) -> str:
    """``textwrap.dedent`` for a list of lines, without its regular expressions (the
    parser runs on every scout output, so this is on the hot path)."""
    margins = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    # Character by character on purpose: margins are whitespace, not paths.
    cut = len(os.path.commonprefix(margins)) if margins else 0  # noqa: RUF071
    return "\n".join(line[cut:] if line.strip() else "" for line in lines)


@dataclass
class _Block:
    """A field's text: what follows the key on its line, then its continuation lines."""

    first: str
    following: list[str] = field(default_factory=list)

    def text(self) -> str:
        if not self.following:
            return self.first.strip()
        # Dedent the continuation lines together so pretty JSON keeps its shape.
        tail = _dedent(self.following)
        return f"{self.first}\n{tail}".strip()


def _blocks_text(blocks: list[_Block]) -> str:
    return "\n".join(text for text in (block.text() for block in blocks) if text)


@dataclass
class _Item:
    """A list item being read: its name and the blocks of each sub-key."""

    name: str
    fields: dict[str, list[_Block]] = field(default_factory=dict)
    current: _Block | None = None

    def value(self, key: str) -> str:
        return _blocks_text(self.fields.get(key, []))


@dataclass
class _Parsed:
    summary: list[_Block] = field(default_factory=list)
    tools: list[_Item] = field(default_factory=list)
    skills: list[_Item] = field(default_factory=list)


def _body_lines(body: str) -> list[str]:
    lines = body.splitlines()
    # A code fence wrapped around the fields inside the envelope is formatting, not a
    # part of the last field (lines before the first key are ignored anyway).
    while lines and (not lines[-1].strip() or _FENCE_RE.fullmatch(lines[-1].strip())):
        lines.pop()
    return lines


def _parse_lines(lines: list[str]) -> _Parsed:
    parsed = _Parsed()
    section: str | None = None
    for raw in lines:
        line = raw.strip()
        match = _TOP_KEY_RE.match(line)
        if match:
            section = match.group(1).lower()
            rest = line[match.end() :].strip()
            if section == _SUMMARY_KEY:
                parsed.summary.append(_Block(rest))
            elif section in _LIST_KINDS and rest not in ("", "[]"):
                _list_line(parsed, section, rest, rest)
        elif line == TRUNCATION_MARKER:
            continue
        elif section == _SUMMARY_KEY:
            parsed.summary[-1].following.append(raw)
        elif section in _LIST_KINDS:
            _list_line(parsed, section, raw, line)
        # Otherwise: prose before the first key, or lines after a same-line field.
    return parsed


def _list_line(parsed: _Parsed, section: str, raw: str, line: str) -> None:
    kind = _LIST_KINDS[section]
    items = parsed.tools if kind == "tool" else parsed.skills
    item_match = _ITEM_RE.match(line)
    if item_match and item_match.group(1).lower() == kind:
        items.append(_Item(_unquote(line[item_match.end() :])))
        return
    if not items:
        return  # prose between the section key and its first item
    item = items[-1]
    sub_match = _SUBKEY_RE.match(line)
    if sub_match and sub_match.group(1).lower() in _SUBKEYS[kind]:
        item.current = _Block(line[sub_match.end() :].strip())
        item.fields.setdefault(sub_match.group(1).lower(), []).append(item.current)
    elif item.current is not None:
        item.current.following.append(raw)
    # Lines between an item's name and its first sub-key are ignored: names are one token.


def _json_object(args: str) -> dict[str, Any] | None:
    """``args`` as a dict when it is a JSON object (optionally in backticks or a fence)."""
    candidate = args.strip()
    if candidate.startswith("```"):
        candidate = candidate.partition("\n")[2].rstrip().removesuffix("```")
    elif len(candidate) > 1 and candidate[0] == candidate[-1] == "`":
        candidate = candidate[1:-1]
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
        skill=item.name, installed=_parse_bool(item.value("installed")), why=item.value("why")
    )


def parse_context_bundle(output: str) -> ContextBundle | None:
    """Extract (:func:`extract_context_bundle`) and parse the envelope in ``output``.

    ``None`` exactly when extraction fails; never raises on any string. The summary runs
    from its key line to the next top-level key; ``[]`` on a list key means an empty list.
    """
    envelope = extract_context_bundle(output)
    if envelope is None:
        return None
    lines = _body_lines(_inside(envelope))
    parsed = _parse_lines(lines)
    return ContextBundle(
        envelope=envelope,
        has_enough_context=parse_has_enough_context(envelope),
        proposed_goal=parse_proposed_goal(envelope),
        summary=_blocks_text(parsed.summary),
        recommended_tool_calls=[_to_tool(item) for item in parsed.tools],
        recommended_skills=[_to_skill(item) for item in parsed.skills],
    )


# ------------------------------------------------------------------------------ fitting


def _cut(text: str, limit: int) -> str:
    """Shorten ``text`` to at most ``limit`` (>= 1) characters, ending with ``…``.

    Cuts at the last line or word boundary in the second half of the room, else mid-word
    (scripts such as CJK have no spaces to cut at).
    """
    if len(text) <= limit:
        return text
    room = limit - 1
    cut = room
    for index in range(room, room // 2, -1):
        if text[index].isspace():
            cut = index
            break
    return text[:cut].rstrip() + _ELLIPSIS


def _is_structural(line: str) -> bool:
    """Whether a line would be read as a key, an item, a sub-key or the marker."""
    text = line.strip()
    return bool(
        _TOP_KEY_RE.match(text)
        or _ITEM_RE.match(text)
        or _SUBKEY_RE.match(text)
        or text == TRUNCATION_MARKER
    )


def _field_part(key: str, value: str, prefix: str = "", continuation: str = "") -> str:
    """Render ``key: value``; on one line it takes ``len(prefix + key) + 2 + len(value)``.

    Re-parsing trims the key line's text and dedents the continuation lines together. When
    that would alter ``value``, the whole value starts on the line below its key and is
    dedented as one block, which restores it exactly; its first line then stands alone, so
    that is done only when the line cannot be mistaken for a key.
    """
    first, _, rest = value.partition("\n")
    unstable = first != first.strip() or (bool(rest) and _dedent(rest.split("\n")) != rest)
    if unstable and not _is_structural(first):
        first, rest = "", value
    head = f"{prefix}{key}: {first}" if first else f"{prefix}{key}:"
    if not rest:
        return head
    lines: list[str] = []
    for line in rest.split("\n"):
        # A continuation line that reads as a key or an item (two blocks of one field
        # joined, say) would start a new field when re-parsed: keep it on the line above.
        if _is_structural(line) and (lines or first):
            if lines:
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                head = f"{head} {line.strip()}"
            continue
        lines.append(line)
    if not lines:
        return head
    body = "\n".join(continuation + line if line else "" for line in lines)
    return f"{head}\n{body}"


def _summary_part(text: str) -> str:
    return _field_part(_SUMMARY_KEY, text)


def _tool_part(call: RecommendedToolCall) -> str:
    parts = [f"  - tool: {call.tool}".rstrip()]
    if call.args:
        parts.append(_field_part("args", call.args, "    ", "      "))
    if call.why:
        parts.append(_field_part("why", call.why, "    ", "      "))
    return "\n".join(parts)


def _skill_part(skill: RecommendedSkill) -> str:
    parts = [f"  - skill: {skill.skill}".rstrip()]
    if skill.installed is not None:
        parts.append(f"    installed: {'true' if skill.installed else 'false'}")
    if skill.why:
        parts.append(_field_part("why", skill.why, "    ", "      "))
    return "\n".join(parts)


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
    return _shorten(extracted, max_chars)


def _shorten(extracted: str, max_chars: int) -> str:
    lines = _body_lines(_inside(extracted))
    hec_line = _first_key_line(lines, _HEC_KEY)
    goal_line = _first_key_line(lines, _GOAL_KEY)
    parsed = _parse_lines(lines)
    summary = _blocks_text(parsed.summary)
    tools = [_tool_part(_to_tool(item)) for item in parsed.tools]
    skills = [_skill_part(_to_skill(item)) for item in parsed.skills]
    tools_header, skills_header = f"{_TOOLS_KEY}:", f"{_SKILLS_KEY}:"

    def fixed_len() -> int:
        """Tags, marker and the two line fields, each with the newline after it."""
        heads = [line for line in (hec_line, goal_line) if line is not None]
        return sum(len(part) + 1 for part in (OPEN_TAG, *heads, TRUNCATION_MARKER, CLOSE_TAG))

    def summary_len(text: str) -> int:
        # "summary: " or "summary:\n" before the text, a newline after it.
        return len(_SUMMARY_KEY) + 2 + len(text) + 1 if summary else 0

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
        goal_line = _shorten_line(goal_line, _GOAL_KEY, len(goal_line) - over)
        over = fixed_len() + summary_len(summary_text) - (max_chars + 1)
    if over > 0 and hec_line is not None:
        hec_line = _shorten_line(hec_line, _HEC_KEY, len(hec_line) - over)

    parts = [OPEN_TAG, *(line for line in (hec_line, goal_line) if line is not None)]
    if summary:
        parts.append(_summary_part(summary_text))
    if n_tools:
        parts += [tools_header, *tools[:n_tools]]
    if n_skills:
        parts += [skills_header, *skills[:n_skills]]
    parts += [TRUNCATION_MARKER, CLOSE_TAG]
    return "\n".join(parts)
