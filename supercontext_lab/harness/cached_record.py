"""The cached envelope's stored record: what was built, from what, under this lab's seal.

``.supercontext/`` travels with a workspace (a copy, a tar or zip archive, ``cp -a``), and
the cached envelope is sent on every first turn without reading the request, so a record
found there is trusted only when this lab wrote it for this folder and what it quotes is
still what the files say:

* the record is sealed as the memory index is (:class:`~supercontext_lab.sources.memory.seal.Seal`:
  the lab's key, bound to the folder's real path); a record another lab wrote, one
  written for another folder, or one edited by hand does not verify;
* it keeps the content hash (sha256) of every text it was built from (PROFILE.md,
  MEMORY.md, each memory note read), so an edit that keeps a file's size and time (as an
  archive restores them) is seen: sizes and times only say when to look.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from ..sources.memory.seal import Seal
from .designs import DEFAULT_CACHED_TOKENS

__all__ = ["MEMORY_MD_NAME", "NOTE_PREFIX", "PROFILE_NAME", "CachedEnvelope", "text_hash"]

VERSION = 2
"""The record's version; a record of another version is built again."""
_SEAL_TAG = "supercontext pre-flight cache"
# Under the same key and binding as the index's rows: the tag keeps a row's digest from
# ever verifying as a record's.

PROFILE_NAME = "PROFILE.md"
MEMORY_MD_NAME = "MEMORY.md"
NOTE_PREFIX = "memory/"
"""How a memory note is named among the texts read: ``memory/<namespace folder>/<file>``."""


def text_hash(text: str) -> str:
    """The content hash of a text as the workspace read it."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CachedEnvelope:
    """A stored cached envelope and what it was built from."""

    envelope: str
    fingerprint: str
    """When to look again: the budget, and the size and time of every file it may read."""
    built_at: float
    """``time.time()`` of the build."""
    build_ms: float
    sources: tuple[str, ...]
    """The attributions the envelope cites, in order (``profile``, ``memory``,
    ``memory: ns/key``)."""
    budget: int = DEFAULT_CACHED_TOKENS
    read: tuple[tuple[str, str], ...] = ()
    """``(name, content hash)`` of every text the build read (see the module docstring)."""
    seal: str = ""
    """This lab's keyed digest of the fields above, bound to the workspace's folder."""

    def _fields(self) -> list[object]:
        return [
            _SEAL_TAG,
            VERSION,
            self.envelope,
            self.fingerprint,
            self.built_at,
            self.build_ms,
            list(self.sources),
            self.budget,
            [list(pair) for pair in self.read],
        ]

    def sealed_with(self, seal: Seal) -> CachedEnvelope:
        """This record carrying ``seal``'s digest."""
        return replace(self, seal=seal.digest(self._fields()))

    def verifies(self, seal: Seal) -> bool:
        """Whether this record carries ``seal``'s digest of what it holds."""
        return seal.verifies(self._fields(), self.seal)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "envelope": self.envelope,
            "fingerprint": self.fingerprint,
            "built_at": self.built_at,
            "build_ms": self.build_ms,
            "sources": list(self.sources),
            "budget": self.budget,
            "read": [list(pair) for pair in self.read],
            "seal": self.seal,
        }

    @classmethod
    def from_dict(cls, data: Any) -> CachedEnvelope | None:
        """The record of :meth:`to_dict`, or ``None`` when ``data`` is not one (an older
        version, a damaged file): it is then built again. Whether it is sealed is
        :meth:`verifies`'s question."""
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        envelope, print_, sources = (
            data.get("envelope"),
            data.get("fingerprint"),
            data.get("sources"),
        )
        built, took, budget = data.get("built_at"), data.get("build_ms"), data.get("budget")
        read, seal = data.get("read"), data.get("seal")
        if not (
            isinstance(envelope, str)
            and isinstance(print_, str)
            and isinstance(sources, list)
            and all(isinstance(s, str) for s in sources)
            and isinstance(built, int | float)
            and isinstance(took, int | float)
            and isinstance(budget, int)
            and isinstance(read, list)
            and all(_is_pair(pair) for pair in read)
            and isinstance(seal, str)
        ):
            return None
        pairs = tuple((str(pair[0]), str(pair[1])) for pair in read)
        return cls(envelope, print_, float(built), float(took), tuple(sources), budget, pairs, seal)


def _is_pair(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)
