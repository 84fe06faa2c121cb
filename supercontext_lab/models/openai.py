"""A chat model behind any OpenAI-compatible ``/v1/chat/completions`` server.

One class, :class:`OpenAICompatibleModel`, speaks to Ollama, llama.cpp's ``llama-server``,
vLLM, LM Studio, OpenAI and proxies alike: JSON or SSE streaming, native tools or a
text-based tool protocol for servers without them, explicit timeouts, and retries of
429/5xx/connection failures/timeouts with backoff honouring ``Retry-After``.

It is composed of three helpers it holds: a :class:`~.request.RequestBuilder` (the payload
rules and the bundle format), a :class:`~.replies.ReplyReader` per attempt (a body or a
stream read under the attempt's deadline) and a :class:`~.failures.FailureWording` (what
the user is told, with the address shown without credentials and the call's secrets
masked). What the server returns crosses :mod:`.boundary` before anyone sees it: secret
values removed, text made encodable.

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
from typing import Any, TypeAlias

import httpx

from .._http import model_client
from .._text import strip_userinfo
from ..errors import ConfigError, ModelError
from ..routes import EmissionFormat, ModelRoute
from .base import Message, ModelInfo, ModelReply, ToolSpec
from .boundary import Secrets, TextStream
from .choices import BundleChoices
from .failures import CONNECT_CAP_S, FailureWording, run_attempts
from .fitting import fit_request
from .replies import ReplyReader
from .request import ChatRequest, RequestBuilder
from .wire import message_from_openai, messages_from_openai

__all__ = [
    "OpenAICompatibleModel",
    "UsageCounter",
    "api_key_from_env",
    "checked_base_url",
    "message_from_openai",
    "messages_from_openai",
]

logger = logging.getLogger(__name__)

_FORMATS: tuple[EmissionFormat, ...] = ("extractive", "grammar", "json_schema", "text")


UsageCounter: TypeAlias = Callable[
    [httpx.Client, ModelReply, list[dict[str, Any]], Sequence[Message], float], ModelReply
]
"""Fills in the usage of a reply that came back without it (a local server's stream):
called with the model's client, the reply, the messages as the server received them, the
messages as given, and the ``time.monotonic()`` by which the caller's budget runs out."""


class _HeldKey:
    """A key held in memory (a local server's per-run key); its ``repr`` hides it."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "_HeldKey(***)"


def api_key_from_env(api_key_env: str | None) -> str:
    """The API key in the environment variable ``api_key_env`` now ("" when none is
    named or it is unset); read at call time, never stored. A key that cannot be sent in
    an HTTP header is refused with a message that does not quote it."""
    if api_key_env is None:
        return ""
    key = os.environ.get(api_key_env, "").strip()
    # A header value with control or non-ASCII characters makes httpx raise an error
    # that quotes the value; refuse it here with a message that does not.
    if key and (not key.isascii() or any(ord(c) < 32 or ord(c) == 127 for c in key)):
        raise ModelError(
            f"The API key in the environment variable {api_key_env} contains "
            "characters that cannot be sent in an HTTP header; set it again."
        )
    return key


def checked_base_url(base_url: str) -> str:
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
    return url


def _check_settings(model: str, timeout_s: float, max_retries: int, bundle_format: str) -> None:
    if not isinstance(model, str) or not model.strip():
        raise ConfigError("The model route needs a model name (the 'model' setting).")
    if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and timeout_s > 0):
        raise ConfigError(f"The model timeout_s must be a positive number, not {timeout_s!r}.")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ConfigError(f"max_retries must be a whole number >= 0, not {max_retries!r}.")
    if bundle_format not in _FORMATS:
        raise ConfigError(
            "bundle_format must be 'extractive', 'grammar', 'json_schema' or 'text', "
            f"not {bundle_format!r}."
        )


class OpenAICompatibleModel:
    """A :class:`~supercontext_lab.models.base.ChatModel` over an OpenAI-compatible server.

    ``base_url`` includes the API version (``http://127.0.0.1:11434/v1``); requests go to
    ``base_url + "/chat/completions"``. ``api_key_env`` names the environment variable
    holding the key; with none configured (or the variable unset or empty) no
    ``Authorization`` header is sent. ``timeout_s`` bounds each attempt; the caller's
    ``timeout`` bounds the whole call, retries included. ``client``/``transport`` let tests
    inject an ``httpx.Client`` or ``httpx.MockTransport``; ``sleep`` is the pause between
    retries. A client the model creates itself verifies TLS with
    :func:`~supercontext_lab._http.tls_context`, so creating a model is cheap.
    ``bundle_format`` (``"grammar"``, ``"json_schema"`` or ``"text"``) constrains replies
    to the ``[context_bundle]`` envelope (see :mod:`.bundle_format`); ``"extractive"``
    asks for picks from the run's gathered facts and names and writes the envelope around
    them (see :mod:`.extractive`); only the scout's model sets it. ``retry_timeouts = False`` never sends a timed-out attempt again (a busy
    local server would only queue the copy behind the original); ``display_name``
    replaces ``openai:<model>`` as the model's name.

    The rest configures the helpers for a particular server (the local route uses them):
    ``max_tokens`` caps replies no constraint bounds, ``usage_counter`` fills in usage a
    server does not report, ``api_key`` is a key held in memory instead of read from the
    environment, ``before_request`` runs before each call (and may raise
    :class:`~supercontext_lab.errors.ModelError`), and ``declared`` says what the settings
    cannot: context window, run budget, cache identity, whether the model is local or
    small.

    The settings are attributes for reading (``base_url``, ``model``, ``stream``, ...);
    they are fixed at construction.
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
        max_tokens: int | None = None,
        usage_counter: UsageCounter | None = None,
        api_key: str | None = None,
        before_request: Callable[[], None] | None = None,
        declared: ModelInfo | None = None,
    ) -> None:
        url = checked_base_url(base_url)
        _check_settings(model, timeout_s, max_retries, bundle_format)
        emission: EmissionFormat = next(fmt for fmt in _FORMATS if fmt == bundle_format)
        self.base_url = url
        self.model = model.strip()
        self.api_key_env = api_key_env if api_key_env and api_key_env.strip() else None
        self.timeout_s = float(timeout_s)
        self.stream = stream
        self.native_tool_calling = native_tool_calling
        self.max_retries = max_retries
        self.bundle_format: EmissionFormat = emission
        self.retry_timeouts = retry_timeouts
        self._url = url + "/chat/completions"
        self._requests = RequestBuilder(
            model=self.model,
            native_tool_calling=native_tool_calling,
            stream=stream,
            bundle_format=emission,
            max_tokens=max_tokens,
        )
        self._wording = FailureWording(
            shown_url=strip_userinfo(self._url),
            shown_base=strip_userinfo(url),
            model=self.model,
            api_key_env=self.api_key_env,
            timeout_s=self.timeout_s,
            retry_timeouts=retry_timeouts,
        )
        declared = declared or ModelInfo()
        self._info = replace(
            declared,
            label=display_name or f"openai:{self.model}",
            cache_identity=declared.cache_identity or self._wording.shown_base,
            native_tool_calling=native_tool_calling,
            bundle_format=emission,
            streams=stream,
        )
        self._usage_counter = usage_counter
        self._held_key = _HeldKey(api_key) if api_key else None
        self._before_request = before_request
        self._sleep = sleep
        self._client, self._owns_client = model_client(client, transport)

    @classmethod
    def from_route(
        cls,
        route: ModelRoute,
        *,
        max_retries: int = 3,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        bundle_format: str = "text",
    ) -> OpenAICompatibleModel:
        """Build the model from a ``kind = "openai"`` model route; ``bundle_format`` is the
        resolved format for the scout's role (the route's own value may be ``"auto"``)."""
        if route.kind != "openai":
            raise ConfigError(
                f"A model route of kind {route.kind!r} cannot be served over HTTP; only "
                'kind = "openai" routes can.'
            )
        # A validated route always has both; one built without validation may not.
        if not route.base_url:
            raise ConfigError('A kind = "openai" model route needs a base_url.')
        if not route.model:
            raise ConfigError('A kind = "openai" model route needs a model name.')
        return cls(
            base_url=route.base_url,
            model=route.model,
            api_key_env=route.api_key_env,
            timeout_s=route.timeout_s,
            stream=route.stream,
            native_tool_calling=route.native_tool_calling,
            max_retries=max_retries,
            client=client,
            transport=transport,
            sleep=sleep,
            bundle_format=bundle_format,
            display_name=route.label,
            declared=ModelInfo(
                context_tokens=route.resolved_context_tokens(), small=route.counts_as_small()
            ),
        )

    @property
    def name(self) -> str:
        """``openai:<model>``, or the display name given at construction."""
        return self._info.label

    @property
    def info(self) -> ModelInfo:
        """What the settings declare: tool calling, bundle format, streaming, the server's
        address as cache identity, and what ``declared`` added."""
        return self._info

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self._wording.shown_base!r}, "
            f"model={self.model!r}, api_key_env={self.api_key_env!r}, "
            f"timeout_s={self.timeout_s!r}, stream={self.stream!r}, "
            f"native_tool_calling={self.native_tool_calling!r}, "
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
        choices: BundleChoices | None = None,
    ) -> ModelReply:
        """Ask the server for the next assistant message (see the class docstring)."""
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        if self._before_request is not None:
            self._before_request()
        request = ChatRequest(
            tuple(messages), tuple(tools or ()), tool_choice, temperature, choices
        )
        key = self._api_key()
        secrets = Secrets.in_use(key)
        wording = self._wording.for_call(secrets, has_key=bool(key))
        shown = TextStream(secrets, on_text) if on_text is not None else None
        # Held to the model's window: the oldest history trimmed, then long texts cut.
        request, payload = fit_request(request, self._requests.payload, self._info)
        reply, streamed = self._exchange(
            payload, self._requests.headers(key), wording, deadline, timeout, shown
        )
        if shown is not None:
            shown.flush()
        if reply.usage.total_tokens == 0 and self._usage_counter is not None:
            # Counted on the model's own reply, before shaping: an extractive pick is a
            # few tokens even though the envelope the harness writes from it is not.
            budget_end = math.inf if deadline is None else deadline
            reply = self._usage_counter(
                self._client, reply, payload["messages"], request.messages, budget_end
            )
        reply = secrets.reply(self._requests.shape(reply, request))
        if not streamed and on_text is not None and reply.message.content:
            on_text(reply.message.content)
        return reply

    def _api_key(self) -> str:
        if self._held_key is not None:
            return self._held_key.value
        return api_key_from_env(self.api_key_env)

    def _exchange(
        self,
        payload: dict[str, Any],
        headers: dict[str, str],
        wording: FailureWording,
        deadline: float | None,
        budget: float | None,
        shown: TextStream | None,
    ) -> tuple[ModelReply, bool]:
        """Attempts until one succeeds, retries run out or the budget does."""

        def attempt(retries: int) -> tuple[ModelReply, bool]:
            if deadline is None:
                seconds = self.timeout_s
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    error = wording.no_time_left(budget)
                    error.attempts = retries  # the requests already made, if any
                    raise error
                seconds = min(self.timeout_s, remaining)
            reply, streamed = self._attempt(payload, headers, wording, seconds, shown)
            return replace(reply, attempts=retries + 1), streamed

        return run_attempts(
            attempt,
            max_retries=self.max_retries,
            wording=wording,
            sleep=self._sleep,
            deadline=deadline,
        )

    def _attempt(
        self,
        payload: dict[str, Any],
        headers: dict[str, str],
        wording: FailureWording,
        seconds: float,
        shown: TextStream | None,
    ) -> tuple[ModelReply, bool]:
        """One request: the reply, and whether it was streamed."""
        limits = httpx.Timeout(
            connect=min(CONNECT_CAP_S, seconds), read=seconds, write=seconds, pool=seconds
        )
        reader = ReplyReader(wording, self.model, time.monotonic() + seconds, seconds)
        try:
            with self._client.stream(
                "POST", self._url, json=payload, headers=headers, timeout=limits
            ) as response:
                if not response.is_success:
                    body = reader.body(response)
                    raise wording.status(response.status_code, response.headers, body)
                kind = response.headers.get("content-type", "").lower()
                if self.stream and "json" not in kind:
                    return reader.stream(response, shown.feed if shown else None), True
                body = reader.body(response)
                status = response.status_code
        except httpx.TimeoutException as exc:
            raise wording.timeout(seconds) from exc
        except httpx.RequestError as exc:
            raise wording.transport(exc) from wording.secrets.unquoted(exc)
        return reader.completion(body, status), False
