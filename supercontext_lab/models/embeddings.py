"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint, and the configured one.

:class:`OpenAIEmbeddings` posts ``{"model", "input": [...]}`` to ``base_url +
"/embeddings"`` (OpenAI, llama.cpp's ``llama-server --embeddings``, Ollama, vLLM, LM
Studio) and reads ``data[i].embedding`` back. It follows the chat client's conventions
(:mod:`.openai`): the API key is read from the environment at call time and sent only in
the ``Authorization`` header, never stored, logged or quoted (a server that echoes it has
it masked in every message); each attempt is bounded by ``timeout_s``; 429, 5xx,
connection failures and timeouts are retried with the same backoff, honouring
``Retry-After``; the body is read up to :data:`MAX_REPLY_BYTES`.

:func:`configured_embedder` is the embedder ``[memory] semantic`` in config.toml names
(``"off"`` by default: memory recall is BM25 alone), see its docstring.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import httpx

from .._bounded import json_loads
from .._http import model_client, read_body
from .._text import strip_userinfo
from .._version import __version__
from ..config import get_setting
from ..errors import ConfigError, ModelError
from ..routes import ModelRoute, get_model_route, parse_model_id
from .boundary import Secrets
from .failures import CONNECT_CAP_S, FailureWording, run_attempts
from .openai import api_key_from_env, checked_base_url

__all__ = [
    "EMBEDDINGS_HINT",
    "MAX_REPLY_BYTES",
    "SEMANTIC_SETTING",
    "OpenAIEmbeddings",
    "configured_embedder",
]

if TYPE_CHECKING:
    from .minilm import MiniLMEmbeddings

logger = logging.getLogger(__name__)

SEMANTIC_SETTING = "memory.semantic"
"""The config.toml key choosing semantic recall: ``off``, ``minilm``, ``openai`` or a
``provider:model`` id."""
EMBEDDINGS_HINT = "embeddings"
"""The model hint whose route (``[models.embeddings]``) ``semantic = "openai"`` uses."""
MAX_REPLY_BYTES = 32 * 1024 * 1024
"""The largest embeddings reply read (64 texts of 3,072 numbers are about 4 MB)."""
MAX_TEXTS_PER_REQUEST = 64
"""Longer lists are sent in several requests."""


class OpenAIEmbeddings:
    """An :class:`~supercontext_lab.sources.memory.embedder.Embedder` over an
    OpenAI-compatible ``/v1/embeddings`` endpoint (see the module docstring).

    ``dimensions`` is sent as the request's ``dimensions`` (models that can shorten their
    vectors); without it the dimension is learned from the first reply. ``client`` /
    ``transport`` let tests inject an ``httpx.Client`` or a mock transport; ``sleep`` is
    the pause between retries.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        dimensions: int | None = None,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        url = checked_base_url(base_url)
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("The embeddings route needs a model name (the 'model' setting).")
        if not (isinstance(timeout_s, int | float) and 0 < timeout_s < float("inf")):
            raise ConfigError(f"timeout_s must be a positive number, not {timeout_s!r}.")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"max_retries must be a whole number >= 0, not {max_retries!r}.")
        if dimensions is not None and (isinstance(dimensions, bool) or dimensions < 1):
            raise ConfigError(f"dimensions must be a positive integer, not {dimensions!r}.")
        self.base_url = url
        self.model = model.strip()
        self.api_key_env = api_key_env if api_key_env and api_key_env.strip() else None
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self._dimensions = dimensions
        self._learned: int | None = None
        self._url = url + "/embeddings"
        self._wording = FailureWording(
            shown_url=strip_userinfo(self._url),
            shown_base=strip_userinfo(url),
            model=self.model,
            api_key_env=self.api_key_env,
            timeout_s=self.timeout_s,
            retry_timeouts=True,
        )
        self._sleep = sleep
        self._client, self._owns_client = model_client(client, transport)

    @classmethod
    def from_route(cls, route: ModelRoute) -> OpenAIEmbeddings:
        """The embedder of a ``kind = "openai"`` route (``[models.embeddings]``)."""
        if route.kind != "openai" or not route.base_url or not route.model:
            raise ConfigError(
                'Semantic recall over an endpoint needs a kind = "openai" route with a '
                f"base_url and a model in [models.{EMBEDDINGS_HINT}] (found kind {route.kind!r})."
            )
        return cls(
            base_url=route.base_url,
            model=route.model,
            api_key_env=route.api_key_env,
            timeout_s=route.timeout_s,
        )

    @property
    def identity(self) -> str:
        """``openai:<base url>:<model>:<dimensions>`` (the address without credentials)."""
        return f"openai:{self._wording.shown_base}:{self.model}:{self._dimensions or 'native'}"

    @property
    def dimension(self) -> int | None:
        """The configured ``dimensions``, else what the first reply said, else ``None``."""
        return self._dimensions or self._learned

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbeddings(base_url={self._wording.shown_base!r}, model={self.model!r}, "
            f"api_key_env={self.api_key_env!r})"
        )

    def close(self) -> None:
        """Close the HTTP client when this embedder created it."""
        if self._owns_client:
            self._client.close()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (several requests for more than
        :data:`MAX_TEXTS_PER_REQUEST`); :class:`ModelError` when the server cannot be
        used, naming it without credentials and never quoting the key."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), MAX_TEXTS_PER_REQUEST):
            vectors.extend(self._request(list(texts[start : start + MAX_TEXTS_PER_REQUEST])))
        return vectors

    def _request(self, texts: list[str]) -> list[list[float]]:
        key = api_key_from_env(self.api_key_env)
        wording = self._wording.for_call(Secrets.in_use(key), has_key=bool(key))
        headers = {"Accept": "application/json", "User-Agent": f"supercontext-lab/{__version__}"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        payload: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._dimensions is not None:
            payload["dimensions"] = self._dimensions
        return run_attempts(
            lambda _retries: self._attempt(payload, headers, wording, len(texts)),
            max_retries=self.max_retries,
            wording=wording,
            sleep=self._sleep,
        )

    def _attempt(
        self, payload: dict[str, Any], headers: dict[str, str], wording: FailureWording, count: int
    ) -> list[list[float]]:
        seconds = self.timeout_s
        limits = httpx.Timeout(
            connect=min(CONNECT_CAP_S, seconds), read=seconds, write=seconds, pool=seconds
        )
        ends = time.monotonic() + seconds
        try:
            with self._client.stream(
                "POST", self._url, json=payload, headers=headers, timeout=limits
            ) as response:
                body, more = read_body(
                    response,
                    deadline=ends,
                    on_deadline=lambda: wording.timeout(seconds),
                    max_bytes=MAX_REPLY_BYTES,
                )
                if not response.is_success:
                    raise wording.status(response.status_code, response.headers, body)
                status = response.status_code
        except httpx.TimeoutException as exc:
            raise wording.timeout(seconds) from exc
        except httpx.RequestError as exc:
            raise wording.transport(exc) from wording.secrets.unquoted(exc)
        if more:
            raise wording.unusable_reply(
                status, f"a body larger than {MAX_REPLY_BYTES} bytes", body[:200]
            )
        return self._vectors(body, status, wording, count)

    def _vectors(
        self, body: bytes, status: int, wording: FailureWording, count: int
    ) -> list[list[float]]:
        try:
            data = json_loads(body)
        except ValueError as exc:
            raise wording.unusable_reply(status, "a body that is not JSON", body) from exc
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != count:
            raise wording.unusable_reply(
                status, f"no 'data' list of {count} embeddings", body
            ) from None
        by_index: dict[int, list[float]] = {}
        for position, item in enumerate(items):
            vector = item.get("embedding") if isinstance(item, dict) else None
            index = item.get("index", position) if isinstance(item, dict) else position
            if (
                not isinstance(vector, list)
                or isinstance(index, bool)
                or not isinstance(index, int)
                or not 0 <= index < count
                or index in by_index
            ):
                raise wording.unusable_reply(
                    status, "an item without an embedding list or with a wrong index", body
                ) from None
            by_index[index] = vector
        vectors = [by_index[i] for i in range(count)]
        size = len(vectors[0]) if vectors else 0
        if any(len(v) != size for v in vectors) or (
            self._dimensions is not None and size != self._dimensions
        ):
            raise ModelError(
                f"The embeddings server at {wording.shown_url} returned vectors of "
                f"different lengths (expected {self._dimensions or size})."
            )
        if size and self._learned is None:
            self._learned = size
        return vectors


ConfiguredEmbedder: TypeAlias = "OpenAIEmbeddings | MiniLMEmbeddings"
_EMBEDDERS: dict[object, ConfiguredEmbedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def configured_embedder() -> ConfiguredEmbedder | None:
    """The embedder ``[memory] semantic`` names in config.toml, or ``None`` for ``"off"``
    (the default): ``"minilm"`` (all-MiniLM-L6-v2 on this machine, the ``semantic``
    extra, :mod:`.minilm`), ``"openai"`` (the OpenAI-compatible endpoint of the
    ``[models.embeddings]`` route) or a ``provider:model`` id such as
    ``"ollama:nomic-embed-text"`` or ``"llamacpp:all-minilm"`` (the provider's usual local
    address). One embedder per setting is kept for the process, so a model loads once.
    Raises :class:`ConfigError` for any other value or a route that is not ``openai``.
    """
    value = get_setting(SEMANTIC_SETTING, "off").strip()
    lowered = value.lower()
    if lowered in ("", "off", "none", "false"):
        return None
    if lowered == "minilm":
        from .minilm import MiniLMEmbeddings

        key: object = "minilm"
        factory: Callable[[], ConfiguredEmbedder] = MiniLMEmbeddings
    else:
        if lowered == "openai":
            route = get_model_route(EMBEDDINGS_HINT)
        elif ":" in value:
            route = parse_model_id(value)
        else:
            raise ConfigError(
                f"[memory] semantic = {value!r} is not a choice; use 'off', 'minilm', "
                f"'openai' (the [models.{EMBEDDINGS_HINT}] route) or a provider:model id "
                "such as 'ollama:nomic-embed-text'."
            )
        key = route
        factory = functools.partial(OpenAIEmbeddings.from_route, route)
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get(key)
        if embedder is None:
            embedder = _EMBEDDERS[key] = factory()
        return embedder
