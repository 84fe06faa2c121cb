"""A response cache for chat models: an unchanged rerun costs nothing.

:class:`CachedModel` wraps any :class:`~supercontext_lab.models.base.ChatModel`. Each call
is keyed on what decides the reply — the model's name, the server's base URL, the
messages, the tools, ``tool_choice``, the temperature and the other generation settings —
and the reply (assistant message with its tool calls, usage, finish reason) is stored in
SQLite, by default at ``lab_home()/cache/responses.sqlite3``. The API key is never part of
the key nor stored.

Modes:

* ``"readwrite"``: serve stored replies, call the model on a miss and store its reply;
* ``"replay"``: serve stored replies only; a miss raises :class:`CacheError` naming the key,
  so a notebook rerun is exactly the recorded one and never reaches a model;
* ``"off"``: call the model every time; nothing is read or written.

The cache owns the ``responses`` table of its SQLite file (WAL mode, a busy timeout, one
locked connection per cache; see :mod:`supercontext_lab._sqlite`), so threads and
processes can share one file. The evaluation keeps its whole-run results in a table of
its own in the same file (:mod:`supercontext_lab.eval.results`).
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from .._bounded import json_loads
from .._erasure import tags_in
from .._hashing import canonical_json, digest_files, fingerprint, package_revision
from .._sqlite import SqliteStore
from .._text import strip_userinfo
from ..config import lab_home
from ..errors import CacheError
from .base import ChatModel, Message, ModelInfo, ModelReply, ToolCall, ToolSpec, Usage
from .choices import BundleChoices

__all__ = [
    "CACHE_MODES",
    "CacheMode",
    "CachedModel",
    "ResponseCache",
    "cache_key",
    "default_cache_path",
    "reply_from_json",
    "reply_to_json",
]

CacheMode = Literal["readwrite", "replay", "off"]
CACHE_MODES: tuple[CacheMode, ...] = ("readwrite", "replay", "off")

# Bumped whenever the key payload or the stored reply changes shape.
_KEY_VERSION = 1
_RESPONSES = """
    CREATE TABLE IF NOT EXISTS responses(
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        base_url TEXT NOT NULL,
        reply TEXT NOT NULL,
        created REAL NOT NULL
    ) WITHOUT ROWID
"""


def default_cache_path() -> Path:
    """``lab_home()/cache/responses.sqlite3`` (not created until a cache opens it)."""
    return lab_home() / "cache" / "responses.sqlite3"


def cache_key(
    *,
    model: str,
    base_url: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None,
    tool_choice: str | None,
    temperature: float | None,
    settings: Mapping[str, Any] | None = None,
) -> str:
    """The sha256 hex digest of the canonical JSON of everything that decides a reply."""
    payload = {
        "v": _KEY_VERSION,
        "model": model,
        "base_url": strip_userinfo(base_url),
        "messages": [message.to_openai() for message in messages],
        "tools": [tool.to_openai() for tool in tools] if tools else None,
        "tool_choice": tool_choice,
        "temperature": temperature,
        "settings": dict(settings or {}),
    }
    return fingerprint(payload)


def reply_to_json(reply: ModelReply) -> str:
    """A stored reply: the assistant message (with tool calls), usage, finish reason, and
    how many secrets the model boundary removed from it."""
    message = reply.message
    return canonical_json(
        {
            "message": {
                "role": message.role,
                "content": message.content,
                "tool_calls": [
                    {"id": call.id, "name": call.name, "arguments": call.arguments}
                    for call in message.tool_calls
                ],
                "tool_call_id": message.tool_call_id,
                "name": message.name,
            },
            "usage": {
                "prompt_tokens": reply.usage.prompt_tokens,
                "completion_tokens": reply.usage.completion_tokens,
            },
            "finish_reason": reply.finish_reason,
            "model": reply.model,
            # Only when there were any, so replies stored before the count existed match.
            **({"redactions": reply.redactions} if reply.redactions else {}),
        }
    )


def reply_from_json(text: str) -> ModelReply:
    """The inverse of :func:`reply_to_json`; ``ValueError`` for anything else."""
    try:
        data = json_loads(text)
        raw = data["message"]
        message = Message(
            role=raw["role"],
            content=raw["content"],
            tool_calls=tuple(
                ToolCall(id=str(call["id"]), name=str(call["name"]), arguments=call["arguments"])
                for call in raw["tool_calls"]
            ),
            tool_call_id=raw["tool_call_id"],
            name=raw["name"],
        )
        usage = Usage(
            prompt_tokens=int(data["usage"]["prompt_tokens"]),
            completion_tokens=int(data["usage"]["completion_tokens"]),
        )
        return ModelReply(
            message=message,
            usage=usage,
            finish_reason=data["finish_reason"],
            model=str(data["model"]),
            redactions=int(data.get("redactions", 0)),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a stored reply ({exc})") from exc


class ResponseCache(SqliteStore):
    """The SQLite store behind :class:`CachedModel`; one file shared by threads and processes.

    ``path`` defaults to :func:`default_cache_path`. A file that is not a usable SQLite
    cache raises :class:`CacheError` naming the file and saying to delete it.
    """

    WHAT: ClassVar[str] = "response cache"
    TABLES: ClassVar[Mapping[str, tuple[str, Sequence[str]]]] = {
        "responses": (_RESPONSES, ("key", "model", "base_url", "reply", "created"))
    }

    def __init__(self, path: str | Path | None = None) -> None:
        super().__init__(path if path is not None else default_cache_path())

    def get(self, key: str) -> ModelReply | None:
        """The stored reply for ``key``, or ``None``."""
        row = self.fetch_one("SELECT reply FROM responses WHERE key = ?", (key,))
        if row is None:
            return None
        try:
            return reply_from_json(str(row[0]))
        except ValueError as exc:
            raise self.damaged(key, exc) from exc

    def put(
        self,
        key: str,
        reply: ModelReply,
        *,
        model: str,
        base_url: str,
        tags: Iterable[str] = (),
    ) -> None:
        """Store ``reply`` under ``key`` (replacing an older entry), tagged with the past
        conversations it was built from (``tags``, see :mod:`supercontext_lab._erasure`)
        besides those its own text quotes, so that forgetting one erases it."""
        text = reply_to_json(reply)
        self.write_tagged(
            "INSERT OR REPLACE INTO responses(key, model, base_url, reply, created) "
            "VALUES (?, ?, ?, ?, ?)",
            (key, model, strip_userinfo(base_url), text, time.time()),
            table="responses",
            key=key,
            tags={*tags, *tags_in([text])},
        )

    def __len__(self) -> int:
        row = self.fetch_one("SELECT count(*) FROM responses")
        return int(row[0]) if row is not None else 0

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return self.fetch_one("SELECT 1 FROM responses WHERE key = ?", (key,)) is not None

    def clear(self) -> int:
        """Delete every stored reply; returns how many there were."""
        return self.write("DELETE FROM responses")


@functools.lru_cache(maxsize=32)
def _source_revision(cls: type) -> str:
    """A short hash of the code of an in-process model, so any edit retires its cached
    replies: the whole package for the package's own models (they are built from helpers
    all over it), else the model's module and the modules beside it."""
    if cls.__module__.partition(".")[0] == __name__.partition(".")[0]:
        return package_revision()[:16]
    try:
        module_file = inspect.getsourcefile(cls)
    except TypeError:
        return ""
    if module_file is None:
        return ""
    folder = Path(module_file).parent
    return digest_files(folder, folder.glob("*.py"))[:16]


def _inner_settings(info: ModelInfo, cls: type) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    if not info.cache_identity:
        # A model running in this process (the offline model) has no server version to
        # name; its code is its version, so editing it must not serve stale replies.
        settings["implementation"] = f"{cls.__module__}.{cls.__qualname__}"
        settings["revision"] = _source_revision(cls)
        return settings
    # Text-mode tool calling rewrites the prompt the server sees, so it decides the reply.
    settings["native_tool_calling"] = info.native_tool_calling
    # A grammar or a JSON schema constrains what the server may answer. Free text is the
    # default and stays out of the key, so keys made before formats existed still match.
    if info.bundle_format != "text":
        settings["bundle_format"] = info.bundle_format
    return settings


class CachedModel:
    """A :class:`ChatModel` that serves replies of ``inner`` from a :class:`ResponseCache`.

    ``base_url`` defaults to ``inner.info.cache_identity`` (a server's address, or a
    local server's model file with its size, time and content hash). ``settings`` adds
    generation settings to the key; ``sample`` separates repeated samples of the same
    request (repeat *n* of an evaluation must not be served repeat 0's reply). The counters
    :attr:`hits`, :attr:`misses` and :attr:`writes` say what the cache did.
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        cache: ResponseCache,
        mode: CacheMode = "readwrite",
        base_url: str = "",
        settings: Mapping[str, Any] | None = None,
        sample: int = 0,
    ) -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"cache mode must be one of {', '.join(CACHE_MODES)}, not {mode!r}")
        self.inner = inner
        self.cache = cache
        self.mode: CacheMode = mode
        info = inner.info
        self.base_url = base_url or info.cache_identity
        self.settings: dict[str, Any] = {
            **_inner_settings(info, type(inner)),
            **dict(settings or {}),
        }
        if sample:
            self.settings["sample"] = sample
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._count_lock = threading.Lock()

    @property
    def name(self) -> str:
        """The wrapped model's name: caching does not change which model answers."""
        return self.inner.name

    @property
    def info(self) -> ModelInfo:
        """The wrapped model's: caching changes nothing a caller adapts to."""
        return self.inner.info

    def close(self) -> None:
        """Close the wrapped model (the cache file is the caller's to close)."""
        self.inner.close()

    def key_for(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
        temperature: float | None = None,
        choices: BundleChoices | None = None,
    ) -> str:
        """The cache key of one call; the choices count only on a model that constrains
        its emission with them (else they cannot change the reply)."""
        settings = self.settings
        if choices is not None and self.inner.info.bundle_format != "text":
            settings = {**settings, "choices": choices.to_dict()}
        return cache_key(
            model=self.inner.name,
            base_url=self.base_url,
            messages=messages,
            tools=tools,
            tool_choice=tool_choice,
            temperature=temperature,
            settings=settings,
        )

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
        """Serve the stored reply, or ask ``inner`` (never in ``replay`` mode)."""

        def ask() -> ModelReply:
            return self.inner.complete(
                messages,
                tools=tools,
                tool_choice=tool_choice,
                temperature=temperature,
                timeout=timeout,
                on_text=on_text,
                choices=choices,
            )

        if self.mode == "off":
            return ask()
        key = self.key_for(
            messages, tools=tools, tool_choice=tool_choice, temperature=temperature, choices=choices
        )
        stored = self.cache.get(key)
        if stored is not None:
            with self._count_lock:
                self.hits += 1
            if on_text is not None and stored.message.content:
                on_text(stored.message.content)
            return stored
        with self._count_lock:
            self.misses += 1
        if self.mode == "replay":
            raise CacheError(
                f"No recorded response for {self.inner.name} under cache key {key} in "
                f"{self.cache.path}; record it first with the cache in readwrite mode."
            )
        reply = ask()
        # The reply was built from whatever the request quoted: a past conversation's
        # turns among them, which forgetting that conversation must erase from here too.
        quoted = tags_in(message.content for message in messages)
        self.cache.put(key, reply, model=self.inner.name, base_url=self.base_url, tags=quoted)
        with self._count_lock:
            self.writes += 1
        return reply

    def __repr__(self) -> str:
        return f"CachedModel({self.inner!r}, cache={self.cache!r}, mode={self.mode!r})"
