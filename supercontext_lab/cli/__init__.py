"""The ``supercontext-lab`` command line (the console script calls :func:`main`).

Exit codes: 0 success, 1 the job ran but produced no valid result (for example a model
output that would be rejected), 2 bad input (one line on stderr, nothing on stdout, no
traceback). ``commands`` holds the commands, ``eval`` the ``eval`` command; both import the
rest of the package only when a command runs, so ``--help`` stays fast.
"""

from __future__ import annotations

from .commands import main

__all__ = ["main"]
