"""The scout's read-only tools, bound to a workspace.

Every tool answers with compact JSON text (the offline model and real models both parse
it) and keeps the same value in :attr:`ToolResult.data`. Argument models forbid unknown
keys, so a model that invents an argument is told which one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from .._bounded import json_loads
from ..errors import ToolError, WorkspaceError
from .memory import MAX_RECALL_LIMIT
from .registry import Tool, ToolResult, make_tool
from .web import DEFAULT_MAX_BYTES, WebSearchProvider, web_fetch, web_search_tool
from .workspace import RegistryEntry, Workspace, parse_registry_entries

__all__ = [
    "FLAVOUR_ALIASES",
    "FLAVOUR_FACETS",
    "MAX_LISTED_FILES",
    "normalise_facet",
    "rank_registry",
    "registry_tokens",
    "web_tools",
    "workspace_tools",
]

FLAVOUR_FACETS: tuple[str, ...] = (
    "communication",
    "coding_style",
    "stack",
    "workflow",
    "environment",
    "directives",
    "anti_preferences",
)
"""The flavour facets, in the order they are listed to a model."""

FLAVOUR_ALIASES: dict[str, str] = {
    "comms": "communication",
    "communication_style": "communication",
    "tone": "communication",
    "coding": "coding_style",
    "code_style": "coding_style",
    "style": "coding_style",
    "tech": "stack",
    "tech_stack": "stack",
    "tools": "stack",
    "process": "workflow",
    "work": "workflow",
    "env": "environment",
    "setup": "environment",
    "machine": "environment",
    "rules": "directives",
    "instructions": "directives",
    "dislikes": "anti_preferences",
    "avoid": "anti_preferences",
    "anti": "anti_preferences",
    "donts": "anti_preferences",
}
"""Other names a model may use for a facet (compared after :func:`normalise_facet`)."""

MAX_LISTED_FILES = 500
MAX_READ_CHARS = 100_000
REGISTRY_TIMEOUT_S = 10.0


def _facet_key(name: str) -> str:
    # "Coding Style", "coding-style" and " coding_style " are the same facet; "don'ts" too.
    return "_".join(re.sub(r"['’]", "", name).strip().lower().replace("-", " ").split())


def normalise_facet(name: str) -> str | None:
    """The canonical facet for ``name`` (a facet or an alias), or ``None`` when unknown."""
    key = _facet_key(name)
    if key in FLAVOUR_FACETS:
        return key
    return FLAVOUR_ALIASES.get(key)


# ---------------------------------------------------------------------- registry search

_STOP_WORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how",
        "i", "in", "into", "is", "it", "me", "my", "of", "on", "or", "our", "please",
        "should", "so", "that", "the", "this", "to", "up", "us", "we", "what", "when",
        "which", "with", "you", "your",
    }
)  # fmt: skip


def _stem(token: str) -> str:
    # Plural-insensitive whole words ("figures" finds "figure") without a stemmer.
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def registry_tokens(text: str) -> set[str]:
    """Lower-case whole-word tokens of ``text``, singularised, stop words dropped."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {_stem(w) for w in words if w not in _STOP_WORDS}


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


# ---------------------------------------------------------------------- argument models


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemoryRecallArgs(_Args):
    """Arguments of ``memory_recall``."""

    namespace: str = Field(
        default="global",
        min_length=1,
        description="Memory namespace such as 'global' or 'skill-<id>'; '*' searches all.",
    )
    query: str = Field(min_length=1, description="Words to search for.")
    limit: int = Field(
        default=5, ge=1, description=f"How many hits (at most {MAX_RECALL_LIMIT} are returned)."
    )


class MemoryFlavourArgs(_Args):
    """Arguments of ``memory_flavour``."""

    flavour: str = Field(min_length=1, description="The facet: " + ", ".join(FLAVOUR_FACETS) + ".")


class NoArgs(_Args):
    """A tool without arguments."""


class RegistrySearchArgs(_Args):
    """Arguments of ``skill_registry_search``."""

    query: str = Field(min_length=1, description="What the skill should do, in a few words.")
    limit: int = Field(default=5, ge=1, le=50, description="How many results (1-50).")


class RegistryBrowseArgs(_Args):
    """Arguments of ``skill_registry_browse``."""

    category: str | None = Field(default=None, description="Only this category (optional).")


class ReadFileArgs(_Args):
    """Arguments of ``workspace_read_file``."""

    path: str = Field(min_length=1, description="A path inside files/, as listed.")
    max_chars: int = Field(
        default=20_000, ge=1, le=MAX_READ_CHARS, description="Return at most this many characters."
    )


class WebSearchArgs(_Args):
    """Arguments of ``web_search_tool``."""

    query: str = Field(min_length=1, description="What to search the web for.")
    limit: int = Field(default=5, ge=1, le=10, description="How many results (1-10).")


class WebFetchArgs(_Args):
    """Arguments of ``web_fetch``."""

    url: str = Field(min_length=1, description="An http or https URL of a public page.")
    max_bytes: int = Field(
        default=DEFAULT_MAX_BYTES,
        ge=1,
        le=5_000_000,
        description="Stop reading the body after this many bytes.",
    )


# ---------------------------------------------------------------------- workspace tools


def _entry_json(entry: RegistryEntry, installed: set[str]) -> dict[str, Any]:
    return {
        "id": entry.id,
        "name": entry.name,
        "description": entry.description,
        "tags": list(entry.tags),
        "category": entry.category,
        "installed": entry.id in installed,
    }


def _remote_registry_loader(url: str) -> Callable[[], list[RegistryEntry]]:
    """A loader that fetches ``url`` once (a JSON list shaped like registry.json)."""
    cache: list[list[RegistryEntry]] = []

    def load() -> list[RegistryEntry]:
        if cache:
            return cache[0]
        try:
            response = httpx.get(url, timeout=REGISTRY_TIMEOUT_S, follow_redirects=True)
            response.raise_for_status()
            data = json_loads(response.content)
        except httpx.HTTPError as exc:
            raise ToolError(f"the skill registry at {url} cannot be reached ({exc}).") from exc
        except ValueError as exc:
            raise ToolError(f"the skill registry at {url} did not answer JSON ({exc}).") from exc
        try:
            entries = parse_registry_entries(data, f"the skill registry at {url}")
        except WorkspaceError as exc:
            raise ToolError(str(exc)) from exc
        cache.append(entries)
        return entries

    return load


def workspace_tools(workspace: Workspace, *, registry_url: str | None = None) -> list[Tool]:
    """The memory, flavour, skill and file tools bound to ``workspace``.

    With ``registry_url`` the skill registry also holds the entries served there (fetched
    once, on first use); local ``registry.json`` entries win when ids collide.
    """
    remote = _remote_registry_loader(registry_url) if registry_url else None

    def registry_entries() -> list[RegistryEntry]:
        entries = list(workspace.registry)
        if remote is not None:
            known = {e.id for e in entries}
            entries.extend(e for e in remote() if e.id not in known)
        return entries

    def installed_ids() -> set[str]:
        return {skill.dir_name for skill in workspace.skills}

    def memory_recall(args: MemoryRecallArgs) -> ToolResult:
        limit = min(args.limit, MAX_RECALL_LIMIT)
        hits = workspace.memory.recall(args.namespace, args.query, limit=limit)
        payload: dict[str, Any] = {
            "namespace": args.namespace,
            "query": args.query,
            "hits": [
                {
                    "namespace": hit.namespace,
                    "key": hit.key,
                    "category": hit.category,
                    "content": hit.content,
                    "score": round(hit.score, 3),
                }
                for hit in hits
            ],
        }
        if not hits:
            payload["note"] = "no memory matched; try other words or namespace '*'"
        return ToolResult.success(payload)

    def memory_flavour(args: MemoryFlavourArgs) -> ToolResult:
        facet = normalise_facet(args.flavour)
        if facet is None:
            return ToolResult.failure(
                f"memory_flavour: unknown facet '{args.flavour}'; valid facets: "
                + ", ".join(FLAVOUR_FACETS)
            )
        files = workspace.flavour
        content = files.get(facet)
        if content is None:
            # Hand-named files ("coding-style.md", "tech.md") count for their facet.
            content = next((t for n, t in files.items() if normalise_facet(n) == facet), None)
        if content is None:
            return ToolResult.success(
                {"facet": facet, "content": "", "note": f"no flavour/{facet}.md in this workspace"}
            )
        return ToolResult.success({"facet": facet, "content": content.strip()})

    def list_workflows(_args: NoArgs) -> ToolResult:
        skills = [
            {
                "dir_name": s.dir_name,
                "name": s.name,
                "description": s.description,
                "tags": list(s.tags),
            }
            for s in workspace.skills
        ]
        return ToolResult.success({"skills": skills})

    def skill_registry_search(args: RegistrySearchArgs) -> ToolResult:
        installed = installed_ids()
        results = [
            {**_entry_json(entry, installed), "score": score}
            for entry, score in rank_registry(registry_entries(), args.query, args.limit)
        ]
        return ToolResult.success({"query": args.query, "results": results})

    def skill_registry_browse(args: RegistryBrowseArgs) -> ToolResult:
        installed = installed_ids()
        entries = registry_entries()
        wanted = args.category.strip().lower() if args.category else None
        chosen = [e for e in entries if wanted is None or e.category.lower() == wanted]
        return ToolResult.success(
            {
                "category": args.category,
                "results": [_entry_json(e, installed) for e in chosen],
                "categories": sorted({e.category for e in entries if e.category}),
            }
        )

    def workspace_list_files(_args: NoArgs) -> ToolResult:
        files = workspace.list_files()
        payload: dict[str, Any] = {"files": files[:MAX_LISTED_FILES], "count": len(files)}
        if len(files) > MAX_LISTED_FILES:
            payload["note"] = f"only the first {MAX_LISTED_FILES} files are listed"
        return ToolResult.success(payload)

    def workspace_read_file(args: ReadFileArgs) -> ToolResult:
        # One character more than asked tells whether the file was cut.
        text = workspace.read_file(args.path, max_chars=args.max_chars + 1)
        truncated = len(text) > args.max_chars
        return ToolResult.success(
            {"path": args.path, "content": text[: args.max_chars], "truncated": truncated}
        )

    return [
        make_tool(
            "memory_recall",
            "Search the user's memory tree (facts, decisions, past conversations). Give a "
            "namespace ('global' by default, 'skill-<id>' for a skill's notes, '*' for all) "
            "and a few query words; hits carry category, key, content and score.",
            MemoryRecallArgs,
            memory_recall,
        ),
        make_tool(
            "memory_flavour",
            "Read one facet of how the user likes to work: " + ", ".join(FLAVOUR_FACETS) + ". "
            "Prefer it when the request depends on preferences rather than a specific fact.",
            MemoryFlavourArgs,
            memory_flavour,
        ),
        make_tool(
            "list_workflows",
            "List the installed skills. Recommend an installed skill by its dir_name "
            "(the id run_workflow resolves), never by its display name.",
            NoArgs,
            list_workflows,
        ),
        make_tool(
            "skill_registry_search",
            "Search the skill registry for installable skills by a few words; each result "
            "has the entry id to recommend and whether it is already installed.",
            RegistrySearchArgs,
            skill_registry_search,
        ),
        make_tool(
            "skill_registry_browse",
            "List the skill registry, optionally one category.",
            RegistryBrowseArgs,
            skill_registry_browse,
        ),
        make_tool(
            "workspace_list_files",
            "List the files in the workspace's files/ folder.",
            NoArgs,
            workspace_list_files,
        ),
        make_tool(
            "workspace_read_file",
            "Read one text file from the workspace's files/ folder (a path as listed).",
            ReadFileArgs,
            workspace_read_file,
        ),
    ]


# ---------------------------------------------------------------------- web tools


def web_tools(
    *,
    web_search: WebSearchProvider | None = None,
    allow_private_addresses: bool | None = None,
    timeout: float | None = None,
) -> list[Tool]:
    """The ``web_search_tool`` and ``web_fetch`` tools, configured."""

    def search(args: WebSearchArgs) -> ToolResult:
        return web_search_tool(args.query, args.limit, provider=web_search)

    def fetch(args: WebFetchArgs) -> ToolResult:
        return web_fetch(
            args.url,
            args.max_bytes,
            timeout=timeout,
            allow_private_addresses=allow_private_addresses,
        )

    return [
        make_tool(
            "web_search_tool",
            "Search the web for fresh external facts. Use only when memory, profile and "
            "skills cannot answer; keep queries short.",
            WebSearchArgs,
            search,
        ),
        make_tool(
            "web_fetch",
            "Fetch one public http(s) page and return its readable text (size-capped). "
            "Private and local addresses are refused.",
            WebFetchArgs,
            fetch,
        ),
    ]
