"""Past conversations as records: a :class:`Conversation` of :class:`Turn` items.

Every format the lab imports (:mod:`.formats`) and the thread archive produce these, and
the transcript store (:mod:`.store`) keeps them. A conversation has an id (what a bundle
cites: ``(transcript: <id>)``), a title, the date it started and its turns, each a
``user`` or ``assistant`` message with the time it was sent when known.

Everything here is bounded, because an export is a file from outside: an id is at most
:data:`MAX_ID_CHARS` characters of a safe alphabet (anything else is rewritten, with a
short digest of the original so that two ids never merge), a title one line of at most
:data:`MAX_TITLE_CHARS`, a turn at most :data:`MAX_TURN_CHARS` (a longer one is cut at
the last paragraph or sentence break before the limit, never inside a word), a
conversation at most :data:`MAX_TURNS` turns. Text keeps every character it came with,
except lone surrogates and NUL, which no file or terminal can carry and which become
U+FFFD.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._hashing import fingerprint
from .._text import one_line, without_surrogates
from ..config.secrets import mask

__all__ = [
    "MAX_ID_CHARS",
    "MAX_TITLE_CHARS",
    "MAX_TURNS",
    "MAX_TURN_CHARS",
    "ROLES",
    "Conversation",
    "Role",
    "Turn",
    "clean_text",
    "conversation_id",
    "iso_time",
    "role_of",
    "title_from",
]

Role = Literal["user", "assistant"]
ROLES: tuple[Role, ...] = ("user", "assistant")

MAX_ID_CHARS = 96
"""The longest conversation id kept as it is; a longer one (or one with other characters)
is rewritten by :func:`conversation_id`."""
MAX_TITLE_CHARS = 200
MAX_TURNS = 20_000
"""Turns of one conversation at most; an export holding a longer one is refused."""
MAX_TURN_CHARS = 100_000
"""The longest turn kept whole; a longer one (a pasted log) is cut at a break."""

_ID_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]*")
_ID_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._:@+-]+")
_DIGEST_CHARS = 10

# Names a role goes by in the formats the lab reads.
_USER_ROLES = frozenset({"user", "human", "me"})
_ASSISTANT_ROLES = frozenset({"assistant", "ai", "bot", "model", "gpt", "chatgpt"})


@dataclass(frozen=True)
class Turn:
    """One message of a conversation: who said it, what, and when (ISO 8601, if known)."""

    role: Role
    content: str
    time: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.time is not None:
            out["time"] = self.time
        return out


@dataclass(frozen=True)
class Conversation:
    """One past conversation: its id, title, the date it started and its turns."""

    id: str
    title: str
    date: str | None
    turns: tuple[Turn, ...]
    source: str = ""
    """The format it came from (``chatgpt``, ``jupyter-chat``, ``openai-jsonl``,
    ``longmemeval``, ``thread``)."""
    digest: str = field(default="", compare=False)
    """The sha256 of its id, title, date and turns (filled in when built)."""

    def __post_init__(self) -> None:
        if not self.digest:
            object.__setattr__(self, "digest", content_digest(self))

    def to_dict(self) -> dict[str, Any]:
        """The conversation as JSON-ready data (the shape ``memory list --json`` shows)."""
        return {
            "id": self.id,
            "title": self.title,
            "date": self.date,
            "source": self.source,
            "turns": [turn.to_dict() for turn in self.turns],
        }


def content_digest(conversation: Conversation) -> str:
    """What decides whether a re-imported conversation changed (its source does not)."""
    return fingerprint(
        [
            conversation.id,
            conversation.title,
            conversation.date,
            [[t.role, t.content, t.time] for t in conversation.turns],
        ]
    )


def clean_text(text: str) -> str:
    """``text`` as it may be stored: secrets masked (configured keys and common key
    shapes, :func:`~supercontext_lab.config.secrets.mask`: a key pasted into an old chat
    is never imported, archived, recalled or quoted), lone surrogates and NUL become
    U+FFFD, and a text longer than :data:`MAX_TURN_CHARS` is cut at its last paragraph,
    line or sentence break before the limit (at a space when it has none)."""
    text = mask(without_surrogates(text).replace("\x00", "\ufffd"))
    if len(text) <= MAX_TURN_CHARS:
        return text
    head = text[:MAX_TURN_CHARS]
    for mark in ("\n\n", "\n", ". ", " "):
        cut = head.rfind(mark)
        if cut >= MAX_TURN_CHARS // 2:
            return head[: cut + (1 if mark == ". " else 0)].rstrip()
    return head


def conversation_id(raw: str) -> str:
    """``raw`` as a conversation id: kept when it is made of letters, digits and
    ``. _ : @ + -`` and at most :data:`MAX_ID_CHARS` long; otherwise its safe characters
    (other runs become ``-``) followed by a short digest of ``raw``, so ids that differ
    stay different. An empty ``raw`` is a :class:`ValueError`."""
    text = without_surrogates(raw).strip()
    if not text:
        raise ValueError("a conversation id must not be empty")
    if len(text) <= MAX_ID_CHARS and _ID_SAFE.fullmatch(text):
        return text
    safe = _ID_UNSAFE_RUN.sub("-", text).strip("-._:@+")[: MAX_ID_CHARS - _DIGEST_CHARS - 1]
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:_DIGEST_CHARS]
    return f"{safe}-{digest}" if safe else f"c-{digest}"


def role_of(value: object) -> Role | None:
    """``user`` or ``assistant`` for the names those roles go by; ``None`` for any other
    role (system, tool, function, developer), which is not a turn of the conversation."""
    if not isinstance(value, str):
        return None
    name = value.strip().lower()
    if name in _USER_ROLES:
        return "user"
    if name in _ASSISTANT_ROLES:
        return "assistant"
    return None


def title_from(turns: Sequence[Turn], fallback: str = "") -> str:
    """A title for a conversation that has none: its first user turn, on one line."""
    for turn in turns:
        if turn.role == "user" and turn.content.strip():
            return one_line(turn.content, 80, at_word=True)
    return one_line(fallback, MAX_TITLE_CHARS) if fallback else "(untitled)"


def clean_title(value: object, turns: Sequence[Turn]) -> str:
    """The title given (one line, bounded), or one made from the turns."""
    if isinstance(value, str) and value.strip():
        return one_line(mask(without_surrogates(value)), MAX_TITLE_CHARS, at_word=True)
    return title_from(turns)


# "2023/05/28 (Sun) 06:27" (LongMemEval), "2023-05-28", "2023-05-28T06:27:00Z", …
_SLASHED = re.compile(
    r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})(?:\s*\([A-Za-z]{2,9}\))?(?:[ T]+(\d{1,2}):(\d{2}))?"
)
_EARLIEST = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc).timestamp()
_LATEST = _dt.datetime(9999, 12, 31, tzinfo=_dt.timezone.utc).timestamp()


def iso_time(value: object) -> str | None:
    """A time as ISO 8601, or ``None`` when ``value`` is not one the lab understands.

    Numbers are seconds since the epoch (ChatGPT's ``create_time``, jupyterlab-chat's
    ``time``; milliseconds when the number is too large for seconds), written in UTC;
    text in ISO 8601 is kept as it is parsed, and LongMemEval's ``2023/05/28 (Sun) 06:27``
    becomes ``2023-05-28T06:27``. Never raises.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        seconds = float(value)
        if not math.isfinite(seconds):
            return None
        if seconds > _LATEST:
            seconds /= 1000.0  # milliseconds
        if not _EARLIEST <= seconds <= _LATEST:
            return None
        moment = _dt.datetime.fromtimestamp(seconds, tz=_dt.timezone.utc)
        return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    if not isinstance(value, str):
        return None
    text = value.strip()[:64]
    if not text:
        return None
    try:
        parsed = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is not None:
        out = parsed.replace(microsecond=0).isoformat()
        return out.replace("+00:00", "Z") if text.endswith("Z") else out
    match = _SLASHED.match(text)
    if match is None:
        return None
    year, month, day, hour, minute = match.groups()
    try:
        moment = _dt.datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0))
    except ValueError:
        return None
    return moment.isoformat(timespec="minutes") if hour else moment.date().isoformat()


def turn_from(role: Role, content: str, time: object = None) -> Turn:
    """A :class:`Turn` with its text cleaned (:func:`clean_text`) and its time read."""
    return Turn(role, clean_text(content), iso_time(time))


def from_dict(data: Mapping[str, Any]) -> Conversation:
    """A conversation from :meth:`Conversation.to_dict` output (trusted, the store's own)."""
    return Conversation(
        id=str(data["id"]),
        title=str(data.get("title") or ""),
        date=data.get("date"),
        turns=tuple(
            Turn(turn["role"], turn["content"], turn.get("time")) for turn in data["turns"]
        ),
        source=str(data.get("source") or ""),
    )
