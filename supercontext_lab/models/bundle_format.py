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

Nothing here changes the contract: the result still goes through
``extract_context_bundle`` / ``parse_context_bundle`` like any model output, and model
output stays untrusted data (the JSON is type-checked and its strings kept on one line;
the one envelope writer neutralises anything in them that could pass for a tag, a
prepared-block heading or a separator).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._bounded import json_loads
from .._text import one_line
from ..bundle_render import write_envelope
from .wire import TOOL_CALL_CLOSE, TOOL_CALL_OPEN

__all__ = [
    "BUNDLE_JSON_SCHEMA",
    "GRAMMAR_MAX_TOKENS",
    "apply_bundle_format",
    "envelope_from_json",
    "envelope_grammar",
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


def _literal(text: str) -> str:
    return json.dumps(text)


def envelope_grammar(tool_names: Sequence[str] = ()) -> str:
    """A GBNF grammar whose every sentence is one valid envelope.

    With ``tool_names`` (tools offered through the text protocol) the grammar also admits
    one to three ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` blocks naming one
    of those tools, and nothing else.
    """
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
        'bullet ::= "- " line "\\n"',
        'tools ::= "recommended_tool_calls: []\\n" | "recommended_tool_calls:\\n" '
        f"toolitem{{1,{_LIST_ITEMS}}}",
        'toolitem ::= "  - tool: " ident "\\n    args: " object "\\n    why: " why "\\n"',
        'skills ::= "recommended_skills: []\\n" | "recommended_skills:\\n" '
        f"skillitem{{1,{_LIST_ITEMS}}}",
        'skillitem ::= "  - skill: " slug "\\n    installed: " bool "\\n    why: " why "\\n"',
        "ident ::= [a-zA-Z_] [a-zA-Z0-9_.-]{0,47}",
        "slug ::= [a-zA-Z0-9] [a-zA-Z0-9_.-]{0,47}",
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


BUNDLE_JSON_SCHEMA: dict[str, Any] = _closed(
    {
        "has_enough_context": {"type": "boolean"},
        "proposed_goal": {
            "type": ["string", "null"],
            "description": "one line, or null for a greeting or a one-shot question",
        },
        "summary": _string_list("distilled facts, each ending with its source, e.g. (memory)"),
        "recommended_tool_calls": {
            "type": "array",
            "items": _closed(
                {
                    "tool": {"type": "string", "description": "exact orchestrator tool name"},
                    "args": {"type": "string", "description": "a JSON object, as text"},
                    "why": {"type": "string"},
                }
            ),
        },
        "recommended_skills": {
            "type": "array",
            "items": _closed(
                {
                    "skill": {"type": "string"},
                    "installed": {"type": "boolean"},
                    "why": {"type": "string"},
                }
            ),
        },
    }
)
"""The envelope as a JSON schema, for servers with ``response_format`` structured output."""


def apply_bundle_format(
    payload: dict[str, Any],
    bundle_format: str,
    *,
    callable_tools: Sequence[str],
    text_tools: bool,
) -> None:
    """Add the constraint of ``bundle_format`` to a chat-completions ``payload``.

    ``callable_tools`` are the tools the model may call in this reply; ``text_tools`` says
    whether they travel through the text protocol. A constraint is only sent where it
    cannot fight native tool calling: with native tools offered the server's own tool
    handling decides, and only the calls without tools are constrained.
    """
    if bundle_format == "grammar":
        if callable_tools and not text_tools:
            return
        payload["grammar"] = envelope_grammar(callable_tools if text_tools else ())
        payload.setdefault("max_tokens", GRAMMAR_MAX_TOKENS)
    elif bundle_format == "json_schema":
        if callable_tools and text_tools:
            # A JSON-only reply could not carry a text-protocol tool call.
            return
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "context_bundle", "strict": True, "schema": BUNDLE_JSON_SCHEMA},
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


def envelope_from_json(text: str) -> str | None:
    """Render a structured-output reply (see :data:`BUNDLE_JSON_SCHEMA`) as an envelope.

    ``None`` when ``text`` is not a JSON object shaped like a bundle (then the caller keeps
    the text as it came, and the usual checks reject it with their reason).
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
    return write_envelope(
        has_enough_context=data["has_enough_context"],
        proposed_goal=_clean(goal) if isinstance(goal, str) else None,
        summary="\n".join(f"- {fact}" for item in facts if (fact := _clean(item))),
        tool_calls=[
            (tool, _args_text(item.get("args", "{}")), _clean(item.get("why", "")))
            for item in _items(data, "recommended_tool_calls")
            if (tool := _clean(item.get("tool", "")))
        ],
        skills=[
            (skill, item.get("installed") is True, _clean(item.get("why", "")))
            for item in _items(data, "recommended_skills")
            if (skill := _clean(item.get("skill", "")))
        ],
    )
