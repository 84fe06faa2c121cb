"""A model's context window: the one place the budget of what it is sent is computed.

Every route declares its window on :attr:`~.base.ModelInfo.context_tokens` when it can
know it: a ``kind = "local"`` route reads it from its GGUF file (the context length the
model was trained on, at most :data:`~.local_server.LOCAL_CONTEXT_TOKENS`, which is what
its server is started with); an OpenAI-compatible route takes the ``context_tokens``
setting of its ``[models.*]`` table, or the known window of its provider
(:meth:`~supercontext_lab.routes.ModelRoute.resolved_context_tokens`); the offline models
declare their own (:data:`~.offline.common.OFFLINE_CONTEXT_TOKENS`). A model that
declares none is budgeted as if its window were :data:`DEFAULT_CONTEXT_TOKENS`, small
enough for any server the lab is likely to meet.

The estimate is :data:`~.base.CHARS_PER_TOKEN`: one token per four bytes of the request
as it is sent (compact JSON, UTF-8), everything counted: the messages, the tool schemas,
a grammar or a JSON schema, the JSON syntax around them. It overestimates prose in
English (about four characters a token) and JSON syntax, which is the safe side. The reply
keeps its room: the request's ``max_tokens`` when it sets one, else
:data:`DEFAULT_REPLY_TOKENS`, and never more than a quarter of the window.

The scout cuts each round's tool results to a share of the room left
(:meth:`ContextBudget.round_room`, :data:`ROUND_SHARE`); the OpenAI-compatible client holds
every request it sends to the budget (:mod:`.fitting`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._json import to_json
from .base import CHARS_PER_TOKEN, Message, ModelInfo, ToolSpec

__all__ = [
    "DEFAULT_CONTEXT_TOKENS",
    "DEFAULT_REPLY_TOKENS",
    "MIN_RESULT_BYTES",
    "ROUND_SHARE",
    "ContextBudget",
    "conversation_bytes",
    "payload_bytes",
    "tokens_in",
]

DEFAULT_CONTEXT_TOKENS = 8192
"""The window assumed for a model that declares none: SmolLM2's and Llama 3's, and more
than the 2,048 or 4,096 tokens some servers are started with only when they say so."""

DEFAULT_REPLY_TOKENS = 1024
"""Room kept for the reply when the request sets no ``max_tokens``: an envelope of
``max_result_chars`` (4,000 characters by default) is about a thousand tokens."""

ROUND_SHARE = 0.5
"""Share of the room left that one round of the scout's tool results may take: the next
round, and the envelope the scout is asked for once the window is more than half full
(:data:`~supercontext_lab.scout.loop.CONTEXT_WRAP_UP_SHARE`), still fit."""

MIN_RESULT_BYTES = 1_000
"""A tool result is never cut below this: the model always sees something of what it
asked for (the client's own check still holds the request to the window)."""


def payload_bytes(payload: Mapping[str, Any]) -> int:
    """The size of a request body in bytes, as httpx sends it (compact JSON, UTF-8)."""
    return len(to_json(payload).encode("utf-8"))


def tokens_in(size: int) -> int:
    """The estimated tokens of ``size`` bytes of a request (rounded up)."""
    return -(-size // CHARS_PER_TOKEN)


def conversation_bytes(messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
    """What ``messages`` and ``tools`` weigh in a request body, in bytes: the scout's
    estimate of a request it has not built yet."""
    body = {
        "messages": [message.to_openai() for message in messages],
        "tools": [tool.to_openai() for tool in tools],
    }
    return payload_bytes(body)


@dataclass(frozen=True)
class ContextBudget:
    """How much one request to a model may carry: its window less the reply's room."""

    window: int
    """The model's context window in tokens (declared, or :data:`DEFAULT_CONTEXT_TOKENS`)."""
    reply: int
    """Tokens kept for the reply."""
    declared: bool = True
    """Whether the model declared its window (else it is :data:`DEFAULT_CONTEXT_TOKENS`,
    assumed)."""

    @classmethod
    def of(cls, info: ModelInfo, reply_tokens: int | None = None) -> ContextBudget:
        """The budget of a request to the model ``info`` describes; ``reply_tokens`` is the
        request's ``max_tokens`` when it sets one (see the module docstring)."""
        declared = info.context_tokens is not None and info.context_tokens > 0
        window = info.context_tokens if info.context_tokens and declared else DEFAULT_CONTEXT_TOKENS
        wanted = reply_tokens if reply_tokens is not None and reply_tokens > 0 else None
        return cls(window, min(wanted or DEFAULT_REPLY_TOKENS, window // 4), declared)

    @property
    def prompt_tokens(self) -> int:
        """Tokens the request itself may take."""
        return self.window - self.reply

    @property
    def prompt_bytes(self) -> int:
        """Bytes the request body may take (:data:`~.base.CHARS_PER_TOKEN` a token)."""
        return self.prompt_tokens * CHARS_PER_TOKEN

    def round_room(self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
        """Bytes one round of tool results may take after ``messages`` (the conversation
        so far, the call that asked for them included) with ``tools`` offered:
        :data:`ROUND_SHARE` of what is left."""
        left = self.prompt_bytes - conversation_bytes(messages, tools)
        return max(int(left * ROUND_SHARE), 0)
