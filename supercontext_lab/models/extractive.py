"""The ``extractive`` emission: the model picks, the harness writes (SPEC §13, §14).

A small model asked to write the envelope, even under a grammar, writes plausible prose
that the run never read; asked to pick five or six of sixteen facts and a tool and a
skill, SmolLM2-135M did worse than taking the first ones in the order the run ranked them
(docs/performance.md). In the extractive format it is therefore asked the one question it
answers well enough to add something: **which gathered fact answers the request best**.
The request goes to the server as one short prompt holding the user's message and the
facts the run gathered, best first and numbered, and a GBNF grammar lets the reply be
nothing but::

    FACTS: 7

where the number is a gathered fact. :func:`envelope_from_picks` then writes the
envelope with the one envelope writer: the model's pick leads, and the ranking's first
:data:`FACT_PICKS` facts complete the summary (a pick from further down adds a seventh,
so the bundle always holds what the ranking would have sent); the tool and the skill are the first of the
short lists ranked by the relevance the offline scout uses (a ``delegate_<toolkit>`` tool
for an integration the request names, ``run_workflow`` when an installed skill fits, a
name the request points at beyond one shared word); ``installed`` comes from the
workspace and the goal from the request (none for a one-shot question, as the offline
scout decides). A reply may also name more facts and a ``TOOLS:`` and ``SKILLS:`` line
(the no-model baselines do, :mod:`.baseline`): numbers and names that were not offered
are left out, as the reply is untrusted even when a grammar shaped it.

The model calls no tools in this format; it chooses from what was gathered before it (the
scout's prefetch), so one short call grounds the bundle. A call without choices (not the
scout's) is sent as plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from .._text import goal_line, one_line
from ..bundle.render import write_envelope
from ..reading.relevance import coverage, name_fit, named_in_notes, request_terms
from ..reading.words import keywords, stems
from .base import Message
from .bundle_format import offerable
from .choices import BundleChoices, ChoiceFact, ChoiceSkill
from .request_kind import integrations_named, request_kind

__all__ = [
    "EXTRACTIVE_MAX_TOKENS",
    "FACT_PICKS",
    "OFFERED_NAMES",
    "envelope_from_picks",
    "extractive_goal",
    "extractive_grammar",
    "extractive_messages",
    "offered_facts",
    "offered_skills",
    "offered_tools",
]

EXTRACTIVE_MAX_TOKENS = 96
"""``max_tokens`` of an extractive reply: the grammar's longest reply is well under it."""

PROMPT_FACTS = 10
"""Facts offered to the model, best first: the prompt stays short, which is what makes
one call of a CPU model take seconds."""
_PROMPT_FACT_CHARS = 220
# A fact is shown to the model at most this long (the envelope quotes it whole).

FACT_PICKS = 6
"""Facts the no-model baselines take, and the ranking's facts that complete a model's
pick (see the module docstring)."""
_MAX_NAME_PICKS = 1

OFFERED_NAMES = 4
"""Tools, and skills, offered to the model at most: the best-ranked few, so a small
model's pick is among the fitting ones."""
_PICK_LINE_CHARS = 2_000
_NUMBER_RE = re.compile(r"\d{1,4}")

_SYSTEM = (
    "You prepare context for an assistant before it answers. Read the user's request and "
    "the numbered facts. Reply with the number of the one fact that best answers the "
    "request, in one line:\nFACTS: the number"
)


def offered_facts(choices: BundleChoices) -> list[ChoiceFact]:
    """The facts offered to the model: the first :data:`PROMPT_FACTS`, best first."""
    return list(choices.facts[:PROMPT_FACTS])


def _skill_fit(query: set[str], skill: ChoiceSkill, notes: list[str]) -> int:
    """How well a skill fits the request (:func:`~supercontext_lab.reading.relevance.name_fit`
    over its id and description, as the offline scout rules; ``notes`` are the gathered
    facts the user's own notes gave, which may name the skill)."""
    named = named_in_notes(skill.id, query, notes)
    return name_fit(query, skill.id, skill.description, in_notes=named)


def offered_skills(choices: BundleChoices) -> list[ChoiceSkill]:
    """The skills offered to the model: those the request fits, best first (installed
    before registry hits at equal fit), at most :data:`OFFERED_NAMES`."""
    query = stems(keywords(choices.request))
    # Facts quoted from a past conversation never count as the user's notes naming a
    # skill: what someone said to do then is no sign for this request.
    notes = [fact.text for fact in choices.facts if not fact.from_conversation]
    ranked = []
    for index, skill in enumerate(choices.skills):
        fit = _skill_fit(query, skill, notes)
        if fit and offerable([skill.id]) and choices.skill(skill.id) is skill:
            ranked.append((-fit, not skill.installed, index, skill))
    return [skill for *_, skill in sorted(ranked, key=lambda row: row[:3])][:OFFERED_NAMES]


def offered_tools(choices: BundleChoices) -> list[str]:
    """The tools offered to the model, best first, at most :data:`OFFERED_NAMES`: the
    delegate of an integration the request names, ``run_workflow`` when an installed
    skill fits (and only then), then tools the request points at beyond one shared word
    (:func:`~supercontext_lab.reading.relevance.name_fit` over the tool's name)."""
    query = stems(keywords(choices.request))
    delegates = {f"delegate_{toolkit}" for toolkit in integrations_named(choices.request)}
    workflow = _workflow(choices)
    ranked = []
    for index, tool in enumerate(offerable(choices.tools)):
        if tool in delegates:
            score = 5
        elif tool == "run_workflow":
            score = 4 if workflow is not None else 0
        else:
            score = name_fit(query, tool.replace("_", " "))
        if score:
            ranked.append((-score, index, tool))
    return [tool for *_, tool in sorted(ranked)][:OFFERED_NAMES]


def _workflow(choices: BundleChoices) -> str | None:
    """The installed skill ``run_workflow`` would run: the best fitting one, if any."""
    return next((skill.id for skill in offered_skills(choices) if skill.installed), None)


def _tool_args(tool: str, choices: BundleChoices) -> str:
    """The arguments written for a picked tool: ``run_workflow`` names its workflow, a
    delegate gets the request as its task; other tools get none from a pick."""
    if tool == "run_workflow":
        return json.dumps({"workflow": _workflow(choices)}, ensure_ascii=False)
    if tool.startswith("delegate_"):
        return json.dumps(
            {"task": one_line(choices.request, 200, at_word=True)}, ensure_ascii=False
        )
    return "{}"


def extractive_goal(choices: BundleChoices) -> str | None:
    """The thread goal of an extractive bundle: none for a greeting or a one-shot
    question (as the offline scout decides), else the request as a goal line."""
    if request_kind(choices.request) != "work":
        return None
    return goal_line(choices.request) or None


def extractive_messages(choices: BundleChoices) -> list[Message]:
    """The short prompt of one extractive call."""
    facts = "\n".join(
        f"{fact.number}. {one_line(fact.text, _PROMPT_FACT_CHARS, at_word=True)}"
        for fact in offered_facts(choices)
    )
    user = f"Request: {one_line(choices.request, 400)}\n\nFacts:\n{facts or 'none'}"
    return [Message(role="system", content=_SYSTEM), Message(role="user", content=user)]


def _ordered_picks(name: str, options: Sequence[str], most: int, least: int = 0) -> list[str]:
    """The rules of a pick line: between ``least`` and ``most`` of ``options``, in the
    order they are listed and each at most once, or ``none`` when ``least`` is 0.

    Rule ``{name}-{i}-{k}`` writes option ``i`` as the ``k``-th pick and goes on with a
    later option: increasing picks are what makes a repeat impossible, in
    ``len(options) * most`` rules rather than one per subset.
    """
    if not options:
        return [f'{name} ::= "none"']
    count = len(options)
    least = min(least, count)
    rules = []
    for k in range(1, most + 1):
        for i in range(count):
            # Enough options must be left after i to reach the least number of picks.
            if count - i < least - k + 1 or i < k - 1:
                continue
            later = [
                f"{name}-{j}-{k + 1}"
                for j in range(i + 1, count)
                if count - j >= least - k and k < most
            ]
            body = json.dumps(options[i], ensure_ascii=False)
            if later:
                more = f'", " ( {" | ".join(later)} )'
                body += f" {more}" if k < least else f" ( {more} )?"
            rules.append(f"{name}-{i}-{k} ::= {body}")
    first = " | ".join(f"{name}-{i}-1" for i in range(count) if count - i >= least)
    none = "" if least else '"none" | '
    rules.insert(0, f"{name} ::= {none}{first}")
    return rules


def extractive_grammar(choices: BundleChoices) -> str:
    """The GBNF grammar of one extractive reply: fact numbers, tool names and skill ids
    taken from ``choices`` (see the module docstring), in offered order, none twice."""
    numbers = [str(fact.number) for fact in offered_facts(choices)]
    rules = ['root ::= "FACTS: " facts', *_ordered_picks("facts", numbers, 1, 1)]
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


def _chosen(line: str | None, offers: list[str]) -> list[str]:
    """The names a pick line chooses among ``offers``; without the line, the first offer
    (the best-ranked)."""
    if line is None:
        return offers[:1]
    return [name for name in _names(line) if name in offers]


def envelope_from_picks(reply: str, choices: BundleChoices) -> str | None:
    """The envelope written from an extractive ``reply``, or ``None`` when the reply holds
    no ``FACTS:`` line. Numbers and names that ``choices`` does not hold are left out:
    the reply is untrusted even when a grammar shaped it."""
    lines = _pick_lines(reply)
    facts_line = lines.get("FACTS")
    if facts_line is None:
        return None
    offers = offered_facts(choices)
    offered = {fact.number: fact for fact in offers}
    picked: list[ChoiceFact] = []
    for match in _NUMBER_RE.finditer(facts_line):
        fact = offered.get(int(match.group()))
        if fact is not None and fact not in picked:
            picked.append(fact)
        if len(picked) >= FACT_PICKS:
            break
    if 0 < len(picked) < FACT_PICKS:
        # The picks lead, and the ranking's first FACT_PICKS complete the summary: a pick
        # from further down adds to them and never pushes one out.
        picked += [fact for fact in offers[:FACT_PICKS] if fact not in picked]
    tool_offers = offered_tools(choices)
    fitting = {skill.id: skill for skill in offered_skills(choices)}
    tools = _chosen(lines.get("TOOLS"), tool_offers)
    skills = [fitting[name] for name in _chosen(lines.get("SKILLS"), list(fitting))]
    goal = extractive_goal(choices)
    why = f"chosen for: {goal}" if goal else "chosen for the request"
    covered = coverage(request_terms(choices.request), [fact.cited for fact in picked])
    summary = [f"- {fact.cited}" for fact in picked]
    if picked and not covered.enough:
        summary.append(f"Missing: {covered.missing_line()}.")
    return write_envelope(
        has_enough_context=bool(picked) and covered.enough,
        proposed_goal=goal,
        summary="\n".join(summary),
        tool_calls=[(tool, _tool_args(tool, choices), why) for tool in tools[:_MAX_NAME_PICKS]],
        skills=[
            (skill.id, skill.installed, skill.description or why)
            for skill in skills[:_MAX_NAME_PICKS]
        ],
    )
