"""The size cap: an envelope bounded in characters and still well-formed (SPEC §2.4)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .extract import locate_envelope
from .grammar import (
    CLOSE_TAG,
    HAS_ENOUGH_CONTEXT,
    OPEN_TAG,
    PROPOSED_GOAL,
    RECOMMENDED_SKILLS,
    RECOMMENDED_TOOL_CALLS,
    SPACES,
    SUMMARY,
    TOP_KEYS,
    TRUNCATION_MARKER,
    parse_bool,
)
from .parse import EnvelopeWalk, blocks_text, envelope_body, walk_envelope
from .render import field_part, skill_part, tool_part

__all__ = ["MIN_FIT_CHARS", "fit_bundle"]


MIN_FIT_CHARS = 200
"""The smallest ``max_chars`` :func:`fit_bundle` accepts."""

MAX_FINDINGS = 100
"""The most :class:`Finding` records one reading keeps (the first ones, in envelope order);
how many more there were is :attr:`BundleReading.findings_left_out`."""

_ELLIPSIS = "…"
_TOP_KEY_SET = frozenset(TOP_KEYS)

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
    span = locate_envelope(envelope)
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


def _item_parts(walk: EnvelopeWalk, budget: int) -> tuple[list[str], list[str]]:
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
    walk = walk_envelope(
        envelope_body(extracted[len(OPEN_TAG) : len(extracted) - len(CLOSE_TAG)]), report=False
    )
    hec_line = walk.first_lines.get(HAS_ENOUGH_CONTEXT)
    goal_line = walk.first_lines.get(PROPOSED_GOAL)
    summary = blocks_text(walk.summary)
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
