"""What the command-line tests share: the command line run in a fresh process, as a user
would run it."""

from __future__ import annotations

import os
import subprocess
import sys


def run_cli(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m supercontext_lab ARGS`` with ``stdin`` as its input and ``env`` added to
    the environment; its output as text."""
    return subprocess.run(
        [sys.executable, "-m", "supercontext_lab", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )
