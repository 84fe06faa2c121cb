"""The ``supercontext-lab`` command line (the console script calls :func:`main`).

Exit codes: 0 success, 1 the job ran but produced no valid result (for example a model
output that would be rejected), 2 bad input (one line on stderr, nothing on stdout, no
traceback). ``commands`` builds the parser and runs the command named; each command lives
in a module of its own (``bundle``, ``demo``, ``scout``, ``config``, ``eval``, ``memory``,
``workspace``, ``mcp``, and ``cache`` in ``preflight``), which imports the rest of the package only
when the command runs, so ``--help`` stays fast.
"""

from __future__ import annotations

from .commands import main

__all__ = ["main"]
