"""Bounded parsing of untrusted TOML and JSON text.

``tomllib``, ``tomlkit`` and ``json`` all recurse once per nesting level, so a few
kilobytes of ``[[[[…`` raise ``RecursionError`` (or take minutes: a key of 100,000 dotted
parts makes tomllib and tomlkit quadratic). Every TOML and JSON read of the project goes
through this module, which measures size and nesting *before* handing the text to the
parser and raises a subclass of :class:`~supercontext_lab.errors.InputLimitError` (a
``ValueError``) with a one-line reason: the subclass says which limit was hit, so callers
tell the cases apart by type. Callers turn that into their own error naming the file.

Nesting is measured on the raw text with one regular expression that skips strings (and
TOML comments), so brackets inside a string never count; for TOML the dots of a dotted
key (``a.b.c = 1``, ``[a.b.c]``) count as levels too, the dot of a float does not.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
import sys
from typing import Any

import tomlkit

from .errors import (
    DuplicateKeyError,
    InputLimitError,
    InputTooDeepError,
    InputTooLargeError,
    NonJsonConstantError,
)

__all__ = [
    "MAX_TOML_CHARS",
    "InputLimitError",
    "json_loads",
    "toml_document",
    "toml_loads",
]

# tomllib (3.11+) and its backport tomli share one API.
_tomllib: Any = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")

MAX_DEPTH = 64
"""Deepest nesting accepted in any TOML or JSON text (real files use fewer than 10)."""

MAX_TOML_CHARS = 1_000_000
"""Largest TOML text accepted: config.toml, agent.toml and workspace TOML are small."""


# JSON: strings are removed, then everything but brackets, both in C; the running depth
# is summed by itertools, in C too: no Python code runs per character.
# The string pattern is "unrolled" (runs of plain characters, then one escape) so the
# regex engine does not try an alternation at every character.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}

# TOML: one token per match: a whole string, a comment, a bracket, a key's dot or a
# newline. Everything else is skipped by the regex engine.
_TOML_TOKENS = re.compile(
    r'"""(?:[^\\]|\\.)*?(?:"""|\Z)'
    r"|'''[\s\S]*?(?:'''|\Z)"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?'
    r"|'[^'\n]*'?"
    r"|#[^\n]*"
    r"|[0-9]+(?:\.[0-9]+){2,}"  # a dotted key of numbers (a float has one dot at most)
    r"|(?<![0-9])\.|\.(?![0-9])"  # a key's dot; the dot of a float is not a level
    r"|[\[\]{}\n]",
    re.DOTALL,
)


def _toml_nesting_problem(text: str, max_depth: int) -> str | None:
    depth = 0
    dots = 0  # dots on the current line: the levels of a dotted key
    for match in _TOML_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth = max(depth - 1, 0)
        elif token[-1].isdigit():
            dots += token.count(".")
        elif token == ".":
            dots += 1
        elif token == "\n":
            dots = 0
        else:
            continue
        if depth + dots > max_depth:
            line = text.count("\n", 0, match.start()) + 1
            return f"nested more than {max_depth} levels deep (line {line})"
    return None


def _json_nesting_problem(text: str, max_depth: int) -> str | None:
    if text.count("[") + text.count("{") <= max_depth:
        return None  # too few brackets to nest that deep
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    if max(itertools.accumulate(map(_DELTA.__getitem__, brackets)), default=0) > max_depth:
        return f"nested more than {max_depth} levels deep"
    return None


def _size_problem(text: str | bytes, max_chars: int | None, what: str) -> str | None:
    if max_chars is not None and len(text) > max_chars:
        return f"too large to read ({len(text):,} {what}; the limit is {max_chars:,})"
    return None


def check_toml(text: str, *, max_chars: int = MAX_TOML_CHARS, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`InputTooLargeError` or :class:`InputTooDeepError` when ``text`` is
    too large or nested too deep."""
    problem = _size_problem(text, max_chars, "characters")
    if problem is not None:
        raise InputTooLargeError(problem)
    problem = _toml_nesting_problem(text, max_depth)
    if problem is not None:
        raise InputTooDeepError(problem)


def check_json(
    text: str | bytes, *, max_chars: int | None = None, max_depth: int = MAX_DEPTH
) -> None:
    """Raise :class:`InputTooLargeError` or :class:`InputTooDeepError` when ``text`` is
    too large or nested too deep."""
    problem = _size_problem(text, max_chars, "bytes" if isinstance(text, bytes) else "characters")
    if problem is not None:
        raise InputTooLargeError(problem)
    decoded = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    problem = _json_nesting_problem(decoded, max_depth)
    if problem is not None:
        raise InputTooDeepError(problem)


def toml_loads(text: str, *, max_chars: int = MAX_TOML_CHARS) -> dict[str, Any]:
    """``tomllib.loads`` after the bounds check; ``tomllib.TOMLDecodeError`` as usual."""
    check_toml(text, max_chars=max_chars)
    data: dict[str, Any] = _tomllib.loads(text)
    return data


def toml_document(text: str, *, max_chars: int = MAX_TOML_CHARS) -> tomlkit.TOMLDocument:
    """``tomlkit.parse`` after the bounds check; tomlkit's own errors as usual."""
    check_toml(text, max_chars=max_chars)
    return tomlkit.parse(text)


def json_loads(
    text: str | bytes,
    *,
    max_chars: int | None = None,
    max_depth: int = MAX_DEPTH,
    allow_nan: bool = True,
    unique_keys: bool = False,
) -> Any:
    """``json.loads`` after the bounds check; ``json.JSONDecodeError`` as usual.

    ``allow_nan=False`` refuses ``NaN`` and ``Infinity``, which are not JSON
    (:class:`NonJsonConstantError`); ``unique_keys=True`` refuses an object naming a key
    twice (:class:`DuplicateKeyError`: which value would win is a guess the caller should
    not make). Both are :class:`InputLimitError`.
    """
    check_json(text, max_chars=max_chars, max_depth=max_depth)
    return json.loads(
        text,
        parse_constant=None if allow_nan else _refuse_constant,
        object_pairs_hook=_unique_object if unique_keys else None,
    )


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKeyError(f"the key {json.dumps(key)[:40]} appears more than once")
        found[key] = value
    return found


def _refuse_constant(name: str) -> Any:
    raise NonJsonConstantError(f"{name} is not a JSON value")


TOMLDecodeError: type[ValueError] = _tomllib.TOMLDecodeError
"""tomllib's (or tomli's) syntax error, for callers that catch it."""
