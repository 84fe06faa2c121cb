"""The server side of the OpenAI chat-completions wire format, for the test server.

Rendering replies as ``chat.completion`` JSON or as SSE chunks, and reading the ``tools``
a client sends, is what a server does; the lab itself is only ever the client
(:mod:`supercontext_lab.models.wire`).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any

from ..errors import ModelError
from ..models.base import ModelReply, ToolSpec, Usage

__all__ = ["reply_to_openai", "reply_to_sse_chunks", "tools_from_openai"]


def tools_from_openai(items: Any) -> list[ToolSpec]:
    """Build tool specs from an OpenAI ``tools`` list (``None`` gives an empty list)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise ModelError("'tools' that is not a list")
    specs: list[ToolSpec] = []
    for index, item in enumerate(items):
        function = item.get("function") if isinstance(item, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(name, str) or not name:
            raise ModelError(f"a tool without a function name (tools[{index}])")
        description = function.get("description")
        parameters = function.get("parameters")
        specs.append(
            ToolSpec(
                name=name,
                description=description if isinstance(description, str) else "",
                parameters=dict(parameters)
                if isinstance(parameters, Mapping)
                else {"type": "object", "properties": {}},
            )
        )
    return specs


def _finish_reason(reply: ModelReply) -> str:
    if reply.finish_reason:
        return reply.finish_reason
    return "tool_calls" if reply.message.tool_calls else "stop"


def _usage_json(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }


def reply_to_openai(reply: ModelReply, model: str) -> dict[str, Any]:
    """Render a reply as a ``chat.completion`` JSON object."""
    message = reply.message.to_openai()
    message["role"] = "assistant"
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": _usage_json(reply.usage),
    }


def _split_in_pieces(text: str, count: int) -> list[str]:
    """``text`` cut in at most ``count`` non-empty pieces of similar length."""
    if not text:
        return []
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def reply_to_sse_chunks(reply: ModelReply, model: str) -> list[str]:
    """Render a reply as the ``data: …`` lines of a streamed completion.

    The text arrives word by word; each tool call's id and name come first and its
    arguments in several pieces, interleaved across calls (as parallel calls do on real
    servers), so a client must join them by ``index``. A final chunk carries the usage,
    then ``data: [DONE]``.
    """
    ident = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return "data: " + json.dumps(body, ensure_ascii=False)

    lines = [chunk({"role": "assistant", "content": ""})]
    for word in re.findall(r"\S+\s*|\s+", reply.message.content or ""):
        lines.append(chunk({"content": word}))
    calls = reply.message.tool_calls
    for index, call in enumerate(calls):
        head = {"name": call.name, "arguments": ""}
        lines.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call.id, "type": "function", "function": head}
                    ]
                }
            )
        )
    pieces = [_split_in_pieces(call.arguments, 3) for call in calls]
    for round_ in range(max((len(p) for p in pieces), default=0)):
        for index, parts in enumerate(pieces):
            if round_ < len(parts):
                delta = {"index": index, "function": {"arguments": parts[round_]}}
                lines.append(chunk({"tool_calls": [delta]}))
    lines.append(chunk({}, _finish_reason(reply)))
    usage_chunk = {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": _usage_json(reply.usage),
    }
    lines.append("data: " + json.dumps(usage_chunk))
    lines.append("data: [DONE]")
    return lines
