"""The scout's read-only tools: typed, validated, bound to a workspace, never raising.

``base`` holds the machinery (:class:`Tool`, :class:`ToolResult`, :class:`ToolRegistry`),
``catalogue`` the list of tools and :func:`build_scout_registry`; every other module holds
the plain functions answering one group of tools.
"""

from __future__ import annotations

from .base import Tool, ToolRegistry, ToolResult, make_tool
from .catalogue import CATALOGUE, build_scout_registry

__all__ = ["CATALOGUE", "Tool", "ToolRegistry", "ToolResult", "build_scout_registry", "make_tool"]
