"""What crosses the model boundary: no secret values and no text that cannot be encoded.

A server may repeat the request's bearer key in its reply (an echoing proxy, a model that
was shown the key): whatever the model returns is stored and shown (the envelope, the
orchestrator's message, the thread goal, the saved thread, the panel, the evaluation
report, the SQLite caches), so the key must leave it here, before any of them sees it.
A reply may also hold a lone surrogate (``"\\ud83d"`` as a JSON escape, or a pair split
across two stream chunks), which no UTF-8 writer accepts.

The rules, each written once:

* :class:`Secrets` holds the secret values in use for one call (the route's key and the
  values of every ``api_key_env`` that ``config.toml``'s ``[models.*]`` tables name, read
  from the environment at call time; values shorter than :data:`MIN_SECRET_CHARS` are
  ignored, they would match ordinary words) and replaces each with
  :data:`SECRET_MARKER`, counting how many it removed. Error messages quoting a server
  (:func:`~supercontext_lab.models.wire.excerpt`) use the same rule.
* :func:`encodable` joins surrogate pairs and replaces whatever surrogate remains with
  U+FFFD, so nothing downstream ever holds an unencodable string.
* :class:`TextStream` applies both to streamed text deltas, holding back a tail long
  enough to catch a key (or a surrogate pair) split across two deltas.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..config.store import MODELS_TABLE, load_config
from ..errors import ConfigError
from .base import Message, ModelReply, ToolCall

__all__ = [
    "MIN_SECRET_CHARS",
    "SECRET_MARKER",
    "Secrets",
    "TextStream",
    "configured_secrets",
    "encodable",
]

SECRET_MARKER = "[secret removed]"
"""What stands where a secret value was."""

MIN_SECRET_CHARS = 8
"""Shorter values are not treated as secrets: they would match ordinary text."""


def _is_high_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


def encodable(text: str) -> str:
    """``text`` with surrogate pairs joined and every other surrogate replaced by U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 pairs a high surrogate with the low one after it; what is left alone
        # cannot be encoded and becomes the replacement character.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def configured_secrets() -> list[str]:
    """The values, in the environment now, of every ``api_key_env`` that config.toml's
    ``[models.*]`` tables name (a config file that cannot be read names none)."""
    try:
        tables = load_config().get(MODELS_TABLE, {})
    except ConfigError:
        return []
    values = []
    for table in tables.values() if isinstance(tables, dict) else ():
        name = table.get("api_key_env") if isinstance(table, dict) else None
        if isinstance(name, str) and name:
            values.append(os.environ.get(name, "").strip())
    return values


class Secrets:
    """The secret values in use for one call, and the one rule that removes them.

    Its ``repr`` never shows a value, so it is safe in a traceback's locals.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        kept = {value for value in values if len(value) >= MIN_SECRET_CHARS}
        # Longest first: a key that contains another is removed whole.
        self._values = tuple(sorted(kept, key=len, reverse=True))
        self._longest = len(self._values[0]) if self._values else 0

    @classmethod
    def in_use(cls, *keys: str) -> Secrets:
        """``keys`` (the route's key) and :func:`configured_secrets`."""
        return cls([*keys, *configured_secrets()])

    def __bool__(self) -> bool:
        return bool(self._values)

    def __repr__(self) -> str:
        return f"Secrets({len(self._values)} values)"

    def mask(self, text: str) -> tuple[str, int]:
        """``text`` with every secret value replaced by :data:`SECRET_MARKER`, and how many
        were replaced."""
        count = 0
        for value in self._values:
            if value in text:
                count += text.count(value)
                text = text.replace(value, SECRET_MARKER)
        return text, count

    def masked(self, text: str) -> str:
        """:meth:`mask` without the count."""
        return self.mask(text)[0]

    def unquoted(self, exc: BaseException) -> BaseException | None:
        """``exc`` to chain as a cause, or ``None`` when its message quotes a secret (a
        traceback prints the whole chain)."""
        message = str(exc)
        return None if any(value in message for value in self._values) else exc

    def partial_tail(self, text: str) -> int:
        """The length of the longest end of ``text`` that begins a secret value: what a
        stream must hold back until the next delta says whether the secret follows."""
        for size in range(min(self._longest - 1, len(text)), 0, -1):
            tail = text[-size:]
            if any(value.startswith(tail) for value in self._values):
                return size
        return 0

    def reply(self, reply: ModelReply) -> ModelReply:
        """``reply`` with every secret removed from its text and tool calls (counted in
        ``redactions``) and every string made :func:`encodable`."""
        count = 0

        def clean(text: str) -> str:
            nonlocal count
            masked, found = self.mask(encodable(text))
            count += found
            return masked

        message = reply.message
        calls = tuple(
            ToolCall(id=clean(call.id), name=clean(call.name), arguments=clean(call.arguments))
            for call in message.tool_calls
        )
        cleaned = Message(
            role=message.role,
            content=None if message.content is None else clean(message.content),
            tool_calls=calls,
            tool_call_id=message.tool_call_id,
            name=message.name,
        )
        return replace(
            reply,
            message=cleaned,
            finish_reason=None if reply.finish_reason is None else clean(reply.finish_reason),
            model=clean(reply.model),
            redactions=reply.redactions + count,
        )


class TextStream:
    """Streamed text deltas on their way to ``sink``, with the boundary's rules applied.

    A secret split across two deltas is caught because the end of each delta that could
    begin a secret is held back until the next one (or :meth:`flush`) decides; a high
    surrogate at the end of a delta waits for its low half the same way.
    """

    def __init__(self, secrets: Secrets, sink: Callable[[str], None]) -> None:
        self._secrets = secrets
        self._sink = sink
        self._pending = ""

    def feed(self, delta: str) -> None:
        """Pass on what of ``self._pending + delta`` is settled."""
        text = self._secrets.masked(self._pending + delta)
        cut = len(text) - self._secrets.partial_tail(text)
        if cut > 0 and _is_high_surrogate(text[cut - 1]):
            cut -= 1
        self._pending = text[cut:]
        if cut > 0:
            self._sink(encodable(text[:cut]))

    def flush(self) -> None:
        """Pass on whatever is still held back (the stream has ended)."""
        if self._pending:
            self._sink(encodable(self._secrets.masked(self._pending)))
            self._pending = ""
