"""Agent definitions (``agent.toml`` + ``prompt.md``), their loader, editor and prompts."""

from __future__ import annotations

from .definition import (
    AgentDefinition,
    ModelSection,
    SubagentsSection,
    ToolsSection,
    default_agent_definition,
    default_agent_toml,
    default_prompt,
    load_agent_definition,
)
from .known_tools import KNOWN_TOOLS, READ_ONLY_TOOLS, KnownTool
from .prompt import build_scout_system_prompt, build_task_message, render_connected_integrations
from .toml_edit import backup_path, edit_agent_toml, save_agent_files, set_tool_enabled

__all__ = [
    "KNOWN_TOOLS",
    "READ_ONLY_TOOLS",
    "AgentDefinition",
    "KnownTool",
    "ModelSection",
    "SubagentsSection",
    "ToolsSection",
    "backup_path",
    "build_scout_system_prompt",
    "build_task_message",
    "default_agent_definition",
    "default_agent_toml",
    "default_prompt",
    "edit_agent_toml",
    "load_agent_definition",
    "render_connected_integrations",
    "save_agent_files",
    "set_tool_enabled",
]
