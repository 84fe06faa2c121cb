"""The embedded offline scout: a deterministic model that needs no network or key.

:class:`OfflineScoutModel` plays the scout through the *same* tool-calling loop as a real
model. It reads only what a real model would read — the system prompt, the task message,
the tools it is offered and the tool results it gets back — and never opens the workspace
itself, so removing a tool from agent.toml visibly changes its bundle. Its plan:

1. first call: all its reads at once, as the prompt asks: ``memory_recall`` on the
   request's keywords, ``memory_flavour`` when the request is about how the user likes to
   work, ``list_workflows`` and ``skill_registry_search`` to find fitting skills, and
   ``web_search_tool`` when the request asks for fresh outside facts;
2. when its best facts name references the request does not ("RG-2304 … see to-do"), a
   second call recalling them (:mod:`~supercontext_lab.reading.references`);
3. then the envelope, built only from those results and the prompt's sections.

Facts from memory hits name their note, ``(memory: <namespace>/<key>)``, and facts from
the turns of past conversations their conversation, ``(transcript: <id>)``, saying who
spoke; MEMORY.md lines are cited ``(memory)``, PROFILE.md and flavour
facets ``(profile)``, the Connected Integrations section ``(integrations)``. Notes,
MEMORY.md and PROFILE.md are ranked together, as every route ranks them
(:func:`~supercontext_lab.reading.passages.ranked_passages`). Greetings,
thanks and one-shot questions get ``proposed_goal: none``. Everything is deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from ..._text import goal_line, one_line
from ...bundle.render import attributions_as_text, write_envelope
from ...reading.facts import distinct_facts, note_sentences
from ...reading.meaning import with_meaning
from ...reading.passages import (
    SHORT_NOTE_CHARS,
    SHORT_TURN_CHARS,
    Quotable,
    passages,
    ranked_passages,
)
from ...reading.references import references, referred
from ...reading.relevance import coverage, name_fit, named_in_notes
from ...reading.transcripts import no_fact, with_speaker
from ..base import Message, ModelReply, ToolCall, estimate_usage
from ..request import ChatRequest
from .common import OfflineModel
from .reading import (
    RequestContext,
    asks_preferences,
    cited_hit,
    facet_evidence,
    fitted,
    meaning_request,
    mentioned_integrations,
    needs_web,
    read_request,
    request_kind,
    wanted_categories,
    wanted_facets,
)

__all__ = ["OfflineScoutModel"]

# Facts from the one ranking (notes, MEMORY.md, PROFILE.md) at most, and of them, facts
# not cited (profile) in a summary at most.
_HIT_FACTS = 7
_MEMORY_FACTS = 6
# The references of the best facts are followed (the best three), a few hits each.
_FOLLOWED_FROM = 3
_FOLLOWED_HITS = 3


def _ordered_calls(specs: list[tuple[str, dict[str, Any]]]) -> Message:
    calls = tuple(
        ToolCall(id=f"call_{index}", name=name, arguments=json.dumps(args, ensure_ascii=False))
        for index, (name, args) in enumerate(specs, start=1)
    )
    return Message(role="assistant", content=None, tool_calls=calls)


class OfflineScoutModel(OfflineModel):
    """A deterministic scout that gathers through tool calls and writes the envelope."""

    def __init__(self, *, name: str = "offline:scout") -> None:
        super().__init__(name=name)

    def answer(self, request: ChatRequest, on_text: Callable[[str], None] | None) -> ModelReply:
        """Ask for every read of the plan at once, then write the envelope from the results."""
        messages = request.messages
        context = read_request(messages)
        offered = set(request.callable_tools)
        rounds = sum(1 for m in messages if m.role == "assistant" and m.tool_calls)
        plan = self._plan(context, offered, rounds)
        if plan:
            message = _ordered_calls(plan)
            return ModelReply(message, estimate_usage(messages, message), "tool_calls", self.name)
        text = self._envelope(context)
        if on_text is not None:
            on_text(text)
        reply = Message(role="assistant", content=text)
        return ModelReply(reply, estimate_usage(messages, reply), "stop", self.name)

    # -- gathering -----------------------------------------------------------------------

    def _plan(
        self, context: RequestContext, offered: set[str], rounds: int
    ) -> list[tuple[str, dict[str, Any]]]:
        if request_kind(context.request) == "greeting" or not context.query_words:
            return []
        if rounds == 1 and "memory_recall" in offered:
            # Every read of the plan is independent of the others, so they all went out in
            # the first reply (as the prompt asks). The one read that depends on what they
            # found: the references the best facts name ("RG-2304 … see to-do"), followed
            # to the notes about them (:mod:`~supercontext_lab.reading.references`).
            # Followed from what the words found: meaning is weighed in only once every
            # read is in (:mod:`~supercontext_lab.reading.meaning`).
            facts = self._memory_facts(context, meaning=False)
            best = [fact.text for fact in facts[:_FOLLOWED_FROM]]
            return [
                ("memory_recall", {"namespace": "*", "query": ref, "limit": _FOLLOWED_HITS})
                for ref in references(best, context.terms)
            ]
        if rounds > 0:
            return []
        query = " ".join(context.query_words[:10])
        plan: list[tuple[str, dict[str, Any]]] = []
        if "memory_recall" in offered:
            recall = {
                "namespace": "*",
                "query": query,
                "limit": 8,
                "request": meaning_request(context),
            }
            plan.append(("memory_recall", recall))
        if "memory_flavour" in offered:
            plan.extend(("memory_flavour", {"flavour": facet}) for facet in wanted_facets(context))
        if "list_workflows" in offered:
            plan.append(("list_workflows", {}))
        if "skill_registry_search" in offered:
            plan.append(("skill_registry_search", {"query": query}))
        if needs_web(context) and "web_search_tool" in offered:
            plan.append(("web_search_tool", {"query": query}))
        return plan

    # -- writing ---------------------------------------------------------------------------

    def _memory_facts(self, context: RequestContext, *, meaning: bool = True) -> list[_Fact]:
        """The memory hits' passages on the request, best first, ranked as every route
        ranks them (:func:`~supercontext_lab.reading.passages.ranked_passages`), with
        the passages found by meaning weighed in when the words leave the request
        uncovered (:func:`~supercontext_lab.reading.meaning.with_meaning`)."""
        boosted = wanted_categories(context)
        hits: list[Quotable[tuple[str, str]]] = []
        by_meaning: list[tuple[str, tuple[str, str]]] = []
        for result in context.results.get("memory_recall", []):
            via = referred(str(result.get("query", "")), context.terms)
            for hit in result.get("by_meaning", []) if meaning else []:
                found = cited_hit(hit, context)
                if found is not None:
                    by_meaning.append((found[0], found[1]))
            for hit in result.get("hits", []):
                found = cited_hit(hit, context)
                if found is None:
                    continue
                content, (cite, turns), name, category = found
                hits.append(
                    Quotable(
                        content,
                        (cite, turns),
                        float(hit.get("score", 0.0)),
                        name,
                        # A question about a decision, a deadline or a person prefers
                        # memories of that category: the words differ ("decide",
                        # "Decision"), the intent not.
                        1.6 if category in boosted else 1.0,
                        SHORT_TURN_CHARS if turns else SHORT_NOTE_CHARS,
                        via,
                    )
                )
        # MEMORY.md and PROFILE.md compete in the same ranking, at a file's weight: a line of
        # them that does not address the request does not earn a bullet.
        if context.memory_md.strip():
            hits.append(Quotable(context.memory_md, ("memory", "")))
        if context.profile.strip():
            hits.append(Quotable(context.profile, ("profile", "")))
        facts: list[_Fact] = []
        ranked = with_meaning(ranked_passages(hits, context.terms), by_meaning, context.terms)
        for passage, (cite, turns) in ranked:
            if len(facts) == _HIT_FACTS:
                break
            # Each fact names the note (or conversation) it came from, so the check and
            # the reader can find it; a quote of a conversation says who spoke, and one
            # that only repeats the request says nothing new.
            quote = with_speaker(turns, passage.text) if turns else passage.text
            if not (turns and no_fact(quote, context.terms)):
                facts.append(_fact(quote, cite))
        return facts

    def _skills(
        self, context: RequestContext
    ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        query = context.query_stems
        # The user's own notes may point at a skill; a past conversation may not: what
        # someone said to do in an imported chat is what was said then, not a sign that
        # this request wants it (SPEC §14).
        notes = [
            context.memory_md,
            *(
                str(hit.get("content", ""))
                for result in context.results.get("memory_recall", [])
                for hit in result.get("hits", [])
                if isinstance(hit, dict) and not hit.get("transcript")
            ),
        ]
        installed: list[tuple[int, str, str, str]] = []
        for result in context.results.get("list_workflows", []):
            for skill in result.get("skills", []):
                title = str(skill.get("name", ""))
                tags = " ".join(map(str, skill.get("tags", [])))
                named = f"{title} {skill.get('dir_name', '')} {tags}"
                text = f"{named} {skill.get('description', '')}"
                # The request must point at the skill beyond one shared word, one of them
                # naming it (SPEC §14): "dives" alone does not ask for a dive-log tidier.
                dir_name = str(skill.get("dir_name", ""))
                score = name_fit(
                    query,
                    named,
                    str(skill.get("description", "")),
                    in_notes=named_in_notes(dir_name, query, notes),
                )
                if score:
                    installed.append((score, dir_name, str(skill.get("description", "")), text))
        installed.sort(key=lambda item: (-item[0], item[1]))
        installed = installed[:2]
        installed_ids = {dir_name for _, dir_name, _, _ in installed}
        covered = {concept for *_, text in installed for concept in context.concepts_in(text)}
        all_installed = {
            str(skill.get("dir_name", ""))
            for result in context.results.get("list_workflows", [])
            for skill in result.get("skills", [])
        }
        registry: list[tuple[int, str, str]] = []
        for result in context.results.get("skill_registry_search", []):
            for entry in result.get("results", []):
                entry_id = str(entry.get("id", ""))
                if entry.get("installed") or entry_id in all_installed or entry_id in installed_ids:
                    continue
                text = " ".join(
                    [
                        str(entry.get("name", "")),
                        str(entry.get("description", "")),
                        " ".join(map(str, entry.get("tags", []))),
                    ]
                )
                # Counted by what the request names, not by words ("sensitivity-analysis
                # figure" names two things), and only what no installed fit covers: an
                # install is worth suggesting for the part of the request left open.
                score = len(context.concepts_in(text) - covered)
                if score >= 2:
                    registry.append((score, entry_id, str(entry.get("description", ""))))
        registry.sort(key=lambda item: (-item[0], item[1]))
        return ([(i, d) for _, i, d, _ in installed], [(i, d) for _, i, d in registry[:2]])

    def _envelope(self, context: RequestContext) -> str:
        kind = request_kind(context.request)
        if kind == "greeting":
            return write_envelope(
                has_enough_context=True,
                proposed_goal=None,
                summary="A greeting or thanks; no background is needed to reply.",
                summary_on_key_line=True,
            )
        # One fact from two places (a note and MEMORY.md, MEMORY.md and PROFILE.md) is
        # listed once, by the note that says the most.
        gathered = distinct_facts(
            [*self._memory_facts(context), *_facet_facts(context)],
            lambda fact: fact.text,
        )
        facts = [fact.bullet for fact in gathered if not fact.profile]
        profile = [fact.bullet for fact in gathered if fact.profile]
        integration_lines, tool_calls, missing = _integration_parts(context)
        installed, registry = self._skills(context)
        if installed and "run_workflow" in context.orchestrator_tools:
            dir_name = installed[0][0]
            tool_calls.append(
                (
                    "run_workflow",
                    {"workflow": dir_name},
                    f"the installed skill {dir_name} fits the request",
                )
            )
        if needs_web(context):
            _web_parts(context, facts, tool_calls, missing)
        _file_call(context, tool_calls)
        lines = fitted(facts[:_MEMORY_FACTS] + profile[:4] + integration_lines)
        covered = coverage(context.terms, lines)
        if not lines:
            missing.insert(
                0, "no stored memory, profile or integration context matched this request"
            )
        elif not covered.enough:
            # Something was found, but not on what the request asks about (SPEC §14).
            missing.insert(0, covered.missing_line())
        skills = [(i, True, d) for i, d in installed] + [(i, False, d) for i, d in registry]
        return write_envelope(
            has_enough_context=bool(lines) and covered.enough and not missing,
            proposed_goal=None if kind == "question" else goal_line(context.request),
            summary=_summary(lines, missing),
            tool_calls=[
                (name, json.dumps(args, ensure_ascii=False), why) for name, args, why in tool_calls
            ],
            skills=[
                (
                    skill_id,
                    is_installed,
                    one_line(description, 140, at_word=True) or "fits the request",
                )
                for skill_id, is_installed, description in skills
            ],
        )


# The envelope's parts, each from what the run read; a tool call is (name, args, why).
_Call = tuple[str, dict[str, Any], str]


class _Fact(NamedTuple):
    """One summary fact: what it says (compared for repeats) and its bullet, cited."""

    text: str
    bullet: str
    profile: bool


def _fact(text: str, attribution: str, lead: str = "") -> _Fact:
    # A fact is a whole sentence (or two): never cut, so never ending in "…". An
    # attribution inside the note's text is its words, not a citation of this line.
    flat = attributions_as_text(one_line(text))
    return _Fact(flat, f"{lead}{flat} ({attribution})", attribution == "profile")


def _file_passages(text: str, context: RequestContext, limit: int) -> list[str]:
    """The passages of a user file or facet on the request's topic, best first."""
    return [passage.text for passage in passages(text, context.terms, limit=limit)]


def _facet_facts(context: RequestContext) -> list[_Fact]:
    """The flavour facets read, on the request's topic, cited (profile)."""
    profile: list[_Fact] = []
    evidence = facet_evidence(context)
    for result in context.results.get("memory_flavour", []):
        content = str(result.get("content", "")).strip()
        if content:
            facet = str(result.get("facet", "preferences"))
            best = _file_passages(content, context, 2)
            # A facet one word of the request points at gives only its passages on the
            # request's topic; one the request is about (two words, or "prefer") also
            # gives its leading sentences when none shares a word with it.
            if not best and (evidence.get(facet, 0) >= 2 or asks_preferences(context)):
                best = note_sentences(content)[:2]
            lead = facet.replace("_", " ").capitalize() + ": "
            profile.extend(_fact(line, "profile", lead) for line in best)
    return profile


def _integration_parts(context: RequestContext) -> tuple[list[str], list[_Call], list[str]]:
    """The integrations the request mentions: summary lines for the connected ones (and a
    delegate call when the orchestrator has one), what is missing for the others."""
    missing: list[str] = []
    lines: list[str] = []
    tool_calls: list[_Call] = []
    for toolkit in mentioned_integrations(context):
        if toolkit in context.connected:
            description = context.connected[toolkit]
            detail = f": {description}" if description else ""
            lines.append(f"{toolkit} is connected{detail} (integrations)")
            delegate = f"delegate_{toolkit}"
            if delegate in context.orchestrator_tools:
                tool_calls.append(
                    (
                        delegate,
                        {"task": one_line(context.request, 200, at_word=True)},
                        f"{toolkit} is connected and the request concerns it",
                    )
                )
        elif context.connected or toolkit in ("notion", "google_drive", "linkedin", "whatsapp"):
            missing.append(f"{toolkit} is not connected, so it cannot act on this request")
    return lines, tool_calls, missing


def _web_parts(
    context: RequestContext, facts: list[str], tool_calls: list[_Call], missing: list[str]
) -> None:
    """For a request that needs fresh outside facts: the search results as facts, or a
    web_search call for the orchestrator, and what is missing without them."""
    web = context.results.get("web_search_tool")
    if web:
        for result in web[:1]:
            for item in result.get("results", [])[:3]:
                facts.append(
                    f"{one_line(str(item.get('title', '')), 120, at_word=True)} "
                    f"(web: {item.get('url', '')})"
                )
    elif "web_search" in context.orchestrator_tools:
        tool_calls.append(
            (
                "web_search",
                {"query": " ".join(context.query_words[:8])},
                "the request asks for recent outside information",
            )
        )
    if not web:
        missing.append(
            "recent outside sources were not searched (web search is not configured for the scout)"
        )


def _file_call(context: RequestContext, tool_calls: list[_Call]) -> None:
    """A file_read of the first workspace file on the request's topic, if there is room."""
    for path in context.files:
        if (
            name_fit(
                context.query_stems, path.replace("/", " ").replace("-", " ").replace("_", " ")
            )
            and "file_read" in context.orchestrator_tools
            and len(tool_calls) < 4
        ):
            tool_calls.append(
                ("file_read", {"path": f"files/{path}"}, "a workspace file on the same topic")
            )
            break


def _summary(lines: list[str], missing: list[str]) -> str:
    """The facts as bullets, then one ``Missing:`` line."""
    summary_lines = [f"- {line}" for line in lines]
    if missing:
        summary_lines.append("Missing: " + "; ".join(missing) + ".")
    return "\n".join(summary_lines) or "Nothing relevant was found."
