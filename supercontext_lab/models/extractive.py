"""The ``extractive`` emission: the model picks, the harness writes (SPEC §13).

A small model asked to write the envelope, even under a grammar, writes plausible prose
that the run never read. In the extractive format it writes only numbers and names: the
request goes to the server as one short prompt holding the user's message and the facts
the run gathered, numbered, and a GBNF grammar lets the reply be nothing but::

    FACTS: 3, 1, 7
    TOOLS: calendar_lookup
    SKILLS: none

where every number is a gathered fact and every name is in the orchestrator's catalogue,
the installed skills or the registry hits the run saw (:class:`~.choices.BundleChoices`).
:func:`envelope_from_picks` then writes the envelope with the one envelope writer: each
chosen fact verbatim with its attribution, the goal from the request, ``installed`` from
the workspace. The model calls no tools in this format; it chooses from what was gathered
before it (the scout's prefetch), so one short call grounds the bundle.

A call without choices (not the scout's) is sent as plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from .._text import goal_line, one_line
from ..bundle_render import write_envelope
from .base import Message
from .choices import BundleChoices, ChoiceFact

__all__ = [
    "EXTRACTIVE_MAX_TOKENS",
    "envelope_from_picks",
    "extractive_grammar",
    "extractive_messages",
]

EXTRACTIVE_MAX_TOKENS = 96
"""``max_tokens`` of an extractive reply: the grammar's longest reply is well under it."""

PROMPT_FACTS = 16
"""Facts offered to the model, in the order the run gathered them (best hits first): the
prompt stays short, which is what makes one call of a CPU model take seconds."""

_MAX_FACT_PICKS = 6
# A small model left free to pick one fact picks one; asked for at least three it keeps the
# retriever's best hits in view (docs/performance.md has the measurement).
_MIN_FACT_PICKS = 3
_MAX_NAME_PICKS = 2
_PICK_LINE_CHARS = 2_000
_NUMBER_RE = re.compile(r"\d{1,4}")

_SYSTEM = (
    "You prepare context for an assistant before it answers. Read the user's request and "
    "the numbered facts. Choose the facts that help with the request, the tools worth "
    "calling and the skills worth loading. Reply in exactly three lines:\n"
    "FACTS: the numbers of the helpful facts, or none\n"
    "TOOLS: tool names from the list, or none\n"
    "SKILLS: skill ids from the list, or none"
)


def _offered(choices: BundleChoices) -> list[ChoiceFact]:
    return list(choices.facts[:PROMPT_FACTS])


def extractive_messages(choices: BundleChoices) -> list[Message]:
    """The short prompt of one extractive call."""
    facts = "\n".join(f"{fact.number}. {one_line(fact.text)}" for fact in _offered(choices))
    tools = ", ".join(choices.tools) or "none"
    skills = (
        "\n".join(
            f"- {skill.id}: {one_line(skill.description, 100)}"
            if skill.description
            else f"- {skill.id}"
            for skill in choices.skills
        )
        or "none"
    )
    user = (
        f"Request: {one_line(choices.request, 400)}\n\n"
        f"Facts:\n{facts or 'none'}\n\n"
        f"Tools: {tools}\n\nSkills:\n{skills}"
    )
    return [Message(role="system", content=_SYSTEM), Message(role="user", content=user)]


def _alternatives(options: Sequence[str]) -> str:
    # GBNF string literals take JSON's escapes; ensure_ascii=False keeps non-ASCII as UTF-8.
    return " | ".join(json.dumps(option, ensure_ascii=False) for option in options)


def _list_rule(
    name: str, item: str, options: Sequence[str], most: int, least: int = 0
) -> list[str]:
    if not options:
        return [f'{name} ::= "none"']
    least = min(least, len(options))
    more = f'( ", " {item} ){{{max(least - 1, 0)},{most - 1}}}'
    none = '"none" | ' if least == 0 else ""
    return [f"{name} ::= {none}{item} {more}", f"{item} ::= {_alternatives(options)}"]


def extractive_grammar(choices: BundleChoices) -> str:
    """The GBNF grammar of one extractive reply: fact numbers, tool names and skill ids
    taken from ``choices``, nothing else."""
    numbers = [str(fact.number) for fact in _offered(choices)]
    rules = [
        'root ::= "FACTS: " facts "\\nTOOLS: " tools "\\nSKILLS: " skills',
        *_list_rule("facts", "fact", numbers, _MAX_FACT_PICKS, _MIN_FACT_PICKS),
        *_list_rule("tools", "tool", choices.tools, _MAX_NAME_PICKS),
        *_list_rule("skills", "skill", [skill.id for skill in choices.skills], _MAX_NAME_PICKS),
    ]
    return "\n".join(rules) + "\n"


_KEYS = ("FACTS", "TOOLS", "SKILLS")


def _pick_lines(reply: str) -> dict[str, str]:
    """The text after ``FACTS:``, ``TOOLS:`` and ``SKILLS:``, each from the first line that
    starts with it, read in one pass and cut to a bounded length."""
    found: dict[str, str] = {}
    for line in reply.splitlines():
        head, sep, rest = line.partition(":")
        key = head.strip().upper()
        if sep and key in _KEYS and key not in found:
            found[key] = rest[:_PICK_LINE_CHARS]
    return found


def _names(line: str | None) -> list[str]:
    """The distinct comma-separated names of a pick line, in order."""
    if line is None:
        return []
    return list(dict.fromkeys(part.strip() for part in line.split(",") if part.strip()))


def envelope_from_picks(reply: str, choices: BundleChoices) -> str | None:
    """The envelope written from an extractive ``reply``, or ``None`` when the reply holds
    no ``FACTS:`` line. Numbers and names that ``choices`` does not hold are left out:
    the reply is untrusted even when a grammar shaped it."""
    lines = _pick_lines(reply)
    facts_line = lines.get("FACTS")
    if facts_line is None:
        return None
    offered = {fact.number: fact for fact in _offered(choices)}
    picked: list[ChoiceFact] = []
    for match in _NUMBER_RE.finditer(facts_line):
        fact = offered.get(int(match.group()))
        if fact is not None and fact not in picked:
            picked.append(fact)
        if len(picked) >= _MAX_FACT_PICKS:
            break
    tools = [name for name in _names(lines.get("TOOLS")) if name in choices.tools]
    skills = [
        skill for name in _names(lines.get("SKILLS")) if (skill := choices.skill(name)) is not None
    ]
    goal = goal_line(choices.request)
    why = f"chosen for: {goal}" if goal else "chosen for the request"
    return write_envelope(
        has_enough_context=bool(picked),
        proposed_goal=goal or None,
        summary="\n".join(f"- {fact.cited}" for fact in picked),
        tool_calls=[(tool, "{}", why) for tool in tools[:_MAX_NAME_PICKS]],
        skills=[
            (skill.id, skill.installed, skill.description or why)
            for skill in skills[:_MAX_NAME_PICKS]
        ],
    )
