"""What every command of the command line shares: the program name and one-line errors."""

from __future__ import annotations

import argparse
from typing import NoReturn

from ..errors import SupercontextError

__all__ = ["PROG", "Parser", "UsageProblem"]

PROG = "supercontext-lab"


class UsageProblem(SupercontextError):
    """Bad command-line input: reported as one line with exit status 2.

    Only the command line raises it; its message is the whole line, program name first.
    """


class Parser(argparse.ArgumentParser):
    # argparse prints the whole usage block on errors; a one-line error is kinder in
    # scripts and keeps stderr greppable.
    def error(self, message: str) -> NoReturn:
        raise UsageProblem(f"{self.prog}: {message} (see --help)")
