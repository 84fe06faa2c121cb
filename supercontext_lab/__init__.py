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

from ._lazy import lazy_exports
from ._version import __version__
from .errors import (
    AgentDefinitionError,
    CacheError,
    ConfigError,
    ConversationImportError,
    ConversationStoreError,
    DatasetError,
    DuplicateKeyError,
    InputLimitError,
    InputTooDeepError,
    InputTooLargeError,
    MemoryIndexError,
    ModelError,
    ModelTimeoutError,
    NonJsonConstantError,
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
        ColdStartReason,
        has_prior_conversation,
        should_run_super_context,
        structural_skip_reason,
        super_context_skip_reason,
    )
    from .harness import Preparation, Thread, TurnResult
    from .models.base import ChatModel, Message, ModelReply, ToolCall, ToolSpec, Usage
    from .models.offline import OfflineOrchestratorModel, OfflineScoutModel
    from .models.openai import OpenAICompatibleModel
    from .routes import ModelRoute, get_model_route, parse_model_id, set_model_route
    from .scout import ScoutRun, ScoutStatus, StopCause, TraceStep, run_scout
    from .sources.demo import demo_workspace_path, open_workspace
    from .sources.memory import MemoryHit, MemoryTree
    from .sources.web_search import WebResult, WebSearchProvider
    from .sources.workspace import Workspace
    from .tools import Tool, ToolRegistry, ToolResult, build_scout_registry

# The public names of each submodule, imported on first access.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "agents.definition": ("AgentDefinition", "default_agent_definition", "load_agent_definition"),
    "agents.toml_edit": ("edit_agent_toml", "save_agent_files", "set_tool_enabled"),
    "bundle": (
        "ContextBundle",
        "RecommendedSkill",
        "RecommendedToolCall",
        "bundle_rejection_reason",
        "extract_context_bundle",
        "fit_bundle",
        "parse_context_bundle",
        "parse_has_enough_context",
        "parse_proposed_goal",
    ),
    "config": (
        "FlagStatus",
        "get_super_context_enabled",
        "lab_home",
        "set_super_context_enabled",
        "super_context_status",
    ),
    "gate": (
        "SKIP_REASONS",
        "ColdStartReason",
        "has_prior_conversation",
        "should_run_super_context",
        "structural_skip_reason",
        "super_context_skip_reason",
    ),
    "harness": ("Preparation", "Thread", "TurnResult"),
    "models.base": ("ChatModel", "Message", "ModelReply", "ToolCall", "ToolSpec", "Usage"),
    "models.offline": ("OfflineOrchestratorModel", "OfflineScoutModel"),
    "models.openai": ("OpenAICompatibleModel",),
    "routes": ("ModelRoute", "get_model_route", "parse_model_id", "set_model_route"),
    "scout": ("ScoutRun", "ScoutStatus", "StopCause", "TraceStep", "run_scout"),
    "sources.demo": ("demo_workspace_path", "open_workspace"),
    "sources.memory": ("MemoryHit", "MemoryTree"),
    "sources.web_search": ("WebResult", "WebSearchProvider"),
    "sources.workspace": ("Workspace",),
    "tools": ("Tool", "ToolRegistry", "ToolResult", "build_scout_registry"),
}

__all__ = [
    "SKIP_REASONS",
    "AgentDefinition",
    "AgentDefinitionError",
    "CacheError",
    "ChatModel",
    "ColdStartReason",
    "ConfigError",
    "ContextBundle",
    "ConversationImportError",
    "ConversationStoreError",
    "DatasetError",
    "DuplicateKeyError",
    "FlagStatus",
    "InputLimitError",
    "InputTooDeepError",
    "InputTooLargeError",
    "MemoryHit",
    "MemoryIndexError",
    "MemoryTree",
    "Message",
    "ModelError",
    "ModelReply",
    "ModelRoute",
    "ModelTimeoutError",
    "NonJsonConstantError",
    "OfflineOrchestratorModel",
    "OfflineScoutModel",
    "OpenAICompatibleModel",
    "PathRefusedError",
    "Preparation",
    "RecommendedSkill",
    "RecommendedToolCall",
    "ScoutError",
    "ScoutRun",
    "ScoutStatus",
    "StopCause",
    "SupercontextError",
    "Thread",
    "Tool",
    "ToolCall",
    "ToolError",
    "ToolNotAllowedError",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "TraceStep",
    "TurnResult",
    "Usage",
    "WebResult",
    "WebSearchProvider",
    "Workspace",
    "WorkspaceError",
    "__version__",
    "build_scout_registry",
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
    "structural_skip_reason",
    "super_context_skip_reason",
    "super_context_status",
    "unload_ipython_extension",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext supercontext_lab``: register the magics (imports the notebook layer)."""
    importlib.import_module(".lab.extension", __name__).load_ipython_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext supercontext_lab``."""
    importlib.import_module(".lab.extension", __name__).unload_ipython_extension(ipython)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Where Jupyter Server finds the REST endpoint for the flag."""
    return [{"module": "supercontext_lab.lab.server"}]
