"""Conversions between the lab's chat records and the OpenAI chat-completions wire format.

What a client needs lives here: parsing what a server answers and the messages of a saved
transcript (rendering replies as a server does is the test server's job, in
:mod:`supercontext_lab.testing.wire`). The text-based tool protocol used with servers that lack native tool calling is here too:
a tool catalogue appended to the system prompt, ``<tool_call>{...}</tool_call>`` blocks
parsed out of the reply, and a history rendered without the ``tool`` role.

Every parser raises :class:`~supercontext_lab.errors.ModelError` on data of the wrong
shape, with a message fragment the caller can place after "the server sent …".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .._bounded import json_loads
from .._text import one_line
from ..errors import ModelError
from .base import Message, ModelReply, Role, ToolCall, ToolSpec, Usage
from .boundary import Secrets, encodable

__all__ = [
    "TOOL_CALL_CLOSE",
    "TOOL_CALL_OPEN",
    "arguments_text",
    "completion_from_openai",
    "content_text",
    "excerpt",
    "message_from_openai",
    "messages_for_text_tools",
    "messages_from_openai",
    "parse_tool_call_blocks",
    "render_tool_call_block",
    "render_tool_catalogue",
    "tool_call_from_openai",
    "tool_signature",
    "usage_from_openai",
    "with_text_tool_calls",
]

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"

# "developer" is the newer OpenAI name for the system role; the lab treats them alike.
_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}
_BLOCK = re.compile(re.escape(TOOL_CALL_OPEN) + r"(.*?)" + re.escape(TOOL_CALL_CLOSE), re.DOTALL)
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*(.*?)\s*```$", re.DOTALL)


def excerpt(text: str | bytes, limit: int = 200, *, secrets: Secrets | None = None) -> str:
    """A one-line excerpt of ``text`` (:func:`~supercontext_lab._text.one_line`, at most
    ``limit`` characters), ``(empty body)`` when nothing is left.

    ``secrets``, when given, are removed first by the boundary's one rule
    (:class:`~.boundary.Secrets`), so a server echoing a key back in an error body cannot
    leak it into an exception message; text that cannot be encoded is repaired.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = encodable(text)
    if secrets is not None:
        text = secrets.masked(text)
    return one_line(text, limit) or "(empty body)"


def arguments_text(value: Any) -> str:
    """Tool-call arguments as JSON text: strings pass through, objects are serialised.

    Several servers (Ollama among them) send ``function.arguments`` as a JSON object
    instead of the string OpenAI specifies; the lab always keeps the text.
    """
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value if value.strip() else "{}"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ModelError(
            f"tool-call arguments of type {type(value).__name__} that cannot be written as JSON"
        ) from exc


def content_text(value: Any) -> str | None:
    """Message content as text: a string, ``None``, or a list of content parts joined."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        pieces: list[str] = []
        for part in value:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif isinstance(part, Mapping):
                continue  # images and other non-text parts carry nothing the lab can use
            else:
                raise ModelError(f"a content part of type {type(part).__name__}")
        return "".join(pieces)
    raise ModelError(f"message content of type {type(value).__name__}")


def usage_from_openai(value: Any) -> Usage:
    """Token usage from a ``usage`` object; anything missing or malformed counts as zero."""
    if not isinstance(value, Mapping):
        return Usage()

    def count(key: str) -> int:
        raw = value.get(key)
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            return 0
        if raw != raw or raw < 0 or raw == float("inf"):
            return 0
        return int(raw)

    return Usage(prompt_tokens=count("prompt_tokens"), completion_tokens=count("completion_tokens"))


def tool_call_from_openai(value: Any, position: int = 0) -> ToolCall:
    """One ``tool_calls`` entry; a missing id becomes ``call_<position + 1>``."""
    if not isinstance(value, Mapping):
        raise ModelError(f"a tool call that is not a JSON object ({type(value).__name__})")
    function = value.get("function")
    if not isinstance(function, Mapping):
        raise ModelError("a tool call without a 'function' object")
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ModelError("a tool call without a function name")
    ident = value.get("id")
    if not isinstance(ident, str) or not ident.strip():
        ident = f"call_{position + 1}"
    return ToolCall(
        id=ident, name=name.strip(), arguments=arguments_text(function.get("arguments"))
    )


def message_from_openai(d: Mapping[str, Any]) -> Message:
    """Build a :class:`Message` from one OpenAI message object."""
    if not isinstance(d, Mapping):
        raise ModelError(f"a message that is not a JSON object ({type(d).__name__})")
    raw_role = d.get("role")
    role = _ROLES.get(raw_role) if isinstance(raw_role, str) else None
    if role is None:
        raise ModelError(f"a message with the unknown role {raw_role!r}")
    raw_calls = d.get("tool_calls")
    if raw_calls is None:
        raw_calls = []
    if not isinstance(raw_calls, list):
        raise ModelError("'tool_calls' that is not a list")
    calls = tuple(tool_call_from_openai(call, i) for i, call in enumerate(raw_calls))
    tool_call_id = d.get("tool_call_id")
    name = d.get("name")
    return Message(
        role=role,
        content=content_text(d.get("content")),
        tool_calls=calls,
        tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
        name=name if isinstance(name, str) else None,
    )


def messages_from_openai(items: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Build messages from an OpenAI ``messages`` list."""
    if not isinstance(items, list | tuple):
        raise ModelError(f"'messages' that is not a list ({type(items).__name__})")
    out: list[Message] = []
    for index, item in enumerate(items):
        try:
            out.append(message_from_openai(item))
        except ModelError as exc:
            raise ModelError(f"{exc} (messages[{index}])") from exc
    return out


def completion_from_openai(data: Any, *, default_model: str = "") -> ModelReply:
    """Parse a ``chat.completion`` body (already decoded from JSON) into a reply."""
    if not isinstance(data, Mapping):
        raise ModelError(f"JSON that is not an object ({type(data).__name__})")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        error = data.get("error")
        if error:
            detail = error.get("message", error) if isinstance(error, Mapping) else error
            raise ModelError(f"an error instead of a completion: {excerpt(str(detail))}")
        raise ModelError("JSON without 'choices'")
    first = choices[0]
    message = first.get("message") if isinstance(first, Mapping) else None
    if not isinstance(message, Mapping):
        raise ModelError("JSON whose choices[0] has no 'message' object")
    # Some servers leave out the role of the reply; it is the assistant's by definition.
    parsed = message_from_openai({**message, "role": "assistant"})
    if parsed.content is None and not parsed.tool_calls:
        parsed = replace(parsed, content="")
    finish = first.get("finish_reason")
    model = data.get("model")
    return ModelReply(
        message=parsed,
        usage=usage_from_openai(data.get("usage")),
        finish_reason=finish if isinstance(finish, str) and finish else None,
        model=model if isinstance(model, str) and model else default_model,
    )


# --- Tool calling through text, for servers without native tool support -----------------


def render_tool_catalogue(tools: Sequence[ToolSpec], tool_choice: str | None = None) -> str:
    """The tool catalogue and calling convention appended to the system prompt."""
    lines = [
        "## Tools",
        "",
        "You can call the tools below. To call one, write a block exactly like this, one block "
        "per call, with JSON inside:",
        f'{TOOL_CALL_OPEN}{{"name": "tool_name", "arguments": {{"key": "value"}}}}{TOOL_CALL_CLOSE}',
        "Each result comes back in a user message that starts with [tool result: tool_name]. "
        "When you need no more tools, answer without any tool_call block.",
    ]
    if tool_choice == "required":
        lines.append("You must call at least one tool in your next reply.")
    elif tool_choice and tool_choice not in ("auto", "none"):
        lines.append(f"You must call the tool {tool_choice} in your next reply.")
    lines.append("")
    for tool in tools:
        description = " ".join(tool.description.split()) or "(no description)"
        lines.append(f"- {tool_signature(tool)}: {description}")
    return "\n".join(lines)


def _type_name(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return "|".join(json.dumps(item) for item in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    options = [_type_name(item) for item in schema.get("anyOf", []) if isinstance(item, dict)]
    return "|".join(option for option in options if option != "null") or "any"


def tool_signature(tool: ToolSpec) -> str:
    """``name(query: string, limit: integer = 5)``: a tool's arguments in one short line.

    Servers without native tools read the catalogue as prompt text on every call; a
    signature says what the model needs (names, types, which are optional and their
    defaults) in a fraction of the tokens of the full JSON schema.
    """
    schema = tool.parameters if isinstance(tool.parameters, dict) else {}
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        properties = {}
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    parts = []
    for name, spec in sorted(properties.items(), key=lambda item: item[0] not in needed):
        part = f"{name}: {_type_name(spec)}"
        if name not in needed and isinstance(spec, dict) and "default" in spec:
            part += f" = {json.dumps(spec['default'])}"
        elif name not in needed:
            part += " (optional)"
        parts.append(part)
    return f"{tool.name}({', '.join(parts)})"


def render_tool_call_block(call: ToolCall) -> str:
    """One ``<tool_call>`` block for ``call`` (arguments embedded as JSON when they parse)."""
    try:
        arguments: Any = json_loads(call.arguments)
    except ValueError:
        arguments = call.arguments
    body = json.dumps({"name": call.name, "arguments": arguments}, ensure_ascii=False)
    # "<\/" is a valid JSON escape of "</": a string holding "</tool_call>" cannot end
    # the block early.
    body = body.replace("</", "<\\/")
    return f"{TOOL_CALL_OPEN}{body}{TOOL_CALL_CLOSE}"


def _tool_name_for(messages: Sequence[Message], upto: int, call_id: str | None) -> str | None:
    for earlier in reversed(messages[:upto]):
        for call in earlier.tool_calls:
            if call.id == call_id:
                return call.name
    return None


def messages_for_text_tools(
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] = (),
    tool_choice: str | None = None,
) -> list[Message]:
    """Rewrite a conversation for a server without native tool calling.

    The tool catalogue (when ``tools`` is non-empty) is appended to the first system
    message, or becomes one. Earlier assistant tool calls turn into ``<tool_call>`` text,
    and tool results into user messages ``[tool result: name] …``, because such servers
    often reject the ``tool`` role. Adjacent user messages are then merged, since several
    chat templates insist that roles alternate.
    """
    rendered: list[Message] = []
    for position, message in enumerate(messages):
        if message.role == "tool":
            name = message.name or _tool_name_for(messages, position, message.tool_call_id)
            label = name or message.tool_call_id or "unknown"
            text = f"[tool result: {label}] {message.content or ''}".rstrip()
            rendered.append(Message(role="user", content=text))
        elif message.role == "assistant" and message.tool_calls:
            parts = [message.content] if message.content else []
            parts.extend(render_tool_call_block(call) for call in message.tool_calls)
            rendered.append(Message(role="assistant", content="\n".join(parts)))
        else:
            rendered.append(Message(role=message.role, content=message.content or ""))
    if tools:
        catalogue = render_tool_catalogue(tools, tool_choice)
        for index, message in enumerate(rendered):
            if message.role == "system":
                text = f"{message.content}\n\n{catalogue}" if message.content else catalogue
                rendered[index] = Message(role="system", content=text)
                break
        else:
            rendered.insert(0, Message(role="system", content=catalogue))
    merged: list[Message] = []
    for message in rendered:
        if merged and message.role == "user" and merged[-1].role == "user":
            merged[-1] = Message(role="user", content=f"{merged[-1].content}\n\n{message.content}")
        else:
            merged.append(message)
    return merged


def _call_from_block(inner: str, ident: str) -> ToolCall | None:
    text = inner.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json_loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    arguments = data.get("arguments", data.get("parameters"))
    return ToolCall(id=ident, name=name.strip(), arguments=arguments_text(arguments))


def parse_tool_call_blocks(text: str, *, first_id: int = 1) -> tuple[str, tuple[ToolCall, ...]]:
    """Split ``<tool_call>{"name": …, "arguments": …}</tool_call>`` blocks out of ``text``.

    Returns the text with the parsed blocks removed (trimmed) and the calls, with ids
    ``call_<first_id>``, ``call_<first_id + 1>``, …. A block whose inside is not a JSON
    object with a ``name`` stays in the text, so nothing the model wrote is lost.
    Never raises.
    """
    calls: list[ToolCall] = []
    kept: list[str] = []
    last = 0
    for match in _BLOCK.finditer(text):
        call = _call_from_block(match.group(1), f"call_{first_id + len(calls)}")
        if call is None:
            continue
        kept.append(text[last : match.start()])
        last = match.end()
        calls.append(call)
    kept.append(text[last:])
    if not calls:
        return text, ()
    return "".join(kept).strip(), tuple(calls)


def with_text_tool_calls(reply: ModelReply) -> ModelReply:
    """``reply`` with the ``<tool_call>`` blocks of its text turned into tool calls (for
    servers without native tools); the blocks leave the text, and a ``stop`` finish
    becomes ``tool_calls``."""
    message = reply.message
    if not message.content:
        return reply
    content, calls = parse_tool_call_blocks(message.content, first_id=len(message.tool_calls) + 1)
    if not calls:
        return reply
    message = replace(message, content=content or None, tool_calls=message.tool_calls + calls)
    finish = reply.finish_reason
    return replace(
        reply,
        message=message,
        finish_reason="tool_calls" if finish in (None, "stop") else finish,
    )
