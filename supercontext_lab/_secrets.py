"""The one rule that keeps secrets out of what the lab shows, sends and keeps.

A key reaches text in many ways: a server echoing the request's key, a user pasting a key
into a chat that is later imported, a note holding a deploy token. Whatever the lab puts
into a bundle, a trace, a turn's record or an archive passes through :func:`mask_secrets`:

* the secret values given (the configured API keys, read from the environment by
  :func:`supercontext_lab.config.secrets.configured_secrets`), longest first, each at
  least :data:`MIN_SECRET_CHARS` long (shorter ones would match ordinary words);
* common key shapes, whether configured or not: ``sk-…`` keys (with a digit, so words
  like "sk-learn-compatible" stay), bearer tokens (the token, after ``Bearer``), AWS
  access key ids (``AKIA…``, ``ASIA…``), GitHub and Slack tokens, Google API keys, and
  private key blocks (``-----BEGIN … PRIVATE KEY-----`` to its end, or to the end of the
  text when the block is cut).

Each is replaced by :data:`SECRET_MARKER`. The rule is written here once; the model
boundary (:mod:`supercontext_lab.models.boundary`) and every writer use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "MIN_SECRET_CHARS",
    "SECRET_MARKER",
    "held_back",
    "mask_secrets",
    "mask_values",
    "masked_data",
    "secret_values",
]

SECRET_MARKER = "[secret removed]"
"""What stands where a secret was."""

MIN_SECRET_CHARS = 8
"""Shorter values are not treated as secrets: they would match ordinary text."""

_TOKEN = r"A-Za-z0-9_\-"
_SHAPES = re.compile(
    "|".join(
        [
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*\Z)",
            rf"(?<![{_TOKEN}])sk-(?=[{_TOKEN}]*\d)[{_TOKEN}]{{16,}}",
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
            r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}",
            r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{30,}",
            r"(?<![A-Za-z0-9_])xox[abprs]-[A-Za-z0-9-]{10,}",
            r"(?<![A-Za-z0-9_])AIza[0-9A-Za-z_\-]{35}",
        ]
    ),
    re.DOTALL,
)
_BEARER = re.compile(r"(?i)(\bbearer\s+)([A-Za-z0-9._~+/\-]{16,}=*)")
# What a stream must hold back at its end: a token that may still grow into a key shape,
# a bearer token not yet ended, or a private key block not yet closed.
_LAST_TOKEN = re.compile(rf"[{_TOKEN}]{{1,512}}\Z")
_OPEN_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{0,512}\Z")
_SHAPE_STARTS = (
    "sk-",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "AIza",
    "-----BEGIN",
)
_BLOCK_START = "-----BEGIN"
_MAX_HELD_BLOCK = 16_384


def secret_values(values: Iterable[str]) -> tuple[str, ...]:
    """The values worth masking, longest first (a key that contains another is removed
    whole), without repeats or values shorter than :data:`MIN_SECRET_CHARS`."""
    kept = {value for value in values if len(value) >= MIN_SECRET_CHARS}
    return tuple(sorted(kept, key=len, reverse=True))


def mask_values(text: str, values: tuple[str, ...]) -> tuple[str, int]:
    """``text`` with every secret value and key shape replaced by :data:`SECRET_MARKER`,
    and how many were replaced; ``values`` come from :func:`secret_values`."""
    count = 0
    for value in values:
        if value in text:
            count += text.count(value)
            text = text.replace(value, SECRET_MARKER)
    text, shapes = _SHAPES.subn(SECRET_MARKER, text)
    text, bearers = _BEARER.subn(lambda found: found.group(1) + SECRET_MARKER, text)
    return text, count + shapes + bearers


def mask_secrets(text: str, values: Iterable[str] = ()) -> str:
    """``text`` with the secret ``values`` and every key shape removed (see the module
    docstring)."""
    return mask_values(text, secret_values(values))[0]


def masked_data(value: Any, values: tuple[str, ...]) -> Any:
    """``value`` (JSON-like data: dicts, lists, tuples, strings) with every string masked
    by :func:`mask_values`; keys and other values are kept."""
    if isinstance(value, str):
        return mask_values(value, values)[0]
    if isinstance(value, dict):
        return {key: masked_data(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [masked_data(item, values) for item in value]
    if isinstance(value, tuple):
        return tuple(masked_data(item, values) for item in value)
    return value


def held_back(text: str, values: tuple[str, ...]) -> int:
    """How many characters at the end of ``text`` a stream must hold back until the next
    piece says whether a secret follows: the longest end that begins a secret value, a
    token that may still grow into a key shape (with a ``Bearer`` before it), or a private
    key block not yet closed."""
    size = 0
    longest = max((len(value) for value in values), default=0)
    for length in range(min(longest - 1, len(text)), 0, -1):
        tail = text[-length:]
        if any(value.startswith(tail) for value in values):
            size = length
            break
    last = _LAST_TOKEN.search(text)
    if last is not None:
        token = last.group()
        if "bearer".startswith(token.lower()) or any(
            start.startswith(token) or token.startswith(start) for start in _SHAPE_STARTS
        ):
            size = max(size, len(token))
    bearer = _OPEN_BEARER.search(text)
    if bearer is not None:
        size = max(size, len(text) - bearer.start())
    start = text.rfind(_BLOCK_START)
    if (
        start >= 0
        and "PRIVATE KEY-----" not in text[start + len(_BLOCK_START) :].partition("-----END")[2]
    ):
        size = max(size, min(len(text) - start, _MAX_HELD_BLOCK))
    return size
