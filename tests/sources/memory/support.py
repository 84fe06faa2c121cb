"""Helpers shared by the memory tests: the index file, a memory file written, hit keys."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab.sources.memory import MemoryHit
from supercontext_lab.testing import write_file

INDEX = Path(".supercontext") / "memory.sqlite3"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write the memory file ``rel`` (``namespace/key.md``) of the workspace at ``root``."""
    return write_file(root / "memory" / rel, text)


def keys(hits: list[MemoryHit]) -> list[str]:
    return [hit.key for hit in hits]
