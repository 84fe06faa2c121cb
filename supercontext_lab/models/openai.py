"""A chat model behind any OpenAI-compatible ``/v1/chat/completions`` server.

One class, :class:`OpenAICompatibleModel`, speaks to Ollama, llama.cpp's ``llama-server``,
vLLM, LM Studio, OpenAI and proxies alike: JSON or SSE streaming, native tools or a
text-based tool protocol for servers without them, explicit timeouts, and retries of
429/5xx/connection failures/timeouts with backoff honouring ``Retry-After``.

The API key is read from the environment at call time, sent only in the
``Authorization`` header, and never stored, logged, shown or put in an error message.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import httpx

from .._http import tls_context
from .._text import strip_userinfo
from .._version import __version__
from ..errors import ConfigError, ModelError, ModelTimeoutError
from .base import Message, ModelReply, ToolSpec
from .bundle_format import apply_bundle_format, envelope_from_json
from .failures import (
    CONNECT_CAP_S,
    AttemptFailure,
    backoff_seconds,
)
from .replies import ReplyReading
from .wire import (
    excerpt,
    message_from_openai,
    messages_for_text_tools,
    messages_from_openai,
    with_text_tool_calls,
)

__all__ = [
    "OpenAICompatibleModel",
    "message_from_openai",
    "messages_from_openai",
]

logger = logging.getLogger(__name__)


class OpenAICompatibleModel(ReplyReading):
    """A :class:`~supercontext_lab.models.base.ChatModel` over an OpenAI-compatible server.

    ``base_url`` includes the API version (``http://127.0.0.1:11434/v1``); requests go to
    ``base_url + "/chat/completions"``. ``api_key_env`` names the environment variable
    holding the key; with none configured (or the variable unset or empty) no
    ``Authorization`` header is sent. ``timeout_s`` bounds each attempt; the caller's
    ``timeout`` bounds the whole call, retries included. ``client``/``transport`` let tests
    inject an ``httpx.Client`` or ``httpx.MockTransport``; ``sleep`` is the pause between
    retries. A client the model creates itself verifies TLS with :func:`~supercontext_lab._http.tls_context`,
    so creating a model is cheap. ``bundle_format`` (``"grammar"``, ``"json_schema"`` or
    ``"text"``) constrains replies to the ``[context_bundle]`` envelope (see
    :mod:`.grammar`); only the scout's model sets it. ``retry_timeouts = False`` never sends
    a timed-out attempt again (a busy local server would only queue the copy behind the
    original); ``display_name`` replaces ``openai:<model>`` as the model's name.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        timeout_s: float = 60.0,
        stream: bool = False,
        native_tool_calling: bool = True,
        max_retries: int = 3,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        bundle_format: str = "text",
        retry_timeouts: bool = True,
        display_name: str | None = None,
    ) -> None:
        url = (base_url or "").strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ConfigError(
                f"The model base_url {strip_userinfo(url)!r} is not an http(s) URL; use "
                "one such as http://127.0.0.1:11434/v1."
            )
        try:
            httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise ConfigError(
                f"The model base_url {strip_userinfo(url)!r} is not a valid URL ({exc})."
            ) from exc
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("The model route needs a model name (the 'model' setting).")
        if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s > 0):
            raise ConfigError(f"The model timeout_s must be a positive number, not {timeout_s!r}.")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be a whole number >= 0, not {max_retries!r}.")
        if api_key_env is not None and not api_key_env.strip():
            api_key_env = None
        if bundle_format not in ("grammar", "json_schema", "text"):
            raise ConfigError(
                f"bundle_format must be 'grammar', 'json_schema' or 'text', not {bundle_format!r}."
            )
        self.bundle_format = bundle_format
        self.retry_timeouts = retry_timeouts
        self._display_name = display_name
        self.base_url = url
        self.model = model.strip()
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.stream = stream
        self.native_tool_calling = native_tool_calling
        self.max_retries = max_retries
        self._url = url + "/chat/completions"
        self._shown_base = strip_userinfo(url)
        self._shown_url = strip_userinfo(self._url)
        self._sleep = sleep
        self._owns_client = client is None
        if client is not None:
            self._client = client
        elif transport is not None:
            self._client = httpx.Client(transport=transport)
        else:
            self._client = httpx.Client(verify=tls_context())

    @classmethod
    def from_route(
        cls,
        route: object,
        *,
        max_retries: int = 3,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        bundle_format: str = "text",
    ) -> OpenAICompatibleModel:
        """Build the model from a model route (``kind = "openai"``, ``base_url``, ``model``,
        ``api_key_env``, ``timeout_s``, ``native_tool_calling``, ``stream``); ``bundle_format`` is
        the resolved format for the scout's role (the route's own value may be ``"auto"``)."""
        kind = getattr(route, "kind", "openai")
        kind = getattr(kind, "value", kind)
        if kind != "openai":
            raise ConfigError(
                f"A model route of kind {kind!r} cannot be served over HTTP; only "
                'kind = "openai" routes can.'
            )
        base_url = getattr(route, "base_url", None)
        model = getattr(route, "model", None)
        if not isinstance(base_url, str) or not base_url.strip():
            raise ConfigError('A kind = "openai" model route needs a base_url.')
        if not isinstance(model, str) or not model.strip():
            raise ConfigError('A kind = "openai" model route needs a model name.')
        timeout_s = getattr(route, "timeout_s", None)
        return cls(
            base_url=base_url,
            model=model,
            api_key_env=getattr(route, "api_key_env", None),
            timeout_s=60.0 if timeout_s is None else timeout_s,
            stream=bool(getattr(route, "stream", False)),
            native_tool_calling=bool(getattr(route, "native_tool_calling", True)),
            max_retries=max_retries,
            client=client,
            transport=transport,
            sleep=sleep,
            bundle_format=bundle_format,
        )

    @property
    def name(self) -> str:
        """``openai:<model>``, or the display name given at construction."""
        return self._display_name or f"openai:{self.model}"

    def __repr__(self) -> str:
        return (
            f"OpenAICompatibleModel(base_url={self._shown_base!r}, model={self.model!r}, "
            f"api_key_env={self.api_key_env!r}, timeout_s={self.timeout_s!r}, "
            f"stream={self.stream!r}, native_tool_calling={self.native_tool_calling!r}, "
            f"bundle_format={self.bundle_format!r})"
        )

    def close(self) -> None:
        """Close the HTTP client when this model created it."""
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> OpenAICompatibleModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- one call --------------------------------------------------------------------

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
        """Ask the server for the next assistant message (see the class docstring)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        offered = list(tools or ())
        text_tools = bool(offered) and not self.native_tool_calling and tool_choice != "none"
        payload = self._payload(messages, offered, tool_choice, temperature)
        key = self._api_key()
        headers = {
            "Accept": "text/event-stream" if self.stream else "application/json",
            "User-Agent": f"supercontext-lab/{__version__}",
        }
        if key:
            headers["Authorization"] = f"Bearer {key}"
        retries = 0
        while True:
            seconds = self._attempt_seconds(deadline, timeout)
            try:
                reply, streamed = self._attempt(payload, headers, seconds, on_text, key)
            except AttemptFailure as failure:
                if not failure.retryable or retries >= self.max_retries:
                    raise failure.error(retries + 1) from failure.__cause__
                delay = failure.retry_after
                if delay is None:
                    delay = backoff_seconds(retries)
                if deadline is not None and time.monotonic() + delay >= deadline:
                    raise failure.error(retries + 1, out_of_budget=True) from failure.__cause__
                retries += 1
                logger.info(
                    "Retrying %s in %.2f s (retry %d of %d): %s",
                    self._shown_url,
                    delay,
                    retries,
                    self.max_retries,
                    failure.what,
                )
                self._sleep(delay)
                continue
            return self._finish(reply, streamed, text_tools, on_text)

    def _payload(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        tool_choice: str | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        if self.native_tool_calling:
            wire_messages = list(messages)
        else:
            catalogue = tools if tool_choice != "none" else ()
            wire_messages = messages_for_text_tools(messages, catalogue, tool_choice)
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [message.to_openai() for message in wire_messages],
        }
        if temperature is not None:
            payload["temperature"] = temperature
        if tools and self.native_tool_calling:
            payload["tools"] = [tool.to_openai() for tool in tools]
            if tool_choice in (None, "auto", "none", "required"):
                payload["tool_choice"] = tool_choice or "auto"
            else:
                # Any other string names the one tool the model must call.
                payload["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
        if self.stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        if self.bundle_format != "text":
            callable_tools = [tool.name for tool in tools] if tool_choice != "none" else []
            apply_bundle_format(
                payload,
                self.bundle_format,
                callable_tools=callable_tools,
                text_tools=not self.native_tool_calling,
            )
        return payload

    def _api_key(self) -> str:
        if self.api_key_env is None:
            return ""
        key = os.environ.get(self.api_key_env, "").strip()
        # A header value with control or non-ASCII characters makes httpx raise an error
        # that quotes the value; refuse it here with a message that does not.
        if key and (not key.isascii() or any(ord(c) < 32 or ord(c) == 127 for c in key)):
            raise ModelError(
                f"The API key in the environment variable {self.api_key_env} contains "
                "characters that cannot be sent in an HTTP header; set it again."
            )
        return key

    def _attempt_seconds(self, deadline: float | None, budget: float | None) -> float:
        if deadline is None:
            return self.timeout_s
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ModelTimeoutError(
                f"No time was left in the call's {budget or 0:g} s budget to ask the model "
                f"server at {self._shown_url}; allow the run more time."
            )
        return min(self.timeout_s, remaining)

    def _attempt(
        self,
        payload: dict[str, Any],
        headers: dict[str, str],
        seconds: float,
        on_text: Callable[[str], None] | None,
        key: str,
    ) -> tuple[ModelReply, bool]:
        limits = httpx.Timeout(
            connect=min(CONNECT_CAP_S, seconds), read=seconds, write=seconds, pool=seconds
        )
        ends = time.monotonic() + seconds
        try:
            with self._client.stream(
                "POST", self._url, json=payload, headers=headers, timeout=limits
            ) as response:
                if not response.is_success:
                    body = self._read_body(response, ends, seconds)
                    raise self._status_failure(response.status_code, response.headers, body, key)
                kind = response.headers.get("content-type", "").lower()
                if self.stream and "json" not in kind:
                    return self._read_stream(response, ends, seconds, on_text, key), True
                body = self._read_body(response, ends, seconds)
                status = response.status_code
        except httpx.TimeoutException as exc:
            raise self._timeout_failure(seconds) from exc
        except httpx.ConnectError as exc:
            raise AttemptFailure(
                f"Cannot reach the model server at {self._shown_base} "
                f"({excerpt(str(exc) or type(exc).__name__, secret=key)})",
                f"Is the server running at {self._shown_base}?",
                retryable=True,
            ) from exc
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise AttemptFailure(
                f"The connection to the model server at {self._shown_url} failed "
                f"({type(exc).__name__}: {excerpt(str(exc), secret=key)})",
                f"Is the server running at {self._shown_base}?",
                retryable=True,
            ) from exc
        except (httpx.DecodingError, httpx.TooManyRedirects) as exc:
            # Not transport failures, so not covered above: a body whose Content-Encoding
            # lies (gzip over plain text) must end the call as a model error, not escape
            # as an httpx exception that no caller expects. Retrying would get it again.
            raise ModelError(
                f"The model server at {self._shown_url} sent a response that cannot be read "
                f"({type(exc).__name__}: {excerpt(str(exc), secret=key)}). Check that "
                f"{self._shown_base} is an OpenAI-compatible API."
            ) from exc
        except httpx.TransportError as exc:
            raise ModelError(
                f"The request to the model server at {self._shown_url} failed "
                f"({type(exc).__name__}: {excerpt(str(exc), secret=key)}). Check the "
                "base_url and any proxy settings."
            ) from exc
        return self._parse_completion(body, status, key), False

    def _finish(
        self,
        reply: ModelReply,
        streamed: bool,
        text_tools: bool,
        on_text: Callable[[str], None] | None,
    ) -> ModelReply:
        message = reply.message
        if self.bundle_format == "json_schema" and message.content and not message.tool_calls:
            envelope = envelope_from_json(message.content)
            if envelope is not None:
                reply = replace(reply, message=replace(message, content=envelope))
        if text_tools:
            reply = with_text_tool_calls(reply)
        if not streamed and on_text is not None and reply.message.content:
            on_text(reply.message.content)
        return reply
