"""The catalogue of the scout's read-only tools, and the registry built from it.

A new read-only tool is one function ``(context, args) -> ToolResult`` in a module of this
package and one :func:`_entry` below (and, for the loader's allowlist, its row in
``agents/known_tools.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from ..sources.flavour import FLAVOUR_FACETS
from ..sources.memory.embedder import Embedder
from ..sources.web_search import WebSearchProvider
from ..sources.workspace import Workspace
from .base import NoArgs, Tool, ToolRegistry, ToolResult, make_tool
from .context import ToolContext
from .files import ReadFileArgs, workspace_list_files, workspace_read_file
from .memory import MemoryFlavourArgs, MemoryRecallArgs, memory_flavour, memory_recall
from .skills import (
    RegistryBrowseArgs,
    RegistrySearchArgs,
    list_workflows,
    skill_registry_browse,
    skill_registry_search,
)
from .web import WebFetchArgs, WebSearchArgs, web_fetch, web_search_tool

__all__ = ["CATALOGUE", "CatalogueEntry", "build_scout_registry"]

ArgsT = TypeVar("ArgsT", bound=BaseModel)


@dataclass(frozen=True)
class CatalogueEntry:
    """One read-only tool: what a model is told, and the function that answers it."""

    name: str
    description: str
    args_model: type[BaseModel]
    function: Callable[[ToolContext, Any], ToolResult]

    def bind(self, context: ToolContext) -> Tool:
        """The tool answering through ``context``."""
        # The registry validates arguments against args_model before calling.
        return make_tool(
            self.name, self.description, self.args_model, partial(self.function, context)
        )


def _entry(
    name: str,
    description: str,
    args_model: type[ArgsT],
    function: Callable[[ToolContext, ArgsT], ToolResult],
) -> CatalogueEntry:
    # Typed here, so a function and its arguments model cannot be paired wrongly.
    return CatalogueEntry(name, description, args_model, function)


CATALOGUE: tuple[CatalogueEntry, ...] = (
    _entry(
        "memory_recall",
        "Search the user's memory tree (facts, decisions, past conversations). Give a "
        "namespace ('global' by default, 'skill-<id>' for a skill's notes, 'conversations' "
        "for past conversations, '*' for all) and a few query words; hits carry category, "
        "key, content and score, and a past conversation's turn the transcript id to cite.",
        MemoryRecallArgs,
        memory_recall,
    ),
    _entry(
        "memory_flavour",
        "Read one facet of how the user likes to work: " + ", ".join(FLAVOUR_FACETS) + ". "
        "Prefer it when the request depends on preferences rather than a specific fact.",
        MemoryFlavourArgs,
        memory_flavour,
    ),
    _entry(
        "list_workflows",
        "List the installed skills. Recommend an installed skill by its dir_name "
        "(the id run_workflow resolves), never by its display name.",
        NoArgs,
        list_workflows,
    ),
    _entry(
        "skill_registry_search",
        "Search the skill registry for installable skills by a few words; each result "
        "has the entry id to recommend and whether it is already installed.",
        RegistrySearchArgs,
        skill_registry_search,
    ),
    _entry(
        "skill_registry_browse",
        "List the skill registry, optionally one category.",
        RegistryBrowseArgs,
        skill_registry_browse,
    ),
    _entry(
        "workspace_list_files",
        "List the files in the workspace's files/ folder.",
        NoArgs,
        workspace_list_files,
    ),
    _entry(
        "workspace_read_file",
        "Read one text file from the workspace's files/ folder (a path as listed).",
        ReadFileArgs,
        workspace_read_file,
    ),
    _entry(
        "web_search_tool",
        "Search the web for fresh external facts. Use only when memory, profile and "
        "skills cannot answer; keep queries short.",
        WebSearchArgs,
        web_search_tool,
    ),
    _entry(
        "web_fetch",
        "Fetch one public http(s) page and return its readable text (size-capped). "
        "Private and local addresses are refused.",
        WebFetchArgs,
        web_fetch,
    ),
)
"""Every read-only tool of the scout, in the order they are offered."""


def build_scout_registry(
    workspace: Workspace,
    *,
    web_search: WebSearchProvider | None = None,
    allow_private_addresses: bool | None = None,
    registry_url: str | None = None,
    web_timeout: float | None = None,
    exclude_conversations: Iterable[str] = (),
    embedder: Embedder | Literal["config"] | None = "config",
) -> ToolRegistry:
    """Every tool of :data:`CATALOGUE`, bound to ``workspace``.

    ``web_search`` is the search provider (without one ``web_search_tool`` answers that
    search is not configured); ``allow_private_addresses`` lets ``web_fetch`` reach
    loopback and private networks (``None`` reads ``web.allow_private_addresses`` from the
    lab's config, default false); ``registry_url`` adds a remote skill registry (a JSON list
    shaped like ``registry.json``, fetched once; local entries win when ids collide);
    ``web_timeout`` bounds each fetch in seconds (``None`` reads ``web.timeout_s``,
    default 10); ``memory_recall`` never returns the past conversations named in
    ``exclude_conversations``, and reads by meaning with ``embedder`` (``"config"``: the
    one ``[memory] semantic`` names; ``None``: words alone).
    """
    context = ToolContext(
        workspace,
        web_search=web_search,
        allow_private_addresses=allow_private_addresses,
        web_timeout=web_timeout,
        registry_url=registry_url,
        exclude_conversations=frozenset(exclude_conversations),
        embedder=embedder,
    )
    return ToolRegistry(entry.bind(context) for entry in CATALOGUE)
