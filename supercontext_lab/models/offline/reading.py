"""What the offline scout reads from a conversation: the request and the prompt's sections.

The offline scout sees only what a real model would see (the system prompt, the task
message and the tool results), so this module turns those messages into a
:class:`RequestContext`, and holds the word tables the scout decides its plan with.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._bounded import json_loads
from ..._text import one_line
from ...reading.relevance import RequestTerms, request_terms
from ...reading.transcripts import echoes
from ...reading.words import keywords, stems, words
from ..base import Message
from ..request_kind import integrations_named, request_kind

__all__ = [
    "FACT_CHARS",
    "SUMMARY_BUDGET",
    "RequestContext",
    "asks_preferences",
    "cited_hit",
    "facet_evidence",
    "fitted",
    "meaning_request",
    "mentioned_integrations",
    "needs_web",
    "read_request",
    "request_kind",
    "wanted_categories",
    "wanted_facets",
]

# A fact quoted from a tool result or a user file is cut to this many characters.
FACT_CHARS = 260

# Which flavour facet a request is about, by the words it uses.
_FACET_TRIGGERS: dict[str, frozenset[str]] = {
    "communication": frozenset(
        "reply email emails draft message write writing tone "
        "communicate communication letter respond".split()
    ),
    "coding_style": frozenset(
        "code coding programming codebase figure figures plot plots style format formatted "
        "formatting script scripts function functions refactor debug".split()
    ),
    "stack": frozenset("stack library libraries package packages framework python tooling".split()),
    "workflow": frozenset(
        "workflow process plan planning schedule routine organise organize".split()
    ),
    "environment": frozenset("environment setup machine laptop cluster install hpc".split()),
    "anti_preferences": frozenset("avoid dislike hate annoy annoys never".split()),
}
_PREFERENCE_WORDS = frozenset("like prefer preference preferences preferred usually want".split())

_WEB_WORDS = frozenset(
    "latest new newest recent recently news today current currently "
    "published preprint preprints papers".split()
)

_USER_FILE_ENDS = ("\n### MEMORY.md\n", "\n## Memory context\n", "\n## Your tools")
SUMMARY_BUDGET = 2600  # characters, comfortably under the contract's ~700 tokens


def _between(text: str, start: str, ends: Sequence[str]) -> str:
    """The text after the first ``start`` line up to the nearest of ``ends`` (or the end).

    User files are embedded verbatim and may hold their own ``##`` headings, so sections
    are cut at the builder's known section starts, not at any heading.
    """
    begin = text.find(start)
    if begin < 0:
        return ""
    begin += len(start)
    stops = [i for end in ends if (i := text.find(end, begin)) >= 0]
    return text[begin : min(stops, default=len(text))].strip()


def _integrations_section(system: str) -> str:
    # The builder puts the section after the scout's own tool catalogue; looking there
    # keeps a heading quoted inside a user file from being mistaken for it.
    tools_at = max(system.find("\n## Your tools"), 0)
    return _between(system[tools_at:], "\n## Connected Integrations\n", ["\n## "])


def _block(task: str, name: str) -> str:
    match = re.search(
        rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[[A-Z][^\]\n]*\]\n|\Z)", task, re.M | re.S
    )
    return match.group(1).strip() if match else ""


@dataclass
class RequestContext:
    """What the scout model understood from its prompt and the results it got back."""

    request: str
    focus: str
    profile: str
    memory_md: str
    connected: dict[str, str]
    orchestrator_tools: list[str]
    files: list[str]
    results: dict[str, list[Any]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def query_words(self) -> list[str]:
        return keywords(f"{self.request} {self.focus}")

    @property
    def query_stems(self) -> set[str]:
        return stems(self.query_words)

    @property
    def terms(self) -> RequestTerms:
        """What the request asks about (:mod:`supercontext_lab.reading.relevance`)."""
        return request_terms(self.request, self.focus)

    def concepts_in(self, text: str) -> set[frozenset[str]]:
        """The request's concepts that ``text`` shares: a hyphenated compound
        ("sensitivity-analysis") is one concept however many of its words match."""
        found = stems(keywords(text))
        chunks = f"{self.request} {self.focus}".split()
        concepts = {frozenset(stems(keywords(chunk))) for chunk in chunks}
        return {concept for concept in concepts if concept and concept & found}


def read_request(messages: Sequence[Message]) -> RequestContext:
    system = next((m.content or "" for m in messages if m.role == "system"), "")
    task = next((m.content or "" for m in messages if m.role == "user"), "")
    connected: dict[str, str] = {}
    for line in _integrations_section(system).splitlines():
        if line.startswith("- "):
            toolkit, _, description = line[2:].partition(":")
            connected[toolkit.strip()] = description.strip()
    tools = []
    for line in _block(task, "Orchestrator tools").splitlines():
        if line.startswith("- "):
            tools.append(line[2:].split(":", 1)[0].strip())
    files_line = re.search(r"^Files under files/: (.*)$", system, re.M)
    files = [f.strip() for f in files_line.group(1).split(",")] if files_line else []
    context = RequestContext(
        request=_block(task, "Request"),
        focus=_block(task, "Focus"),
        profile=_between(system, "\n### PROFILE.md\n", _USER_FILE_ENDS),
        memory_md=_between(system, "\n### MEMORY.md\n", _USER_FILE_ENDS[1:]),
        connected=connected,
        orchestrator_tools=tools,
        files=[f.rstrip(" …") for f in files if f],
    )
    calls: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            calls[call.id] = call.name
        if message.role == "tool" and message.tool_call_id is not None:
            name = message.name or calls.get(message.tool_call_id, "")
            content = message.content or ""
            if content.startswith("error:"):
                context.errors[name] = content.removeprefix("error:").strip()
                continue
            try:
                payload = json_loads(content)
            except ValueError:
                continue
            context.results.setdefault(name, []).append(payload)
    return context


def asks_preferences(context: RequestContext) -> bool:
    """Whether the request names the user's preferences ("like", "prefer", "usually", ...;
    read from all its words, as "like" and "want" are stop words to a search)."""
    return bool(set(words(f"{context.request} {context.focus}")) & _PREFERENCE_WORDS)


def facet_evidence(context: RequestContext) -> dict[str, int]:
    """How strongly the request points at each flavour facet: the words it shares with
    the facet's triggers, one more when it names preferences; facets it does not point at
    are left out.

    A question is about how the user likes things done only when it says so: "What is
    the GR code of the renewal?" asks for a fact, and its "code" is a reference number,
    not programming. Work ("Refactor the code", "Draft a reply") is done the user's way,
    so its words count as they stand.
    """
    if request_kind(context.request) == "question" and not asks_preferences(context):
        return {}
    query = set(context.query_words)
    bonus = 1 if asks_preferences(context) else 0
    return {
        facet: len(query & triggers) + bonus
        for facet, triggers in _FACET_TRIGGERS.items()
        if query & triggers
    }


def wanted_facets(context: RequestContext) -> list[str]:
    evidence = facet_evidence(context)
    order = list(_FACET_TRIGGERS)
    facets = sorted(evidence, key=lambda facet: (-evidence[facet], order.index(facet)))[:2]
    if asks_preferences(context) and facets and "anti_preferences" not in facets:
        facets.append("anti_preferences")
    return facets


def mentioned_integrations(context: RequestContext) -> list[str]:
    return integrations_named(f"{context.request} {context.focus}")


_CATEGORY_CUES: dict[str, frozenset[str]] = {
    "decision": frozenset("decide decided decision decisions agree agreed choose chose".split()),
    "deadline": frozenset("deadline deadlines due when submit submission".split()),
    "person": frozenset("who whom".split()),
    "meeting": frozenset("meeting meetings met".split()),
    "conversation": frozenset("discuss discussed talked said mentioned conversation".split()),
    "preference": frozenset("like prefer preference preferences".split()),
}


def wanted_categories(context: RequestContext) -> set[str]:
    said = set(words(f"{context.request} {context.focus}"))
    return {category for category, cues in _CATEGORY_CUES.items() if said & cues}


def needs_web(context: RequestContext) -> bool:
    return bool(set(context.query_words) & _WEB_WORDS)


def cited_hit(hit: object, context: RequestContext) -> tuple[str, tuple[str, str], str, str] | None:
    """A memory hit as ``(content, (cite, turns), name, category)``: a turn of a past
    conversation is cited by its conversation, with its turns to say who spoke, and a
    question about what was said prefers it; ``None`` for no hit, or for a turn that only
    asks the request again (no fact, and no scale)."""
    if not isinstance(hit, dict):
        return None
    content = str(hit.get("content", ""))
    transcript = str(hit.get("transcript") or "")
    if transcript:
        if echoes(content, context.terms):
            return None
        return content, (f"transcript: {transcript}", content), "", "conversation"
    key = str(hit.get("key", ""))
    return (
        content,
        (f"memory: {hit.get('namespace', '')}/{key}", ""),
        key,
        str(hit.get("category", "")),
    )


def meaning_request(context: RequestContext) -> str:
    """The request as the scout asks memory to read it by meaning: in its own words,
    with the focus the harness gave (memory reads as much of it as a query by meaning
    holds)."""
    return one_line(f"{context.request} {context.focus}")


def fitted(lines: list[str]) -> list[str]:
    """The facts that fit :data:`SUMMARY_BUDGET`, in order. ``lines`` come best first; a
    fact that does not fit is left out whole (a shorter, less relevant one after it may
    still fit), never cut."""
    kept = []
    used = 0
    for line in lines:
        if used + len(line) + 3 > SUMMARY_BUDGET:
            continue
        kept.append(line)
        used += len(line) + 3
    return kept
