"""The chat-model seam: messages and tool specs in, one assistant reply out.

Every model (the OpenAI-compatible HTTP client, the local llama.cpp model, the response
cache, the embedded offline models, the scripted test model) implements
:class:`ChatModel`, and declares what its callers need to know about it in one
:class:`ModelInfo` record (context window, run budget, cache identity, tool calling,
bundle format, ...): callers read ``model.info``, never probe for attributes. Internal
records are plain dataclasses; they convert to and from the OpenAI wire format, which is
the lingua franca of every server the lab talks to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ..routes import EmissionFormat
from .choices import BundleChoices

__all__ = [
    "CHARS_PER_TOKEN",
    "ChatModel",
    "EmissionFormat",
    "Message",
    "ModelInfo",
    "ModelReply",
    "Role",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "estimate_tokens",
    "estimate_usage",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by a model; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str = "{}"

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class Message:
    """One chat message in OpenAI's shape (``tool`` messages answer one ``tool_call_id``)."""

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to a model: its name, description and JSON schema of arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True)
class Usage:
    """Token usage of one model call (zeros when the server does not report it)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class ModelReply:
    """What one model call returns: the assistant message, usage and why it stopped."""

    message: Message
    usage: Usage = Usage()
    finish_reason: str | None = None
    model: str = ""
    redactions: int = 0
    """How many secret values were removed from the reply at the model boundary (a server
    repeating the request's key); the scout reports them in the run's problems."""
    attempts: int = 1
    """Requests this reply took, retries included (an HTTP model that retried says so; the
    scout's trace shows it)."""


@dataclass(frozen=True)
class ModelInfo:
    """What a model declares about itself, for the callers that adapt to it.

    Every :class:`ChatModel` exposes one as ``info``; the defaults describe a model with
    nothing special to say (a hosted API, the offline models, a scripted test model).
    """

    label: str = ""
    """The name the model is shown and reported by, as the user named it
    (``ollama:qwen2.5``, ``local:smollm2``, ``offline:scout``); the model's ``name``."""
    context_tokens: int | None = None
    """The context window in tokens, when the model knows it: every request is held to it
    (:mod:`.window`; ``None`` is budgeted as a small default window), and the scout asks
    for the envelope early once a conversation fills most of it."""
    run_timeout_s: float | None = None
    """The wall-clock budget one scout run needs on this model when the caller sets none
    (a CPU model needs minutes); ``None`` keeps the scout's default."""
    cache_identity: str = ""
    """What names the answering model in cache keys: the server's address for an HTTP
    model, the model file (path, size, time and content hash) for a local one. Empty for
    a model that runs in this process, whose code is its identity."""
    native_tool_calling: bool = True
    """Whether tools are sent as OpenAI ``tools`` (else through the text protocol)."""
    bundle_format: EmissionFormat = "text"
    """How the final emission is constrained on this model (see :data:`EmissionFormat`)."""
    streams: bool = False
    """Whether replies arrive as a stream (``on_text`` then gets the text as it comes)."""
    local: bool = False
    """Whether the model runs on this machine (a llama.cpp server the lab started)."""
    small: bool = False
    """Whether the model is too small to plan its own tool calls well (local models and
    routes with ``small_model = true``)."""


@runtime_checkable
class ChatModel(Protocol):
    """The one seam every model implements.

    ``tools`` may be empty or ``None`` (no tools offered); ``tool_choice="none"`` asks for
    a text-only answer. ``timeout`` bounds the whole call in seconds when given (the scout
    passes what is left of its wall-clock budget). ``on_text`` receives text deltas as they
    stream; models that do not stream may call it once with the whole text or not at all.
    What a caller needs to know about the model is in :attr:`info`.
    """

    @property
    def name(self) -> str:
        """A display name such as ``offline:scout`` or ``ollama:qwen2.5`` (never a key);
        the same as ``info.label``."""
        ...

    @property
    def info(self) -> ModelInfo:
        """What the model declares about itself (see :class:`ModelInfo`)."""
        ...

    def close(self) -> None:
        """Release what the model holds (an HTTP client it created); idempotent, and a
        no-op for models that hold nothing."""
        ...

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        on_text: Callable[[str], None] | None = None,
        choices: BundleChoices | None = None,
    ) -> ModelReply:
        """Return the model's next assistant message for ``messages``."""
        ...


CHARS_PER_TOKEN = 4
"""The lab's one estimate of tokens: four characters (or bytes of a request body) a
token, about what tokenizers give for English prose and JSON."""


def estimate_tokens(text: str) -> int:
    """A rough token count (:data:`CHARS_PER_TOKEN`, rounded up) for models that do not
    report usage, so traces and evaluations still show plausible figures."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _message_text(message: Message) -> str:
    return (message.content or "") + "".join(c.name + c.arguments for c in message.tool_calls)


def estimate_usage(messages: Sequence[Message], reply: Message) -> Usage:
    """Estimated usage of one call: everything sent, and the reply with its tool calls."""
    prompt = "".join(_message_text(message) for message in messages)
    return Usage(estimate_tokens(prompt), estimate_tokens(_message_text(reply)))
