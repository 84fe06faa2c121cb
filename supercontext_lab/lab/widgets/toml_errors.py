"""Where a TOML syntax error is, shown under the editor's validation line.

tomllib ends a syntax error's message with its place, ``(at line 13, column 15)``, except
when the text ends inside something left open (an array, an inline table, a string):
then it says ``(at end of document)``, and the place that matters is where that thing
was opened. :func:`error_excerpt` shows the line in question with a caret under the
column, finding the opener itself in the second case.
"""

from __future__ import annotations

import re

__all__ = ["error_excerpt", "unclosed_opener"]

_AT_LINE = re.compile(r"\(at line (?P<line>\d+), column (?P<column>\d+)\)")
_AT_END = "(at end of document)"
_CLOSERS = {"[": "]", "{": "}"}
_NAMES = {"[": "array", "{": "inline table"}


def _string_end(text: str, start: int, quote: str) -> int | None:
    """The index just past the string opened at ``start`` with ``quote`` (one or three
    quote characters), or ``None`` when the text ends (or a one-line string's line ends)
    before it closes. Basic strings (``"``) honour backslash escapes."""
    i = start + len(quote)
    while i < len(text):
        if text.startswith(quote, i):
            return i + len(quote)
        if len(quote) == 1 and text[i] == "\n":
            return None
        i += 2 if quote[0] == '"' and text[i] == "\\" else 1
    return None


def unclosed_opener(text: str) -> tuple[int, int, str] | None:
    """``(line, column, what)`` of the innermost array, inline table or string that
    ``text`` opens and never closes (1-based), or ``None`` when everything closes."""
    stack: list[tuple[int, str]] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "#":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
            continue
        if char in "\"'":
            quote = char * 3 if text.startswith(char * 3, i) else char
            end = _string_end(text, i, quote)
            if end is None:
                return (*_place(text, i), f"the string opened with {quote} here is never closed")
            i = end
            continue
        if char in _CLOSERS:
            stack.append((i, char))
        elif char in _CLOSERS.values() and stack and _CLOSERS[stack[-1][1]] == char:
            stack.pop()
        i += 1
    if not stack:
        return None
    at, opener = stack[-1]
    return (*_place(text, at), f"the {_NAMES[opener]} opened with {opener} here is never closed")


def _place(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _last_line(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    number = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=1)
    return number, len(lines[number - 1]) + 1


def error_excerpt(text: str, message: str) -> str:
    """For a TOML syntax error ``message`` about ``text``: the line it is on, numbered,
    with a caret under the column and, for an error at the end of the document, what was
    left open there. ``""`` for a message that is not a syntax error's."""
    found = _AT_LINE.search(message)
    why = ""
    if found is not None:
        number, column = int(found["line"]), int(found["column"])
    elif _AT_END in message:
        opener = unclosed_opener(text)
        if opener is not None:
            number, column, why = opener
        else:
            number, column = _last_line(text)
            why = "the document ends here, before the value is complete"
    else:
        return ""
    lines = text.split("\n")
    if not 1 <= number <= len(lines):
        return ""
    gutter = f"{number} | "
    caret = " " * (len(gutter) + max(column - 1, 0)) + "^"
    return f"{gutter}{lines[number - 1]}\n{caret}" + (f" {why}" if why else "")
