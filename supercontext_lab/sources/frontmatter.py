"""A small, forgiving front-matter reader for markdown files (memory documents, skills).

Front matter is a block at the very top of the text, between a ``---`` line and the next
``---`` (or ``...``) line, holding YAML-like ``key: value`` lines::

    ---
    name: Weekly report
    description: "Drafts the report: numbers first"
    tags: [reports, weekly]
    ---
    The body starts here.

What is understood: ``key: value`` at the start of a line (keys are letters, digits,
``_``, ``-`` and ``.``, and are lower-cased); values in single or double quotes; a
``# comment`` after an unquoted value or on its own line; indented lines continuing the
previous value; block lists (``key:`` followed by ``- item`` lines). Everything else in
the block is ignored. Values are always strings; :func:`parse_list` (or
:meth:`FrontMatter.get_list`) turns ``[a, b]``, ``a, b`` or a block list into a list.

Text without a well-formed block (no opening line, or no closing line within the first
:data:`MAX_FRONT_MATTER_CHARS` characters) has no front matter: all of it is the body.
Reading is linear in the length of the text, and a front matter block is bounded. No input string ever makes these functions raise; the only
error is :class:`TypeError` for an argument that is not a ``str``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["MAX_FRONT_MATTER_CHARS", "FrontMatter", "parse_front_matter", "parse_list"]

MAX_FRONT_MATTER_CHARS = 16 * 1024
"""A front matter block must close within this many characters (real ones hold a few
lines); past it the whole text is the body, so a file that is all "front matter" costs
no more to read than any other file of its size."""

_KEY_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.\-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$")
# A "#" after whitespace starts a comment. Found by searching for the pair, not with
# r"[ \t]+#.*$", which tries every start of a long run of spaces again (quadratic).
_COMMENT_START = re.compile(r"[ \t]#")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}


def _empty_fields() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True)
class FrontMatter:
    """The front matter fields of a document and the text after them."""

    fields: Mapping[str, str] = field(default_factory=_empty_fields)
    """Field values by lower-cased key, unquoted, as strings."""
    body: str = ""
    """The text after the closing line (the whole text when there is no front matter)."""
    present: bool = False
    """Whether the text opened with a complete front-matter block."""

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of ``key`` (case-insensitive), or ``default`` when absent."""
        return self.fields.get(key.lower(), default)

    def get_list(self, key: str) -> list[str]:
        """The value of ``key`` read as a list (see :func:`parse_list`); ``[]`` when absent."""
        value = self.fields.get(key.lower())
        return [] if value is None else parse_list(value)


def _require_str(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}.")
    return value


def _closing_quote(value: str) -> int:
    """Index of the quote closing the one at ``value[0]``, or -1."""
    quote = value[0]
    i = 1
    while i < len(value):
        ch = value[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and value[i + 1 : i + 2] == "'":
                i += 2  # '' is an escaped quote inside single quotes
                continue
            return i
        i += 1
    return -1


def _unquote(raw: str) -> str:
    value = raw.strip()
    if value[:1] in ("'", '"'):
        end = _closing_quote(value)
        rest = value[end + 1 :].strip() if end > 0 else "x"
        if not rest or rest.startswith("#"):
            inner = value[1:end]
            if value[0] == "'":
                return inner.replace("''", "'")
            return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), inner)
    comment = _COMMENT_START.search(value)
    return (value if comment is None else value[: comment.start()]).strip()


def _quote(item: str) -> str:
    return '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split_items(inner: str) -> list[str]:
    """Split on commas that are outside quotes."""
    items: list[str] = []
    current: list[str] = []
    quote = ""
    escaped = False
    started = False  # a quote only opens a quoted item at the item's start
    for ch in inner:
        if quote:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch == ",":
            items.append("".join(current))
            current = []
            started = False
        else:
            if ch in "\"'" and not started:
                quote = ch
            started = started or not ch.isspace()
            current.append(ch)
    items.append("".join(current))
    return items


def parse_list(value: str) -> list[str]:
    """Read a field value as a list of strings.

    ``[a, b]``, ``a, b`` and ``["a, with comma", 'b']`` all work; items are stripped and
    unquoted, empty items dropped. A plain value is a one-item list.
    """
    text = _require_str(value, "value").strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    items = (_unquote(item) for item in _split_items(text))
    return [item for item in items if item]


def _opening(line: str) -> bool:
    return line.rstrip() == "---"


def _closing(line: str) -> bool:
    return line.rstrip() in ("---", "...")


def parse_front_matter(text: str) -> FrontMatter:
    """Split ``text`` into its front matter fields and its body (see the module docs)."""
    text = _require_str(text, "text")
    if text.startswith("\ufeff"):
        text = text[1:]
    head = text[: MAX_FRONT_MATTER_CHARS + 1]
    lines = head.splitlines(keepends=True)
    if not lines or not _opening(lines[0]):
        return FrontMatter(body=text)
    end = next((i for i in range(1, len(lines) - 1) if _closing(lines[i])), None)
    if end is None and len(lines) > 1 and len(head) == len(text) and _closing(lines[-1]):
        end = len(lines) - 1  # the closing line ends the text
    if end is None:
        return FrontMatter(body=text)
    fields, lists = _fields(lines[1:end])
    for key, items in lists.items():
        fields[key] = "[" + ", ".join(_quote(item) for item in items if item) + "]"
    block = sum(len(line) for line in lines[: end + 1])
    return FrontMatter(fields=MappingProxyType(fields), body=text[block:], present=True)


def _fields(lines: list[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The ``key: value`` fields and the block lists of the lines inside the block."""
    fields: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    # Lines continuing a value, folded at the end: adding each to the value as it comes
    # would copy the value once per line.
    folded: dict[str, list[str]] = {}
    current: str | None = None
    for raw in lines:
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _KEY_LINE.match(line)
        if match:
            current = match.group(1).lower()
            fields[current] = _unquote(match.group(2) or "")
            lists.pop(current, None)
            folded.pop(current, None)
            continue
        if current is None or (not line[:1].isspace() and not stripped.startswith("-")):
            current = None
            continue
        if (stripped == "-" or stripped.startswith("- ")) and (
            current in lists or not (fields[current] or any(folded.get(current, ())))
        ):
            lists.setdefault(current, []).append(_unquote(stripped[1:]))
        elif current not in lists:
            # An indented line continues the value above it, folded with a space.
            folded.setdefault(current, []).append(_unquote(stripped))
    for key, more in folded.items():
        pieces = (piece.rstrip() for piece in (fields[key], *more))
        fields[key] = " ".join(piece for piece in pieces if piece).lstrip()
    return fields, lists
