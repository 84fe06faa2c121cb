"""Workspaces for tests and notebooks: one way to write a file, one builder, one sample.

A workspace is a plain folder (see :class:`~supercontext_lab.sources.workspace.Workspace`),
so a test describes the one it needs as data, ``{relative path: text}``, and
:func:`build_workspace` writes it; without a description it writes
:data:`SAMPLE_WORKSPACE`, a small but complete one (profile, memory, flavour, a skill,
a registry, integrations, files). :data:`SAMPLE_REGISTRY` is the registry sample on its
own, for a test that ranks or browses it.

These write throwaway files into a fresh folder, so they write plainly rather than through
the lab's atomic writer: durability buys nothing there, and an fsync of every file (about
10 ms each) adds up over the thousands of files a property-based test writes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["SAMPLE_REGISTRY", "SAMPLE_WORKSPACE", "build_workspace", "write_file"]

SAMPLE_REGISTRY: tuple[Mapping[str, Any], ...] = (
    {
        "id": "figure-polish",
        "name": "Journal Figure Polisher",
        "description": "Restyles matplotlib figures to journal style and exports PDF.",
        "tags": ["figures", "matplotlib"],
        "category": "writing",
        "source": "community",
    },
    {
        "id": "citation-formatter",
        "name": "Reference Formatter",
        "description": "Formats citations and bibliographies for a journal.",
        "tags": ["writing", "references"],
        "category": "writing",
        "source": "builtin",
    },
    {
        "id": "inbox-triage",
        "name": "Inbox Triage",
        "description": "Sorts email and drafts replies.",
        "tags": ["email"],
        "category": "productivity",
        "source": "builtin",
    },
    {
        "id": "grant-budget-check",
        "name": "Grant Budget Checker",
        "description": "Checks a grant budget spreadsheet against the funder's rules.",
        "tags": ["grants", "budget"],
        "category": "research",
        "source": "community",
    },
)
"""A skill registry (the entries of a ``registry.json``) over three categories: two
writing skills that share the word "journal", one productivity and one research skill."""

SAMPLE_WORKSPACE: Mapping[str, str] = {
    "PROFILE.md": (
        "# Dr. Ada Test\nEcologist. Working on the grant renewal (ref GR-1001), due 2026-12-15.\n"
    ),
    "MEMORY.md": "- The grant renewal budget must be approved by the department head.\n",
    "memory/global/grant-budget.md": (
        "---\ncategory: decision\ncreated: 2026-01-10\n---\n"
        "The grant renewal budget is capped at 250k EUR; travel stays under 8 percent of it.\n"
    ),
    "memory/global/sourdough.md": (
        "---\ncategory: note\n---\nSourdough starter: feed it at 8am and 8pm.\n"
    ),
    "memory/skill-grant-budget-check/usage.md": "Last run: March.\n",
    "flavour/communication.md": "Short, direct answers; numbers first.\n",
    "skills/grant-budget-check/SKILL.md": (
        "---\nname: Grant budget check\n"
        "description: Checks a grant budget spreadsheet against the funder's caps.\n"
        "tags: [grant, budget, finance]\n---\n"
        "Open the budget, compare each line with the caps, report problems.\n"
    ),
    "registry.json": json.dumps(SAMPLE_REGISTRY, indent=2),
    "integrations.toml": (
        '[[integration]]\ntoolkit = "gmail"\ndescription = "the user\'s work inbox"\n'
        "connected = true\n\n"
        '[[integration]]\ntoolkit = "notion"\ndescription = "team wiki"\nconnected = false\n'
    ),
    "files/budget/grant-budget-2026.md": "| line | EUR |\n| travel | 18000 |\n",
}
"""A small workspace with every kind of source: a grant-budget decision in memory beside
an unrelated note, an installed skill that is also in the registry (:data:`SAMPLE_REGISTRY`),
one connected and one disconnected integration, and a file."""


def write_file(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` to ``path``, creating its folders; text as UTF-8 with its newlines as
    given (on every platform), bytes as they are. Returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return target


def build_workspace(
    root: str | os.PathLike[str], files: Mapping[str, str | bytes] | None = None
) -> Path:
    """Write ``files`` (relative path → text or bytes) below ``root`` and return ``root``;
    without ``files``, :data:`SAMPLE_WORKSPACE`.

    A path must stay below ``root``: an absolute one or one with ``..`` is a
    :class:`ValueError`, before anything is written.
    """
    base = Path(root)
    chosen = SAMPLE_WORKSPACE if files is None else files
    for relative in chosen:
        parts = PurePosixPath(relative).parts
        if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
            raise ValueError(f"{relative!r} is not a path below the workspace folder.")
    base.mkdir(parents=True, exist_ok=True)
    for relative, data in chosen.items():
        write_file(base / relative, data)
    return base
