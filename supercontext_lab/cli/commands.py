"""The ``supercontext-lab`` command line: its parser, made of every command's own, and
:func:`main`, which runs the command named and turns what goes wrong into an exit code.

Each command lives in a module of its own, which adds its parser (``add_<name>_parser``)
and its handler: ``bundle check`` (:mod:`.bundle`), ``demo`` (:mod:`.demo`), ``scout``
(:mod:`.scout`), ``config`` (:mod:`.config`), ``eval`` (:mod:`.eval`), ``memory``
(:mod:`.memory`), ``workspace check`` (:mod:`.workspace`), ``cache build``
(:mod:`.preflight`) and ``mcp`` (:mod:`.mcp`).

Exit codes: 0 success, 1 the job ran but produced no valid result (for example a model
output that would be rejected), 2 bad input (one line on stderr, nothing on stdout, no
traceback).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from .._version import __version__
from ..errors import SupercontextError
from .bundle import add_bundle_parser
from .common import PROG, Parser, UsageProblem, emit
from .config import add_config_parser
from .demo import add_demo_parser
from .scout import add_scout_parser

__all__ = ["main"]


def _build_parser() -> Parser:
    parser = Parser(prog=PROG, description="Run and inspect the SuperContext context scout.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    add_bundle_parser(sub)
    add_demo_parser(sub)
    add_scout_parser(sub)
    add_config_parser(sub)

    # Imported here so that importing this module stays light (the handler imports the rest).
    from .eval import add_eval_parser
    from .mcp import add_mcp_parser
    from .memory import add_memory_parser
    from .preflight import add_cache_parser
    from .workspace import add_workspace_parser

    add_eval_parser(sub)
    add_memory_parser(sub)
    add_workspace_parser(sub)
    add_cache_parser(sub)
    add_mcp_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except UsageProblem as exc:
        emit(str(exc), err=True)
        return 2
    except SupercontextError as exc:
        emit(f"{PROG}: error: {exc}", err=True)
        return 2
    except KeyboardInterrupt:
        emit(f"{PROG}: interrupted", err=True)
        return 130
