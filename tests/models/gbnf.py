"""A reader of the GBNF grammars this package writes, for tests: which texts they admit.

A small recogniser, enough for the constructs the envelope and extractive grammars use:
string literals, character classes (GBNF and Python write ``\\n``, ``\\[``, ``\\x7F``
alike, so a class is handed to :mod:`re` as it is), rule references, groups,
alternation and the repetitions ``{m,n}``, ``?``, ``*``, ``+``. Each rule is matched as
the set of positions it can end at from a start, remembered per rule and start, so a
grammar whose rules branch many ways (the ordered picks) is read in polynomial time.
A test can then ask whether a text is a sentence of a grammar without a llama.cpp build.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN_RE = re.compile(
    r"""\s*(?:
      (?P<string>"(?:[^"\\]|\\.)*")
    | (?P<klass>\[(?:[^\]\\]|\\.)*\])
    | (?P<repeat>\{\d*(?:,\d*)?\}|[?*+])
    | (?P<name>[a-zA-Z_][a-zA-Z0-9_-]*)
    | (?P<punct>[()|])
    )""",
    re.VERBOSE,
)


def _tokens(body: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    body = body.rstrip()
    while position < len(body):
        match = _TOKEN_RE.match(body, position)
        if match is None or match.end() == position:
            raise ValueError(f"cannot read the grammar at {body[position:]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


Node = tuple[Any, ...]


def _parse(tokens: list[tuple[str, str]]) -> Node:
    position = 0

    def alternation() -> Node:
        nonlocal position
        options = [sequence()]
        while position < len(tokens) and tokens[position][1] == "|":
            position += 1
            options.append(sequence())
        return ("alt", options)

    def sequence() -> Node:
        nonlocal position
        items: list[Node] = []
        while position < len(tokens) and tokens[position][1] not in ("|", ")"):
            kind, text = tokens[position]
            position += 1
            if text == "(":
                item = alternation()
                position += 1  # the closing parenthesis
            elif kind == "string":
                item = ("lit", json.loads(text))
            elif kind == "klass":
                item = ("class", re.compile(text, re.DOTALL))
            elif kind == "name":
                item = ("rule", text)
            else:
                raise ValueError(f"unexpected {text!r}")
            while position < len(tokens) and tokens[position][0] == "repeat":
                item = ("repeat", item, *_bounds(tokens[position][1]))
                position += 1
            items.append(item)
        return ("seq", items)

    return alternation()


def _bounds(text: str) -> tuple[int, int | None]:
    if text in ("?", "*", "+"):
        return {"?": (0, 1), "*": (0, None), "+": (1, None)}[text]
    low, comma, high = text.strip("{}").partition(",")
    least = int(low or 0)
    return least, (None if comma and not high else int(high) if comma else least)


class Grammar:
    """A parsed grammar; :meth:`admits` says whether a text is one of its sentences."""

    def __init__(self, text: str) -> None:
        self.rules: dict[str, Node] = {}
        for line in text.splitlines():
            if line.strip():
                name, _, body = line.partition("::=")
                self.rules[name.strip()] = _parse(_tokens(body))

    def admits(self, text: str) -> bool:
        memo: dict[tuple[str, int], frozenset[int]] = {}

        def ends(node: Node, start: int) -> set[int]:
            kind = node[0]
            if kind == "lit":
                return {start + len(node[1])} if text.startswith(node[1], start) else set()
            if kind == "class":
                hit = start < len(text) and node[1].fullmatch(text[start])
                return {start + 1} if hit else set()
            if kind == "rule":
                key = (node[1], start)
                if key not in memo:
                    memo[key] = frozenset()  # a recursive rule meets itself with nothing
                    memo[key] = frozenset(ends(self.rules[node[1]], start))
                return set(memo[key])
            if kind == "alt":
                return set().union(*(ends(option, start) for option in node[1]))
            if kind == "seq":
                current = {start}
                for item in node[1]:
                    current = set().union(*(ends(item, at) for at in current))
                return current
            _, item, least, most = node
            found = {start} if least == 0 else set()
            current, count = {start}, 0
            # An unbounded repetition that consumes nothing cannot go past the text's end.
            limit = len(text) + 1 if most is None else most
            while current and count < limit:
                current = set().union(*(ends(item, at) for at in current))
                count += 1
                if count >= least:
                    found |= current
            return found

        return len(text) in ends(("rule", "root"), 0)


def admits(grammar: str, text: str) -> bool:
    """Whether ``text`` is a sentence of ``grammar``."""
    return Grammar(grammar).admits(text)
