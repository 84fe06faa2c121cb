"""supercontext_lab: the SuperContext pre-flight pattern, runnable and inspectable in Jupyter.

Before the orchestrator reads the first message of a new thread, a cheap read-only
*context scout* sweeps memory, profile, skills and integrations and returns one bounded
``[context_bundle]`` envelope; the harness validates it and prepends it to the message,
falling back to a cold start on any failure.

Public names load on first use (PEP 562), so ``import supercontext_lab`` stays cheap
and a script pays only for what it touches. Nothing here imports Jupyter:
``%load_ext supercontext_lab`` loads the notebook layer lazily.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import (
    AgentDefinitionError,
    CacheError,
    ConfigError,
    DatasetError,
    InputLimitError,
    MemoryIndexError,
    ModelError,
    ModelTimeoutError,
    PathRefusedError,
    ScoutError,
    SupercontextError,
    ToolError,
    ToolNotAllowedError,
    WorkspaceError,
)

if TYPE_CHECKING:
    from .agents.definition import AgentDefinition, default_agent_definition, load_agent_definition
    from .agents.toml_edit import edit_agent_toml, save_agent_files, set_tool_enabled
    from .bundle import (
        ContextBundle,
        RecommendedSkill,
        RecommendedToolCall,
        bundle_rejection_reason,
        extract_context_bundle,
        fit_bundle,
        parse_context_bundle,
        parse_has_enough_context,
        parse_proposed_goal,
    )
    from .config import (
        FlagStatus,
        get_super_context_enabled,
        lab_home,
        set_super_context_enabled,
        super_context_status,
    )
    from .gate import (
        SKIP_REASONS,
        has_prior_conversation,
        should_run_super_context,
        super_context_skip_reason,
    )
    from .harness import Thread, TurnResult
    from .models.base import ChatModel, Message, ToolCall, ToolSpec
    from .models.offline import OfflineOrchestratorModel, OfflineScoutModel
    from .models.openai import OpenAICompatibleModel
    from .routes import ModelRoute, get_model_route, parse_model_id, set_model_route
    from .scout import ScoutRun, TraceStep, run_scout
    from .sources.memory import MemoryHit, MemoryTree
    from .sources.workspace import Workspace, demo_workspace_path, open_workspace

# Public name -> the submodule that defines it, imported on first access.
_LAZY = {
    "AgentDefinition": "agents.definition",
    "default_agent_definition": "agents.definition",
    "load_agent_definition": "agents.definition",
    "edit_agent_toml": "agents.toml_edit",
    "save_agent_files": "agents.toml_edit",
    "set_tool_enabled": "agents.toml_edit",
    "ContextBundle": "bundle",
    "RecommendedSkill": "bundle",
    "RecommendedToolCall": "bundle",
    "bundle_rejection_reason": "bundle",
    "extract_context_bundle": "bundle",
    "fit_bundle": "bundle",
    "parse_context_bundle": "bundle",
    "parse_has_enough_context": "bundle",
    "parse_proposed_goal": "bundle",
    "FlagStatus": "config",
    "ModelRoute": "routes",
    "get_model_route": "routes",
    "get_super_context_enabled": "config",
    "lab_home": "config",
    "parse_model_id": "routes",
    "set_model_route": "routes",
    "set_super_context_enabled": "config",
    "super_context_status": "config",
    "SKIP_REASONS": "gate",
    "has_prior_conversation": "gate",
    "should_run_super_context": "gate",
    "super_context_skip_reason": "gate",
    "ChatModel": "models.base",
    "MemoryHit": "sources.memory",
    "MemoryTree": "sources.memory",
    "Message": "models.base",
    "OfflineOrchestratorModel": "models.offline",
    "OfflineScoutModel": "models.offline",
    "OpenAICompatibleModel": "models.openai",
    "ScoutRun": "scout",
    "Thread": "harness",
    "ToolCall": "models.base",
    "ToolSpec": "models.base",
    "TraceStep": "scout",
    "TurnResult": "harness",
    "Workspace": "sources.workspace",
    "demo_workspace_path": "sources.workspace",
    "open_workspace": "sources.workspace",
    "run_scout": "scout",
}

__all__ = [
    "SKIP_REASONS",
    "AgentDefinition",
    "AgentDefinitionError",
    "CacheError",
    "ChatModel",
    "ConfigError",
    "ContextBundle",
    "DatasetError",
    "FlagStatus",
    "InputLimitError",
    "MemoryHit",
    "MemoryIndexError",
    "MemoryTree",
    "Message",
    "ModelError",
    "ModelRoute",
    "ModelTimeoutError",
    "OfflineOrchestratorModel",
    "OfflineScoutModel",
    "OpenAICompatibleModel",
    "PathRefusedError",
    "RecommendedSkill",
    "RecommendedToolCall",
    "ScoutError",
    "ScoutRun",
    "SupercontextError",
    "Thread",
    "ToolCall",
    "ToolError",
    "ToolNotAllowedError",
    "ToolSpec",
    "TraceStep",
    "TurnResult",
    "Workspace",
    "WorkspaceError",
    "__version__",
    "bundle_rejection_reason",
    "default_agent_definition",
    "demo_workspace_path",
    "edit_agent_toml",
    "extract_context_bundle",
    "fit_bundle",
    "get_model_route",
    "get_super_context_enabled",
    "has_prior_conversation",
    "lab_home",
    "load_agent_definition",
    "load_ipython_extension",
    "open_workspace",
    "parse_context_bundle",
    "parse_has_enough_context",
    "parse_model_id",
    "parse_proposed_goal",
    "run_scout",
    "save_agent_files",
    "set_model_route",
    "set_super_context_enabled",
    "set_tool_enabled",
    "should_run_super_context",
    "super_context_skip_reason",
    "super_context_status",
    "unload_ipython_extension",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'supercontext_lab' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext supercontext_lab``: register the magics (imports the notebook layer)."""
    importlib.import_module(".lab.extension", __name__).load_ipython_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext supercontext_lab``."""
    importlib.import_module(".lab.extension", __name__).unload_ipython_extension(ipython)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Where Jupyter Server finds the REST endpoint for the flag."""
    return [{"module": "supercontext_lab.lab.server"}]
