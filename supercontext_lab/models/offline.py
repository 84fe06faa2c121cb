"""The embedded offline models: a scout and an orchestrator that need no network or key.

:class:`OfflineScoutModel` plays the scout through the *same* tool-calling loop as a real
model. It reads only what a real model would read — the system prompt, the task message,
the tools it is offered and the tool results it gets back — and never opens the workspace
itself, so removing a tool from agent.toml visibly changes its bundle. Its plan:

1. first call: all its reads at once, as the prompt asks: ``memory_recall`` on the
   request's keywords, ``memory_flavour`` when the request is about how the user likes to
   work, ``list_workflows`` and ``skill_registry_search`` to find fitting skills, and
   ``web_search_tool`` when the request asks for fresh outside facts;
2. then the envelope, built only from those results and the prompt's sections.

Facts from memory hits and MEMORY.md are cited ``(memory)``, PROFILE.md and flavour
facets ``(profile)``, the Connected Integrations section ``(integrations)``. Greetings,
thanks and one-shot questions get ``proposed_goal: none``. Everything is deterministic.

:class:`OfflineOrchestratorModel` answers the user from the prepared context (or says it
starts cold) and says plainly that it is the offline model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._bounded import json_loads
from ..gate import GREETINGS, normalize_message
from .base import Message, ModelReply, ToolCall, ToolSpec, estimate_usage
from .text import keywords, overlap, stems, tokens

__all__ = ["OfflineOrchestratorModel", "OfflineScoutModel"]

_INTERROGATIVES = frozenset(
    "what who whom whose when where why how which is are am was were do does did can could "
    "should would will shall may might has have had cosa chi quando dove perché perche come "
    "quale quali quanto quanti".split()
)
_THANKS = frozenset({"thanks", "thank you", "thx", "grazie", "cheers", "thanks a lot"})
_WORK_LEAD_INS = re.compile(
    r"^(?:(?:please|kindly|can you|could you|would you|will you|help me(?: to)?|"
    r"i need to|i need you to|i want to|i'd like to|i would like to|let's|lets)\s+)+",
    re.IGNORECASE,
)

# Which flavour facet a request is about, by the words it uses.
_FACET_TRIGGERS: dict[str, frozenset[str]] = {
    "communication": frozenset(
        "reply email emails draft message write writing tone "
        "communicate communication letter respond".split()
    ),
    "coding_style": frozenset(
        "code coding figure figures plot plots style format formatted "
        "formatting script function refactor".split()
    ),
    "stack": frozenset("stack library libraries package packages framework python tooling".split()),
    "workflow": frozenset(
        "workflow process plan planning schedule routine organise organize".split()
    ),
    "environment": frozenset("environment setup machine laptop cluster install hpc".split()),
    "anti_preferences": frozenset("avoid dislike hate annoy annoys never".split()),
}
_PREFERENCE_WORDS = frozenset("like prefer preference preferences preferred usually want".split())

# Words that point at an integration even when its toolkit name is not used.
_INTEGRATION_ALIASES: dict[str, frozenset[str]] = {
    "gmail": frozenset("gmail email emails mail inbox reply".split()),
    "google_calendar": frozenset("calendar meeting meetings schedule event events agenda".split()),
    "slack": frozenset("slack channel dm".split()),
    "github": frozenset("github repo repository pull issue issues pr commit".split()),
    "notion": frozenset("notion".split()),
    "google_drive": frozenset("drive gdrive".split()),
    "zotero": frozenset("zotero library references bibliography".split()),
    "linkedin": frozenset("linkedin".split()),
    "whatsapp": frozenset("whatsapp".split()),
}
_WEB_WORDS = frozenset(
    "latest new newest recent recently news today current currently "
    "published preprint preprints papers".split()
)

_USER_FILE_ENDS = ("\n### MEMORY.md\n", "\n## Memory context\n", "\n## Your tools")
_SUMMARY_BUDGET = 2600  # characters, comfortably under the contract's ~700 tokens


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
class _Context:
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


def _parse_context(messages: Sequence[Message]) -> _Context:
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
    context = _Context(
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


def _kind(request: str) -> str:
    """``greeting``, ``question`` or ``work`` (SPEC §10)."""
    normal = normalize_message(request)
    if not normal or normal in GREETINGS or normal in _THANKS:
        return "greeting"
    first = tokens(normal)[:1]
    if request.strip().endswith("?") and first and first[0] in _INTERROGATIVES:
        return "question"
    return "work"


def _goal(request: str) -> str:
    text = " ".join(request.split()).rstrip(" .!?")
    text = _WORK_LEAD_INS.sub("", text)
    text = text[:1].upper() + text[1:]
    return text if len(text) <= 160 else text[:159].rstrip() + "…"


def _facets(context: _Context) -> list[str]:
    words = set(context.query_words)
    ranked = [
        (len(words & triggers), facet)
        for facet, triggers in _FACET_TRIGGERS.items()
        if words & triggers
    ]
    ranked.sort(key=lambda pair: (-pair[0], list(_FACET_TRIGGERS).index(pair[1])))
    facets = [facet for _, facet in ranked[:2]]
    if words & _PREFERENCE_WORDS and facets and "anti_preferences" not in facets:
        facets.append("anti_preferences")
    return facets


def _mentioned_integrations(context: _Context) -> list[str]:
    words = set(tokens(f"{context.request} {context.focus}"))
    found = []
    for toolkit, aliases in _INTEGRATION_ALIASES.items():
        if words & (aliases | {toolkit, toolkit.replace("_", " ")}):
            found.append(toolkit)
    return found


_CATEGORY_CUES: dict[str, frozenset[str]] = {
    "decision": frozenset("decide decided decision decisions agree agreed choose chose".split()),
    "deadline": frozenset("deadline deadlines due when submit submission".split()),
    "person": frozenset("who whom".split()),
    "meeting": frozenset("meeting meetings met".split()),
    "conversation": frozenset("discuss discussed talked said mentioned conversation".split()),
    "preference": frozenset("like prefer preference preferences".split()),
}


def _wanted_categories(context: _Context) -> set[str]:
    words = set(tokens(f"{context.request} {context.focus}"))
    return {category for category, cues in _CATEGORY_CUES.items() if words & cues}


def _needs_web(context: _Context) -> bool:
    return bool(set(context.query_words) & _WEB_WORDS)


def _one_line(text: str, limit: int = 260) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    # End on a whole word ("budget…", not "budg…"), unless that would lose half the line.
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:—–-") + "…"


def _relevant_lines(text: str, query: set[str], limit: int) -> list[str]:
    """Bullet or sentence lines of a user file that share words with the request."""
    # Re-join wrapped bullets: an indented line that does not start a new bullet continues
    # the previous one, so a fact is never cut in the middle of its sentence.
    items: list[str] = []
    for raw in text.splitlines():
        starts_item = not raw[:1].isspace() or raw.lstrip().startswith(("-", "*"))
        if items and raw.strip() and not starts_item:
            items[-1] += " " + raw.strip()
        else:
            items.append(raw)
    scored = []
    for position, raw in enumerate(items):
        line = raw.strip().lstrip("-*0123456789. ").strip().replace("**", "")
        if not line or line.startswith("#") or len(line) < 12:
            continue
        score = overlap(query, line)
        if score:
            scored.append((-score, position, line))
    scored.sort()
    return [line for _, _, line in scored[:limit]]


def _ordered_calls(specs: list[tuple[str, dict[str, Any]]]) -> Message:
    calls = tuple(
        ToolCall(id=f"call_{index}", name=name, arguments=json.dumps(args, ensure_ascii=False))
        for index, (name, args) in enumerate(specs, start=1)
    )
    return Message(role="assistant", content=None, tool_calls=calls)


class OfflineScoutModel:
    """A deterministic scout that gathers through tool calls and writes the envelope."""

    def __init__(self, *, name: str = "offline:scout") -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        context = _parse_context(messages)
        offered = {spec.name for spec in tools or ()} if tool_choice != "none" else set()
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
        self, context: _Context, offered: set[str], rounds: int
    ) -> list[tuple[str, dict[str, Any]]]:
        if _kind(context.request) == "greeting" or not context.query_words:
            return []
        if rounds > 0:
            # Every read of the plan is independent of the others, so they all go out in
            # the first reply (as the prompt asks): a second gathering round would re-send
            # the whole conversation for nothing.
            return []
        query = " ".join(context.query_words[:10])
        plan: list[tuple[str, dict[str, Any]]] = []
        if "memory_recall" in offered:
            plan.append(("memory_recall", {"namespace": "*", "query": query, "limit": 8}))
        if "memory_flavour" in offered:
            plan.extend(("memory_flavour", {"flavour": facet}) for facet in _facets(context))
        if "list_workflows" in offered:
            plan.append(("list_workflows", {}))
        if "skill_registry_search" in offered:
            plan.append(("skill_registry_search", {"query": query}))
        if _needs_web(context) and "web_search_tool" in offered:
            plan.append(("web_search_tool", {"query": query}))
        return plan

    # -- writing ---------------------------------------------------------------------------

    def _memory_facts(self, context: _Context) -> list[str]:
        hits = [
            hit
            for result in context.results.get("memory_recall", [])
            for hit in result.get("hits", [])
            if isinstance(hit, dict)
        ]
        if not hits:
            return []
        top = max(float(hit.get("score", 0.0)) for hit in hits)
        query = context.query_stems
        chosen: list[tuple[float, str]] = []
        seen: set[str] = set()
        boosted = _wanted_categories(context)
        for hit in hits:
            content = str(hit.get("content", ""))
            score = float(hit.get("score", 0.0))
            # A question about a decision, a deadline or a person prefers memories of that
            # category: the words differ ("decide" vs "Decision") but the intent matches.
            rank = score * (1.6 if str(hit.get("category", "")) in boosted else 1.0)
            # Relevant beats exhaustive: weak hits and hits sharing a single generic word
            # with a long request stay out of the summary.
            shared = overlap(query, content + " " + str(hit.get("key", "")))
            needed = 1 if len(query) <= 3 else 2
            # In a tiny corpus every BM25 score is near zero; only compare when they differ.
            if (top > 0 and score < 0.35 * top) or shared < needed or content in seen:
                continue
            seen.add(content)
            chosen.append((rank, content))
        chosen.sort(key=lambda pair: -pair[0])
        return [f"{_one_line(content)} (memory)" for _, content in chosen[:5]]

    def _skills(self, context: _Context) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        query = context.query_stems
        installed: list[tuple[int, str, str]] = []
        for result in context.results.get("list_workflows", []):
            for skill in result.get("skills", []):
                title = str(skill.get("name", ""))
                # Slugs are hyphenated: split them so "lit-review-digest" matches "review".
                slug = str(skill.get("dir_name", "")).replace("-", " ")
                tags = " ".join(map(str, skill.get("tags", [])))
                score = overlap(query, f"{title} {slug} {tags} {skill.get('description', '')}")
                # One shared word fits only when it names the skill itself ("figures" for
                # the figure polisher); a word only in a description ("grant") does not.
                if score >= 2 or (score == 1 and overlap(query, title)):
                    installed.append(
                        (score, str(skill.get("dir_name", "")), str(skill.get("description", "")))
                    )
        installed_ids = {dir_name for _, dir_name, _ in installed}
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
                score = overlap(query, text)
                if score >= 2:
                    registry.append((score, entry_id, str(entry.get("description", ""))))
        installed.sort(key=lambda item: (-item[0], item[1]))
        registry.sort(key=lambda item: (-item[0], item[1]))
        return ([(i, d) for _, i, d in installed[:2]], [(i, d) for _, i, d in registry[:2]])

    def _envelope(self, context: _Context) -> str:
        kind = _kind(context.request)
        if kind == "greeting":
            return (
                "[context_bundle]\nhas_enough_context: true\nproposed_goal: none\n"
                "summary: A greeting or thanks; no background is needed to reply.\n"
                "recommended_tool_calls: []\nrecommended_skills: []\n[/context_bundle]"
            )
        query = context.query_stems
        facts = self._memory_facts(context)
        facts += [
            f"{_one_line(line)} (memory)" for line in _relevant_lines(context.memory_md, query, 3)
        ]
        profile = [
            f"{_one_line(line)} (profile)" for line in _relevant_lines(context.profile, query, 3)
        ]
        for result in context.results.get("memory_flavour", []):
            content = str(result.get("content", "")).strip()
            if content:
                facet = str(result.get("facet", "preferences")).replace("_", " ")
                lines = [ln.strip("- ").strip() for ln in content.splitlines() if ln.strip()]
                best = _relevant_lines(content, query, 2) or lines[:2]
                profile.extend(f"{facet.capitalize()}: {_one_line(ln)} (profile)" for ln in best)
        missing: list[str] = []
        integration_lines: list[str] = []
        tool_calls: list[tuple[str, dict[str, Any], str]] = []
        for toolkit in _mentioned_integrations(context):
            if toolkit in context.connected:
                description = context.connected[toolkit]
                detail = f": {description}" if description else ""
                integration_lines.append(f"{toolkit} is connected{detail} (integrations)")
                delegate = f"delegate_{toolkit}"
                if delegate in context.orchestrator_tools:
                    tool_calls.append(
                        (
                            delegate,
                            {"task": _one_line(context.request, 200)},
                            f"{toolkit} is connected and the request concerns it",
                        )
                    )
            elif context.connected or toolkit in ("notion", "google_drive", "linkedin", "whatsapp"):
                missing.append(f"{toolkit} is not connected, so it cannot act on this request")
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
        if _needs_web(context):
            web = context.results.get("web_search_tool")
            if web:
                for result in web[:1]:
                    for item in result.get("results", [])[:3]:
                        facts.append(
                            f"{_one_line(str(item.get('title', '')), 120)} "
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
                    "recent outside sources were not searched (web search is "
                    "not configured for the scout)"
                )
        for path in context.files:
            if (
                overlap(query, path.replace("/", " ").replace("-", " ").replace("_", " "))
                and "file_read" in context.orchestrator_tools
                and len(tool_calls) < 4
            ):
                tool_calls.append(
                    ("file_read", {"path": f"files/{path}"}, "a workspace file on the same topic")
                )
                break

        found = bool(facts or profile or integration_lines)
        if not found:
            missing.insert(
                0, "no stored memory, profile or integration context matched this request"
            )
        has_enough = found and not missing
        goal = "none" if kind == "question" else _goal(context.request)

        lines = facts[:6] + profile[:4] + integration_lines
        summary_lines = []
        used = 0
        for line in lines:
            if used + len(line) > _SUMMARY_BUDGET:
                break
            summary_lines.append(f"- {line}")
            used += len(line) + 3
        if missing:
            summary_lines.append("Missing: " + "; ".join(missing) + ".")
        summary = "\n".join(summary_lines) or "Nothing relevant was found."

        out = [
            "[context_bundle]",
            f"has_enough_context: {'true' if has_enough else 'false'}",
            f"proposed_goal: {goal}",
            f"summary:\n{summary}",
        ]
        if tool_calls:
            out.append("recommended_tool_calls:")
            for name, args, why in tool_calls:
                out += [
                    f"  - tool: {name}",
                    f"    args: {json.dumps(args, ensure_ascii=False)}",
                    f"    why: {why}",
                ]
        else:
            out.append("recommended_tool_calls: []")
        skills = [(i, True, d) for i, d in installed] + [(i, False, d) for i, d in registry]
        if skills:
            out.append("recommended_skills:")
            for skill_id, is_installed, description in skills:
                why = _one_line(description, 140) or "fits the request"
                out += [
                    f"  - skill: {skill_id}",
                    f"    installed: {'true' if is_installed else 'false'}",
                    f"    why: {why}",
                ]
        else:
            out.append("recommended_skills: []")
        out.append("[/context_bundle]")
        return "\n".join(out)


class OfflineOrchestratorModel:
    """A deterministic stand-in orchestrator for demos: it answers from the prepared
    context and says that it is the offline model. It never calls tools."""

    def __init__(self, *, name: str = "offline:orchestrator") -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        from ..bundle import parse_context_bundle

        users = [m.content or "" for m in messages if m.role == "user"]
        last_user = users[-1] if users else ""
        request = last_user.rsplit("\n---\n", 1)[-1].strip()
        # The prepared block travels with the first message of the thread; later turns
        # still have it in the history.
        prepared = next((text for text in reversed(users) if "## Prepared context" in text), "")
        bundle = parse_context_bundle(prepared) if prepared else None
        lines = ["(offline orchestrator — a deterministic stand-in, not a language model)"]
        if bundle is None:
            lines.append(
                f"Starting cold: no prepared context came with “{_one_line(request, 120)}”."
            )
            lines.append("With a real model configured I would gather context myself now.")
        elif prepared is not last_user:
            lines.append(
                f"On “{_one_line(request, 120)}”: I still have the context prepared "
                "at the start of this thread."
            )
            if bundle.proposed_goal:
                lines.append(f"Thread goal: {bundle.proposed_goal}")
        else:
            if bundle.proposed_goal:
                lines.append(f"Goal: {bundle.proposed_goal}")
            facts = [
                ln.strip("- ").strip()
                for ln in bundle.summary.splitlines()
                if ln.strip().startswith("-")
            ]
            if facts:
                lines.append("What I already know:")
                lines.extend(f"  • {fact}" for fact in facts[:4])
            if bundle.recommended_tool_calls:
                lines.append(
                    "Next I would call: "
                    + ", ".join(call.tool for call in bundle.recommended_tool_calls)
                )
            if bundle.recommended_skills:
                lines.append(
                    "Skills that fit: "
                    + ", ".join(
                        s.skill + ("" if s.installed else " (not installed)")
                        for s in bundle.recommended_skills
                    )
                )
            if bundle.has_enough_context is False:
                lines.append("Some context is still missing, so I would ask or look it up first.")
        text = "\n".join(lines)
        if on_text is not None:
            for piece in re.findall(r"\S+\s*", text):
                on_text(piece)
        reply = Message(role="assistant", content=text)
        return ModelReply(reply, estimate_usage(messages, reply), "stop", self.name)
