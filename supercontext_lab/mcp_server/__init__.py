"""The pre-flight in any MCP client: ``supercontext-lab mcp --workspace DIR``.

``service`` answers (the pre-flight, recall, the profile and the notes of one workspace)
with no MCP in it; ``server`` puts it behind the official ``mcp`` SDK (the ``mcp`` extra),
imported only when a server is built (``_sdk``), so the rest of the package never needs it.
"""

from __future__ import annotations

from .server import build_server, run_server
from .service import ContextService, Prepared

__all__ = ["ContextService", "Prepared", "build_server", "run_server"]
