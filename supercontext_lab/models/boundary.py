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
  ignored, they would match ordinary words) and replaces each, and every common key
  shape, with :data:`SECRET_MARKER`, counting how many it removed: the lab's one rule
  (:mod:`supercontext_lab._secrets`), which every writer of bundles, traces and archives
  applies too (:func:`supercontext_lab.config.secrets.mask`). Error messages quoting a server
  (:func:`~supercontext_lab.models.wire.excerpt`) use the same rule.
* :func:`encodable` joins surrogate pairs and replaces whatever surrogate remains with
  U+FFFD, so nothing downstream ever holds an unencodable string.
* :class:`TextStream` applies both to streamed text deltas, holding back a tail long
  enough to catch a key (or a surrogate pair) split across two deltas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from .._secrets import (
    MIN_SECRET_CHARS,
    SECRET_MARKER,
    held_back,
    mask_values,
    masked_data,
    secret_values,
)
from ..config.secrets import configured_secrets
from .base import Message, ModelReply, ToolCall

__all__ = [
    "MIN_SECRET_CHARS",
    "SECRET_MARKER",
    "Secrets",
    "TextStream",
    "configured_secrets",
    "encodable",
]


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


class Secrets:
    """The secret values in use for one call, and the one rule that removes them.

    Its ``repr`` never shows a value, so it is safe in a traceback's locals.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values = secret_values(values)

    @classmethod
    def in_use(cls, *keys: str) -> Secrets:
        """``keys`` (the route's key) and :func:`configured_secrets`."""
        return cls([*keys, *configured_secrets()])

    def __bool__(self) -> bool:
        return bool(self._values)

    def __repr__(self) -> str:
        return f"Secrets({len(self._values)} values)"

    def mask(self, text: str) -> tuple[str, int]:
        """``text`` with every secret value and key shape replaced by
        :data:`SECRET_MARKER`, and how many were replaced (the lab's one rule,
        :func:`supercontext_lab._secrets.mask_values`)."""
        return mask_values(text, self._values)

    def masked(self, text: str) -> str:
        """:meth:`mask` without the count."""
        return self.mask(text)[0]

    def masked_data(self, value: Any) -> Any:
        """``value`` (JSON-like data) with every string :meth:`masked`
        (:func:`supercontext_lab._secrets.masked_data`)."""
        return masked_data(value, self._values)

    def unquoted(self, exc: BaseException) -> BaseException | None:
        """``exc`` to chain as a cause, or ``None`` when its message quotes a secret (a
        traceback prints the whole chain)."""
        message = str(exc)
        return None if self.mask(message)[1] else exc

    def partial_tail(self, text: str) -> int:
        """How much of the end of ``text`` a stream must hold back until the next delta
        says whether a secret follows (:func:`supercontext_lab._secrets.held_back`)."""
        return held_back(text, self._values)

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
        # The end that may still grow into a secret is held back before anything is
        # masked: a key shape matches a key's first part too, which would let the rest
        # of the key through in the next delta.
        text = self._pending + delta
        cut = len(text) - self._secrets.partial_tail(text)
        if cut > 0 and _is_high_surrogate(text[cut - 1]):
            cut -= 1
        self._pending = text[cut:]
        if cut > 0:
            self._sink(encodable(self._secrets.masked(text[:cut])))

    def flush(self) -> None:
        """Pass on whatever is still held back (the stream has ended)."""
        if self._pending:
            self._sink(encodable(self._secrets.masked(self._pending)))
            self._pending = ""
