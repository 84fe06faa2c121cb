"""What an OpenAI-compatible model sends, and how its rules shape the reply that comes back.

A :class:`ChatRequest` is one call's input (messages, tools, tool choice, temperature);
a :class:`RequestBuilder` holds one model's payload rules (native or text-protocol tools,
streaming, the bundle format in use, a ``max_tokens`` cap) and turns a request into the
JSON payload in one piece, :meth:`RequestBuilder.payload`. The same rules shape the reply
(:meth:`RequestBuilder.shape`): a JSON-schema emission is rendered back into the
envelope, and ``<tool_call>`` blocks become tool calls for text-protocol servers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._version import __version__
from ..routes import EmissionFormat
from .base import Message, ModelReply, ToolSpec
from .bundle_format import apply_bundle_format, envelope_from_json
from .choices import BundleChoices
from .extractive import (
    EXTRACTIVE_MAX_TOKENS,
    envelope_from_picks,
    extractive_grammar,
    extractive_messages,
)
from .wire import messages_for_text_tools, with_text_tool_calls

__all__ = ["ChatRequest", "RequestBuilder"]


@dataclass(frozen=True)
class ChatRequest:
    """One call's input, as the caller of ``complete`` gave it."""

    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    tool_choice: str | None = None
    temperature: float | None = None
    choices: BundleChoices | None = None
    """What a constrained emission may choose from (see :mod:`.choices`)."""

    @property
    def callable_tools(self) -> list[str]:
        """The names of the tools the model may call in this reply."""
        return [] if self.tool_choice == "none" else [tool.name for tool in self.tools]


@dataclass(frozen=True)
class RequestBuilder:
    """One model's payload rules.

    ``max_tokens`` caps a reply that no constraint bounds (a local model's free text);
    ``None`` sends no cap unless the bundle format sets its own.
    """

    model: str
    native_tool_calling: bool = True
    stream: bool = False
    bundle_format: EmissionFormat = "text"
    max_tokens: int | None = None

    def picks_from(self, request: ChatRequest) -> BundleChoices | None:
        """What this call picks from when it is an extractive pick (see :mod:`.extractive`):
        the format is ``"extractive"`` and the caller said what may be picked."""
        return request.choices if self.bundle_format == "extractive" else None

    def text_tools(self, request: ChatRequest) -> bool:
        """Whether this call's tools travel through the text protocol."""
        return (
            bool(request.tools)
            and not self.native_tool_calling
            and request.tool_choice != "none"
            and self.picks_from(request) is None
        )

    def wire_messages(self, request: ChatRequest) -> list[Message]:
        """The messages as the server receives them (rewritten for text-protocol tools,
        replaced by the short pick prompt for an extractive call)."""
        picks = self.picks_from(request)
        if picks is not None:
            return extractive_messages(picks)
        if self.native_tool_calling:
            return list(request.messages)
        catalogue = request.tools if request.tool_choice != "none" else ()
        return messages_for_text_tools(request.messages, catalogue, request.tool_choice)

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions JSON body of ``request``."""
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [message.to_openai() for message in self.wire_messages(request)],
        }
        if request.temperature is not None:
            payload["temperature"] = request.temperature
        picks = self.picks_from(request)
        if picks is not None:
            # The model picks from what was gathered; it is offered no tools to call.
            payload["grammar"] = extractive_grammar(picks)
            payload["max_tokens"] = EXTRACTIVE_MAX_TOKENS
            if self.stream:
                payload["stream"] = True
                payload["stream_options"] = {"include_usage": True}
            return payload
        if request.tools and self.native_tool_calling:
            payload["tools"] = [tool.to_openai() for tool in request.tools]
            payload["tool_choice"] = _tool_choice(request.tool_choice)
        if self.stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        if self.bundle_format in ("grammar", "json_schema"):
            apply_bundle_format(
                payload,
                self.bundle_format,
                callable_tools=request.callable_tools,
                text_tools=not self.native_tool_calling,
                choices=request.choices,
            )
        if self.max_tokens is not None:
            payload.setdefault("max_tokens", self.max_tokens)
        return payload

    def headers(self, key: str) -> dict[str, str]:
        """The request headers; ``Authorization`` only with a key."""
        headers = {
            "Accept": "text/event-stream" if self.stream else "application/json",
            "User-Agent": f"supercontext-lab/{__version__}",
        }
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def shape(self, reply: ModelReply, request: ChatRequest) -> ModelReply:
        """``reply`` as these rules read it: a JSON-schema emission rendered back into the
        envelope, ``<tool_call>`` blocks turned into tool calls for text-protocol tools."""
        message = reply.message
        picks = self.picks_from(request)
        if picks is not None:
            envelope = envelope_from_picks(message.content or "", picks)
            if envelope is not None:
                reply = replace(reply, message=replace(message, content=envelope, tool_calls=()))
            return reply
        if self.bundle_format == "json_schema" and message.content and not message.tool_calls:
            envelope = envelope_from_json(message.content, request.choices)
            if envelope is not None:
                reply = replace(reply, message=replace(message, content=envelope))
        if self.text_tools(request):
            reply = with_text_tool_calls(reply)
        return reply


def _tool_choice(choice: str | None) -> str | dict[str, Any]:
    if choice in (None, "auto", "none", "required"):
        return choice or "auto"
    # Any other string names the one tool the model must call.
    return {"type": "function", "function": {"name": choice}}
