"""Skills as data: installed skills, registry entries, registry search and remote registries.

An installed skill is identified by its folder slug (``dir_name``), a registry entry by
its ``id``; a registry is a JSON list of entry objects (``registry.json`` in a workspace,
or the same shape served at a URL).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .._bounded import json_loads
from .._http import body_text, charset_of
from .._text import describe_validation_error, strip_userinfo, without_surrogates
from ..errors import ToolError, WorkspaceError
from ..reading.words import content_terms
from .confined import MAX_DATA_BYTES
from .web import fetch_body

__all__ = [
    "REGISTRY_TIMEOUT_S",
    "InstalledSkill",
    "RegistryEntry",
    "fetch_registry",
    "parse_registry_entries",
    "rank_registry",
    "registry_tokens",
]

REGISTRY_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class InstalledSkill:
    """An installed skill; ``dir_name`` (its folder slug) is the id it runs by."""

    dir_name: str
    name: str
    description: str
    tags: tuple[str, ...]
    body: str


@dataclass(frozen=True)
class RegistryEntry:
    """One installable skill in the registry; ``id`` is what an install resolves."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...]
    category: str
    source: str


class _RegistryEntryIn(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    category: str = ""
    source: str = ""

    @field_validator("id", "name")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


def parse_registry_entries(data: Any, source: str) -> list[RegistryEntry]:
    """Validate a decoded registry (a JSON list of entry objects) read from ``source``.

    Each entry needs ``id`` and ``name``; ``description``, ``tags`` (a list of strings),
    ``category`` and ``source`` are optional; other keys are ignored; lone surrogates
    read as U+FFFD. Problems raise
    :class:`WorkspaceError` naming ``source`` and the entry's index.
    """
    if not isinstance(data, list):
        raise WorkspaceError(
            f"{source} must hold a JSON list of skill entries, not {type(data).__name__}."
        )
    entries: list[RegistryEntry] = []
    seen: set[str] = set()
    for index, raw in enumerate(data):
        if not isinstance(raw, dict):
            raise WorkspaceError(
                f"{source} entry {index} must be a JSON object, not {type(raw).__name__}."
            )
        try:
            item = _RegistryEntryIn.model_validate(raw)
        except ValidationError as exc:
            raise WorkspaceError(
                f"{source} entry {index}: {describe_validation_error(exc, first_only=True)}."
            ) from exc
        entry_id = without_surrogates(item.id)
        if entry_id in seen:
            raise WorkspaceError(f"{source} entry {index}: duplicate id '{entry_id}'.")
        seen.add(entry_id)
        # A JSON escape such as "\\ud800" decodes to a lone surrogate, which no model
        # request or saved file could encode: such characters read as U+FFFD.
        entries.append(
            RegistryEntry(
                id=entry_id,
                name=without_surrogates(item.name),
                description=without_surrogates(item.description),
                tags=tuple(without_surrogates(tag) for tag in item.tags),
                category=without_surrogates(item.category),
                source=without_surrogates(item.source),
            )
        )
    return entries


def registry_tokens(text: str) -> set[str]:
    """The terms registry entries and queries are matched by: those of the package's one
    analyzer (:func:`~supercontext_lab.reading.words.content_terms`), stop words dropped."""
    return content_terms(text)


def _entry_tokens(entry: RegistryEntry) -> tuple[set[str], set[str]]:
    strong = registry_tokens(" ".join([entry.id, entry.name, *entry.tags]))
    return strong | registry_tokens(f"{entry.description} {entry.category}"), strong


def rank_registry(
    entries: Iterable[RegistryEntry], query: str, limit: int
) -> list[tuple[RegistryEntry, int]]:
    """Entries sharing at least one word with ``query``, best first, with their scores.

    The score is the number of distinct query words an entry contains (in its id, name,
    description, tags or category); ties go to the entry with more of them in its id,
    name or tags, then to registry order.
    """
    wanted = registry_tokens(query)
    scored: list[tuple[int, int, int, RegistryEntry]] = []
    for position, entry in enumerate(entries):
        every, strong = _entry_tokens(entry)
        score = len(wanted & every)
        if score:
            scored.append((-score, -len(wanted & strong), position, entry))
    scored.sort(key=lambda item: item[:3])
    return [(entry, -neg) for neg, _, _, entry in scored[:limit]]


def fetch_registry(
    url: str, *, timeout: float = REGISTRY_TIMEOUT_S, allow_private_addresses: bool = False
) -> list[RegistryEntry]:
    """The registry served at ``url`` (a JSON list shaped like registry.json).

    Fetched as ``web_fetch`` fetches a page (:func:`~supercontext_lab.sources.web.fetch_body`):
    every redirect hop and every address the host resolves to go through the address
    guard (loopback and private networks only with ``allow_private_addresses``), and
    ``timeout`` bounds the whole exchange: connect, headers and body. Read like a
    workspace's registry.json: at most :data:`MAX_DATA_BYTES`, parsed with bounded depth.
    Raises :class:`ToolError` with a one-line reason when it cannot be reached or read.
    """
    where = f"the skill registry at {strip_userinfo(url)}"
    try:
        fetched = fetch_body(
            url,
            MAX_DATA_BYTES,
            timeout=timeout,
            allow_private_addresses=allow_private_addresses,
            accept="application/json",
            client="skill registry",
        )
    except ToolError as exc:
        raise ToolError(f"{where} cannot be reached: {exc}") from exc
    if fetched.truncated:
        raise ToolError(f"{where} is larger than {MAX_DATA_BYTES:,} bytes.")
    try:
        data = json_loads(body_text(fetched.body, charset_of(fetched.content_type)))
    except ValueError as exc:
        raise ToolError(f"{where} did not answer JSON ({exc}).") from exc
    try:
        return parse_registry_entries(data, where)
    except WorkspaceError as exc:
        raise ToolError(str(exc)) from exc
