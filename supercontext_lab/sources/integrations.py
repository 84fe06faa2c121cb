"""Integrations and the orchestrator's tool catalogue, as a workspace describes them.

``integrations.toml`` lists ``[[integration]]`` toolkits (connected or not);
``orchestrator_tools.toml`` lists the ``[[tool]]`` catalogue the scout may recommend,
with :data:`DEFAULT_ORCHESTRATOR_TOOLS` used when a workspace has none.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_ORCHESTRATOR_TOOLS",
    "Integration",
    "IntegrationIn",
    "OrchestratorTool",
    "ToolIn",
]


@dataclass(frozen=True)
class Integration:
    """A toolkit the orchestrator can reach (Gmail, Slack, ...), connected or not."""

    toolkit: str
    description: str
    connected: bool


@dataclass(frozen=True)
class OrchestratorTool:
    """One tool in the orchestrator's catalogue (what the scout may recommend calling)."""

    name: str
    description: str


def _delegate(toolkit: str, label: str, scope: str) -> OrchestratorTool:
    return OrchestratorTool(
        f"delegate_{toolkit}",
        f"Hand a task to the {label} integration's agent ({scope}); it acts on the "
        "user's connected account and reports back.",
    )


DEFAULT_ORCHESTRATOR_TOOLS: tuple[OrchestratorTool, ...] = (
    OrchestratorTool(
        "memory_recall",
        "Search the user's memory tree by namespace and query; returns the best matching "
        "notes with their category and key.",
    ),
    OrchestratorTool(
        "memory_store",
        "Save a fact, preference or decision to the memory tree under a namespace and key.",
    ),
    OrchestratorTool("web_search", "Search the web and return titles, URLs and snippets."),
    OrchestratorTool("web_fetch", "Fetch one web page and return its readable text."),
    OrchestratorTool(
        "run_workflow",
        "Run an installed skill by its dir_name slug with a JSON object of inputs.",
    ),
    OrchestratorTool(
        "skill_registry_install",
        "Install a skill from the registry by its entry id so run_workflow can run it.",
    ),
    OrchestratorTool("file_read", "Read a text file from the user's workspace."),
    OrchestratorTool("file_write", "Create or overwrite a text file in the user's workspace."),
    OrchestratorTool(
        "shell", "Run a shell command in the user's environment and return its output."
    ),
    OrchestratorTool(
        "spawn_subagent",
        "Start a worker agent on a self-contained sub-task and wait for its result.",
    ),
    OrchestratorTool(
        "agent_prepare_context",
        "Run the context scout on a question and return a [context_bundle] envelope.",
    ),
    OrchestratorTool("set_thread_goal", "Set or replace the one-line goal of this thread."),
    _delegate("gmail", "Gmail", "search, read, draft and send email"),
    _delegate("google_calendar", "Google Calendar", "find, create and move events"),
    _delegate("slack", "Slack", "read channels, search and post messages"),
    _delegate("notion", "Notion", "search, read and edit pages and databases"),
    _delegate("github", "GitHub", "issues, pull requests and repository files"),
    _delegate("google_drive", "Google Drive", "search, read and share documents"),
)
"""The orchestrator catalogue used when a workspace has no ``orchestrator_tools.toml``."""


class IntegrationIn(BaseModel):
    """One ``[[integration]]`` table of integrations.toml, as read."""

    model_config = ConfigDict(extra="ignore", strict=True)

    toolkit: str = Field(min_length=1)
    description: str = ""
    connected: bool = False


class ToolIn(BaseModel):
    """One ``[[tool]]`` table of orchestrator_tools.toml, as read."""

    model_config = ConfigDict(extra="ignore", strict=True)

    name: str = Field(min_length=1)
    description: str = ""
