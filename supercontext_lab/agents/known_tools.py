"""Every tool name an agent definition may mention, and whether it is read-only.

The loader uses this table to reject unknown tools and, in a ``read_only`` sandbox, any
tool that can write, send, install, execute or delegate. The source registry implements
the read-only ones and a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KNOWN_TOOLS", "READ_ONLY_TOOLS", "KnownTool"]


@dataclass(frozen=True)
class KnownTool:
    name: str
    read_only: bool
    why: str


_TABLE = [
    KnownTool("memory_recall", True, "searches the memory tree"),
    KnownTool("memory_flavour", True, "reads one facet of the user's flavour profile"),
    KnownTool("list_workflows", True, "lists installed skills"),
    KnownTool("skill_registry_search", True, "searches the skill registry"),
    KnownTool("skill_registry_browse", True, "lists the skill registry"),
    KnownTool("web_search_tool", True, "searches the web through a configured provider"),
    KnownTool("web_fetch", True, "fetches one public web page"),
    KnownTool("workspace_list_files", True, "lists the workspace's files/ folder"),
    KnownTool("workspace_read_file", True, "reads one file inside the workspace's files/ folder"),
    # Tools below exist for orchestrators but can change state; never for a read-only scout.
    KnownTool("memory_tree", False, "bundles a write mode (ingest_document) with its reads"),
    KnownTool("memory_store", False, "writes memory"),
    KnownTool("skill_registry_install", False, "installs a skill"),
    KnownTool("skill_registry_uninstall", False, "uninstalls a skill"),
    KnownTool("run_workflow", False, "runs a skill with side effects"),
    KnownTool("shell", False, "executes commands"),
    KnownTool("file_write", False, "writes files"),
    KnownTool("spawn_subagent", False, "delegates to another agent"),
    KnownTool("agent_prepare_context", False, "runs the scout itself (recursion)"),
]

KNOWN_TOOLS: dict[str, KnownTool] = {tool.name: tool for tool in _TABLE}
READ_ONLY_TOOLS: frozenset[str] = frozenset(t.name for t in _TABLE if t.read_only)
