"""The skill tools: installed skills and the skill registry (local and remote)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..sources.skills import RegistryEntry, rank_registry
from .base import NoArgs, ToolArgs, ToolResult
from .context import ToolContext

__all__ = [
    "RegistryBrowseArgs",
    "RegistrySearchArgs",
    "list_workflows",
    "skill_registry_browse",
    "skill_registry_search",
]


class RegistrySearchArgs(ToolArgs):
    """Arguments of ``skill_registry_search``."""

    query: str = Field(min_length=1, description="What the skill should do, in a few words.")
    limit: int = Field(default=5, ge=1, le=50, description="How many results (1-50).")


class RegistryBrowseArgs(ToolArgs):
    """Arguments of ``skill_registry_browse``."""

    category: str | None = Field(default=None, description="Only this category (optional).")


def _entry_json(entry: RegistryEntry, installed: set[str]) -> dict[str, Any]:
    return {
        "id": entry.id,
        "name": entry.name,
        "description": entry.description,
        "tags": list(entry.tags),
        "category": entry.category,
        "installed": entry.id in installed,
    }


def list_workflows(context: ToolContext, _args: NoArgs) -> ToolResult:
    """The installed skills, identified by their folder slug."""
    skills = [
        {
            "dir_name": s.dir_name,
            "name": s.name,
            "description": s.description,
            "tags": list(s.tags),
        }
        for s in context.workspace.skills
    ]
    return ToolResult.success({"skills": skills})


def skill_registry_search(context: ToolContext, args: RegistrySearchArgs) -> ToolResult:
    """Registry entries sharing words with the query, best first."""
    installed = context.installed_ids()
    results = [
        {**_entry_json(entry, installed), "score": score}
        for entry, score in rank_registry(context.registry_entries(), args.query, args.limit)
    ]
    return ToolResult.success({"query": args.query, "results": results})


def skill_registry_browse(context: ToolContext, args: RegistryBrowseArgs) -> ToolResult:
    """The registry, optionally one category, with the list of categories."""
    installed = context.installed_ids()
    entries = context.registry_entries()
    wanted = args.category.strip().lower() if args.category else None
    chosen = [e for e in entries if wanted is None or e.category.lower() == wanted]
    return ToolResult.success(
        {
            "category": args.category,
            "results": [_entry_json(e, installed) for e in chosen],
            "categories": sorted({e.category for e in entries if e.category}),
        }
    )
