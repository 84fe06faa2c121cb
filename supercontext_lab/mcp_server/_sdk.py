"""The one place that knows which ``mcp`` SDK is installed: 1.x's FastMCP or 2.x's MCPServer.

Both lines are the official SDK. Jupyter AI 3.2 pins fastmcp 3.4, which needs ``mcp<2``,
so where the server lives beside the persona (Binder, a user's lab) it is 1.x's
``mcp.server.fastmcp.FastMCP``; elsewhere 2.x's ``mcp.server.mcpserver.MCPServer`` serves
the same tools. Their decorators and the wire types are the same; what differs is where
the class and its exceptions live and where the HTTP address is given (1.x: to the
constructor, 2.x: to ``run``), which :func:`new_server`, :func:`anticipated_errors` and
:func:`serve` hide.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import Any

from ..errors import ConfigError

__all__ = ["HOST", "INSTALL_HINT", "anticipated_errors", "mcp_major", "new_server", "serve"]

INSTALL_HINT = 'pip install "supercontext-lab[mcp]"'
"""The one command that brings the MCP SDK."""
HOST = "127.0.0.1"
"""Streamable HTTP listens on loopback only: the tools read the user's workspace."""


def mcp_major() -> int:
    """The major version of the installed ``mcp`` SDK; a one-line
    :class:`~supercontext_lab.errors.ConfigError` naming the extra when it is missing."""
    try:
        version = importlib.metadata.version("mcp")
        importlib.import_module("mcp")
    except (ImportError, importlib.metadata.PackageNotFoundError):
        raise ConfigError(
            f"The MCP server needs the mcp package; install it with: {INSTALL_HINT}"
        ) from None
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 1


def new_server(name: str, instructions: str, *, port: int) -> Any:
    """A server of the installed line, named ``name``, that will listen on
    :data:`HOST`:``port`` when served over HTTP."""
    if mcp_major() >= 2:
        module = importlib.import_module("mcp.server.mcpserver")
        return module.MCPServer(name, instructions=instructions, log_level="WARNING")
    module = importlib.import_module("mcp.server.fastmcp")
    return module.FastMCP(
        name, instructions=instructions, host=HOST, port=port, log_level="WARNING"
    )


def anticipated_errors() -> tuple[type[Exception], type[Exception]]:
    """The SDK's ``ToolError`` and ``ResourceError``: raised from a tool or a resource,
    their message reaches the client as it is (2.x hides any other exception's message
    behind a generic one, and logs its traceback)."""
    name = "mcp.server.mcpserver" if mcp_major() >= 2 else "mcp.server.fastmcp"
    module = importlib.import_module(f"{name}.exceptions")
    return module.ToolError, module.ResourceError


def serve(server: Any, *, http: bool, port: int) -> None:
    """Run ``server`` until its client goes (stdio) or the process is stopped (HTTP)."""
    if not http:
        server.run("stdio")
    elif mcp_major() >= 2:
        server.run("streamable-http", host=HOST, port=port)
    else:
        server.run("streamable-http")
