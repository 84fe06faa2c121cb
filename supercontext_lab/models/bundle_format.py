"""Constrained emission of the ``[context_bundle]`` envelope.

A small model asked for the envelope in free text often writes something close to it
but not it. Servers that can constrain decoding get the constraint in the request:

- ``"grammar"``: a GBNF grammar of the envelope in the ``grammar`` request field
  (llama.cpp's ``llama-server`` and llama-cpp-python's server). When tools travel through
  the text protocol, the grammar also admits ``<tool_call>`` blocks, so the same reply can
  either gather or emit; it cannot be anything else.
- ``"json_schema"``: a ``response_format`` JSON schema (OpenAI, vLLM); the JSON the model
  returns is rendered back into the same envelope by :func:`envelope_from_json`.
- ``"text"``: no constraint; the envelope is checked afterwards as always.

With the run's :class:`~.choices.BundleChoices` both constraints choose from what exists
(SPEC §13): recommended tool names are an enumeration of the orchestrator catalogue,
skill ids one of the installed skills and this run's registry hits, and every summary
bullet ends with an attribution from the sources the run read. ``installed`` is not the
model's to write: the grammar writes each skill with its flag from the workspace, and the
schema has no such field (:func:`envelope_from_json` fills it in). Without choices (a call
that is not the scout's) the names stay free, bounded text.

Nothing here changes the contract: the result still goes through
``extract_context_bundle`` / ``parse_context_bundle`` like any model output, and model
output stays untrusted data (the JSON is type-checked and its strings kept on one line;
the one envelope writer neutralises anything in them that could pass for a tag, a
prepared-block heading or a separator).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from .._bounded import json_loads
from .._text import one_line
from ..bundle.records import split_summary
from ..bundle.render import write_envelope
from .choices import BundleChoices
from .wire import TOOL_CALL_CLOSE, TOOL_CALL_OPEN

__all__ = [
    "BUNDLE_JSON_SCHEMA",
    "GRAMMAR_MAX_TOKENS",
    "apply_bundle_format",
    "bundle_json_schema",
    "envelope_from_json",
    "envelope_grammar",
    "grammar_alternatives",
    "offerable",
]

GRAMMAR_MAX_TOKENS = 2400
"""``max_tokens`` sent with a grammar. The grammar bounds every field, so its longest
envelope is about 2,000 characters, so even at one token a character it closes."""

# Bounds of the grammar's fields: generous for a real bundle, finite so that a model
# stuck repeating itself still reaches the closing tag.
_SUMMARY_ITEMS = 5
_LIST_ITEMS = 2
_LINE_CHARS = 160
_WHY_CHARS = 100
_TOOL_CALLS_PER_REPLY = 3
_JSON_PAIRS = 3
_JSON_STRING_CHARS = 80


# A name offered for a constrained choice lands on one envelope line as it is: no line
# breaks or control characters, nothing that reads as a tag or a section, and bounded.
_UNOFFERABLE_RE = re.compile(r"[\x00-\x1f\x7f\[\]<>]")
_OFFERED_CHARS = 200


def offerable(names: Sequence[str]) -> list[str]:
    """The distinct ``names`` a constrained emission may offer, in order: those that fit on
    one envelope line as they are (a name that could break the envelope is not offered)."""
    return [
        name
        for name in dict.fromkeys(names)
        if name.strip() == name
        and 0 < len(name) <= _OFFERED_CHARS
        and not _UNOFFERABLE_RE.search(name)
    ]


def grammar_alternatives(options: Sequence[str]) -> str:
    """``options`` as alternatives of GBNF string literals (JSON's escapes;
    ``ensure_ascii=False`` keeps non-ASCII as UTF-8)."""
    return " | ".join(json.dumps(option, ensure_ascii=False) for option in options)


def _literal(text: str) -> str:
    return json.dumps(text)


def _chosen_rules(choices: BundleChoices) -> list[str]:
    """The rules that make the envelope choose tools, skills and attributions from
    ``choices``: a list with nothing to choose from can only be empty."""
    tools = offerable(choices.tools)
    skills = [
        skill
        for skill in choices.skills
        if offerable([skill.id]) and choices.skill(skill.id) is skill
    ]
    sources = offerable(choices.attributions)
    rules = []
    if tools:
        rules += [
            'tools ::= "recommended_tool_calls: []\\n" | "recommended_tool_calls:\\n" '
            f"toolitem{{1,{_LIST_ITEMS}}}",
            f"toolref ::= {grammar_alternatives(tools)}",
        ]
    else:
        rules.append('tools ::= "recommended_tool_calls: []\\n"')
    if skills:
        # The installed flag is written with the id: the model picks the pair.
        written = [f"{skill.id}\n    installed: {str(skill.installed).lower()}" for skill in skills]
        rules += [
            'skills ::= "recommended_skills: []\\n" | "recommended_skills:\\n" '
            f"skillitem{{1,{_LIST_ITEMS}}}",
            'skillitem ::= "  - skill: " skillpair "\\n    why: " why "\\n"',
            f"skillpair ::= {grammar_alternatives(written)}",
        ]
    else:
        rules.append('skills ::= "recommended_skills: []\\n"')
    if sources:
        # The claim holds no parentheses, so the one attribution of a bullet is the chosen one.
        rules += [
            'bullet ::= "- " claim " (" source ")\\n"',
            f"claim ::= [^\\n\\[\\]<>() ] [^\\n\\[\\]<>()]{{0,{_LINE_CHARS - 1}}}",
            f"source ::= {grammar_alternatives(sources)}",
        ]
    else:
        rules.append('bullet ::= "- " line "\\n"')
    return rules


def envelope_grammar(tool_names: Sequence[str] = (), choices: BundleChoices | None = None) -> str:
    """A GBNF grammar whose every sentence is one valid envelope.

    With ``tool_names`` (tools offered through the text protocol) the grammar also admits
    one to three ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks naming one
    of those tools, and nothing else. With ``choices`` the envelope's tool names, skills
    and attributions are enumerations of what exists (see the module docstring).
    """
    free = [
        'bullet ::= "- " line "\\n"',
        'tools ::= "recommended_tool_calls: []\\n" | "recommended_tool_calls:\\n" '
        f"toolitem{{1,{_LIST_ITEMS}}}",
        "toolref ::= ident",
        "ident ::= [a-zA-Z_] [a-zA-Z0-9_.-]{0,47}",
        "slug ::= [a-zA-Z0-9] [a-zA-Z0-9_.-]{0,47}",
        'skills ::= "recommended_skills: []\\n" | "recommended_skills:\\n" '
        f"skillitem{{1,{_LIST_ITEMS}}}",
        'skillitem ::= "  - skill: " slug "\\n    installed: " bool "\\n    why: " why "\\n"',
    ]
    rules = [
        'bundle ::= "[context_bundle]\\nhas_enough_context: " bool "\\nproposed_goal: " goal '
        f'"\\nsummary:\\n" bullet{{1,{_SUMMARY_ITEMS}}} tools skills "[/context_bundle]"',
        'bool ::= "true" | "false"',
        # No brackets, angle brackets or newlines inside a field: a field can neither
        # quote a tag (which would void the envelope) nor start a tool-call block.
        r"char ::= [^\n\[\]<>]",
        f"line ::= [^\\n\\[\\]<> ] char{{0,{_LINE_CHARS - 1}}}",
        # The goal is shown as a title: a quoted goal would keep its quotes (the parser
        # trims, it does not unquote), so it may not open with one.
        f"goal ::= [^\\n\\[\\]<> \"'`] char{{0,{_LINE_CHARS - 1}}}",
        f"why ::= [^\\n\\[\\]<> ] char{{0,{_WHY_CHARS - 1}}}",
        'toolitem ::= "  - tool: " toolref "\\n    args: " object "\\n    why: " why "\\n"',
        *(free if choices is None else _chosen_rules(choices)),
        # Flat JSON objects: every argument the scout's tools and the orchestrator's
        # recommended calls take is a string, a number, a boolean or null.
        f'object ::= "{{" ( pair ( ", " pair ){{0,{_JSON_PAIRS - 1}}} )? "}}"',
        'pair ::= "\\"" [a-zA-Z_] [a-zA-Z0-9_]{0,23} "\\": " value',
        'value ::= string | number | "true" | "false" | "null"',
        'string ::= "\\"" ( [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ["\\\\/bfnrt] )'
        f'{{0,{_JSON_STRING_CHARS}}} "\\""',
        'number ::= "-"? [0-9]{1,12} ( "." [0-9]{1,6} )?',
    ]
    if tool_names:
        names = " | ".join(_literal(json.dumps(name)) for name in tool_names)
        rules += [
            f'calls ::= call ( "\\n" call ){{0,{_TOOL_CALLS_PER_REPLY - 1}}}',
            f'call ::= {_literal(TOOL_CALL_OPEN + "{")} "\\"name\\": " toolname '
            f'", \\"arguments\\": " object {_literal("}" + TOOL_CALL_CLOSE)}',
            f"toolname ::= {names}",
        ]
        root = "root ::= calls | bundle"
    else:
        root = "root ::= bundle"
    return "\n".join([root, *rules]) + "\n"


def _string_list(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    # Strict structured outputs need every property required and no others allowed.
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(properties),
        "properties": properties,
    }


def _tool_item(tools: Sequence[str] | None) -> dict[str, Any]:
    tool: dict[str, Any] = {"type": "string", "description": "exact orchestrator tool name"}
    if tools:
        tool["enum"] = list(tools)
    return _closed(
        {"tool": tool, "args": {"type": "string", "description": "a JSON object, as text"}}
        | {"why": {"type": "string"}}
    )


def _skill_item(skills: Sequence[str] | None) -> dict[str, Any]:
    if skills is None:
        return _closed(
            {
                "skill": {"type": "string"},
                "installed": {"type": "boolean"},
                "why": {"type": "string"},
            }
        )
    # The workspace says whether a skill is installed: no field for the model to write.
    return _closed({"skill": {"type": "string", "enum": list(skills)}, "why": {"type": "string"}})


def _summary_schema(sources: Sequence[str] | None) -> dict[str, Any]:
    if sources is None:
        return _string_list("distilled facts, each ending with its source, e.g. (memory)")
    return {
        "type": "array",
        "description": "distilled facts, each with the source it comes from",
        "items": _closed(
            {
                "fact": {"type": "string", "pattern": "^[^()\\[\\]<>]*$"},
                "source": {"type": "string", "enum": list(sources)},
            }
        ),
    }


def _list(item: dict[str, Any], options: Sequence[str] | None) -> dict[str, Any]:
    # An enumeration cannot be empty: a list with nothing to choose from stays empty.
    if options is not None and not options:
        return {"type": "array", "items": item, "maxItems": 0}
    return {"type": "array", "items": item}


def bundle_json_schema(choices: BundleChoices | None = None) -> dict[str, Any]:
    """The envelope as a JSON schema, for servers with ``response_format`` structured
    output; with ``choices``, tools, skills and sources are enumerations of what exists
    (see the module docstring), and a summary item is a fact and its source."""
    tools = offerable(choices.tools) if choices is not None else None
    skills = offerable([s.id for s in choices.skills]) if choices is not None else None
    sources = offerable(choices.attributions) if choices is not None else None
    summary = _summary_schema(sources)
    if sources is not None and not sources:
        summary["maxItems"] = 0
    return _closed(
        {
            "has_enough_context": {"type": "boolean"},
            "proposed_goal": {
                "type": ["string", "null"],
                "description": "one line, or null for a greeting or a one-shot question",
            },
            "summary": summary,
            "recommended_tool_calls": _list(_tool_item(tools), tools),
            "recommended_skills": _list(_skill_item(skills), skills),
        }
    )


BUNDLE_JSON_SCHEMA: dict[str, Any] = bundle_json_schema()
"""The envelope as a JSON schema without choices (names free, ``installed`` written)."""


def apply_bundle_format(
    payload: dict[str, Any],
    bundle_format: str,
    *,
    callable_tools: Sequence[str],
    text_tools: bool,
    choices: BundleChoices | None = None,
) -> None:
    """Add the constraint of ``bundle_format`` to a chat-completions ``payload``.

    ``callable_tools`` are the tools the model may call in this reply; ``text_tools`` says
    whether they travel through the text protocol. A constraint is only sent where it
    cannot fight native tool calling: with native tools offered the server's own tool
    handling decides, and only the calls without tools are constrained. ``choices`` are
    what the envelope may name (see the module docstring).
    """
    if bundle_format == "grammar":
        if callable_tools and not text_tools:
            return
        payload["grammar"] = envelope_grammar(callable_tools if text_tools else (), choices)
        payload.setdefault("max_tokens", GRAMMAR_MAX_TOKENS)
    elif bundle_format == "json_schema":
        if callable_tools and text_tools:
            # A JSON-only reply could not carry a text-protocol tool call.
            return
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": "context_bundle",
                "strict": True,
                "schema": bundle_json_schema(choices),
            },
        }


def _clean(value: Any) -> str:
    """One line of untrusted model text; the writer neutralises any tag-like text in it."""
    return one_line(value)


def _args_text(value: Any) -> str:
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    text = str(value).strip()
    try:
        parsed = json_loads(text)
    except ValueError:
        return _clean(text) or "{}"
    if isinstance(parsed, dict):
        return _clean(json.dumps(parsed, ensure_ascii=False))
    return _clean(text)


def _items(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def _fact(item: Any, sources: Sequence[str] | None) -> str:
    """One summary item as a bullet's text. With choices an item is a fact and its
    source: any attribution the fact writes itself is cut, and the source is kept only
    when it is one the run read (else the bullet cites nothing, and the check says so)."""
    if sources is None or not isinstance(item, dict):
        return _clean(item)
    lines = split_summary(_clean(item.get("fact", "")))
    claim = lines[0].claim if lines else ""
    source = item.get("source")
    if not claim:
        return ""
    return f"{claim} ({source})" if isinstance(source, str) and source in sources else claim


def _skill_rows(data: dict[str, Any], choices: BundleChoices | None) -> list[tuple[str, bool, str]]:
    rows = []
    for item in _items(data, "recommended_skills"):
        skill = _clean(item.get("skill", ""))
        why = _clean(item.get("why", ""))
        if choices is None:
            if skill:
                rows.append((skill, item.get("installed") is True, why))
        elif (known := choices.skill(skill)) is not None:
            rows.append((known.id, known.installed, why))
    return rows


def envelope_from_json(text: str, choices: BundleChoices | None = None) -> str | None:
    """Render a structured-output reply (see :func:`bundle_json_schema`) as an envelope.

    ``None`` when ``text`` is not a JSON object shaped like a bundle (then the caller keeps
    the text as it came, and the usual checks reject it with their reason). With
    ``choices`` the reply is held to them even when the server did not enforce the schema:
    tools and skills that are not among them are left out, ``installed`` comes from them.
    """
    try:
        data = json_loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("has_enough_context"), bool):
        return None
    summary = data.get("summary")
    facts = [summary] if isinstance(summary, str) else summary
    if not isinstance(facts, list):
        return None
    goal = data.get("proposed_goal")
    sources = offerable(choices.attributions) if choices is not None else None
    return write_envelope(
        has_enough_context=data["has_enough_context"],
        proposed_goal=_clean(goal) if isinstance(goal, str) else None,
        summary="\n".join(f"- {fact}" for item in facts if (fact := _fact(item, sources))),
        tool_calls=[
            (tool, _args_text(item.get("args", "{}")), _clean(item.get("why", "")))
            for item in _items(data, "recommended_tool_calls")
            if (tool := _clean(item.get("tool", ""))) and (choices is None or tool in choices.tools)
        ],
        skills=_skill_rows(data, choices),
    )
