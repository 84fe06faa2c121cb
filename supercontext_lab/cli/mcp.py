"""``supercontext-lab mcp``: the pre-flight as an MCP server, for any MCP client.

    supercontext-lab mcp --workspace DIR                  # stdio (what MCP hosts launch)
    supercontext-lab mcp --workspace DIR --http [--port 8000]   # streamable HTTP on 127.0.0.1

Tools ``prepare_context`` and ``recall``, resources ``supercontext://profile`` and
``supercontext://memory/{namespace}/{key}``, prompt ``first_turn``
(:mod:`supercontext_lab.mcp_server`). ``--design`` and ``--deadline-ms`` set the server's
default pre-flight design (else ``[preflight]`` in config.toml). Needs the ``mcp`` extra:
without it the command says so in one line and exits 2. Over stdio, stdout carries the
protocol alone; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import PROG, UsageProblem, whole_number
from .preflight import add_preflight_arguments

__all__ = ["add_mcp_parser"]

DEFAULT_PORT = 8000


_port = whole_number(1, 65535, what="a port number")


def add_mcp_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``mcp`` command to the CLI's subparsers."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "mcp",
        help="serve the pre-flight to MCP clients (Claude Desktop, Claude Code, Jupyter AI)",
        description="Serve the workspace's pre-flight over the Model Context Protocol: the "
        "tools prepare_context and recall, the resources supercontext://profile and "
        "supercontext://memory/{namespace}/{key}, and the prompt first_turn. Read-only: "
        "nothing in the workspace is written but the memory index under .supercontext/ "
        "(and the cached envelope, for the cached design). Over stdio by default, which "
        "is what MCP hosts launch; --http serves streamable HTTP on 127.0.0.1. Needs the "
        'mcp extra: pip install "supercontext-lab[mcp]".',
    )
    parser.add_argument("--workspace", help="the workspace folder (default: the shipped demo)")
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead of stdio"
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=None,
        help=f"the HTTP port, with --http (default {DEFAULT_PORT})",
    )
    add_preflight_arguments(parser)
    parser.set_defaults(handler=_cmd_mcp)
    return parser


def _cmd_mcp(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..mcp_server import ContextService, run_server
    from ..mcp_server._sdk import mcp_major

    if args.port is not None and not args.http:
        raise UsageProblem(f"{PROG}: --port needs --http")
    if args.workspace is not None and not Path(args.workspace).is_dir():
        raise UsageProblem(f"{PROG}: workspace folder not found: {args.workspace}")
    mcp_major()  # a missing extra is said before anything is opened
    service = ContextService(args.workspace, design=args.design, deadline_ms=args.deadline_ms)
    run_server(service, http=args.http, port=args.port or DEFAULT_PORT)
    return 0
