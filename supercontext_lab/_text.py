"""Text helpers every layer shares: one-line messages and pydantic errors as one line.

Messages shown to a user or a model are single lines (a trace row, a CLI error, a tool
error a model reads back), so every place that turns text into a message goes through
:func:`one_line`, and every place that reports a pydantic ``ValidationError`` goes
through :func:`describe_validation_error`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import ValidationError

__all__ = [
    "INVISIBLE",
    "NOT_PLAIN",
    "describe_validation_error",
    "escape_undecodable",
    "goal_line",
    "one_line",
    "plain_name",
    "strip_userinfo",
    "visible",
    "without_surrogates",
]

# The authority part of a URL up to its last "@": "//user:secret@" in "https://user:secret@host".
_USERINFO = re.compile(r"//[^/?#\s]*@")
_SURROGATE = re.compile("[\ud800-\udfff]")


def one_line(text: object, limit: int | None = None, *, at_word: bool = False) -> str:
    """``text`` with every run of whitespace (newlines included) collapsed to one space.

    With ``limit``, a longer result is cut to ``limit`` characters ending in ``…``; with
    ``at_word`` as well, the cut ends on a whole word ("budget…", not "budg…") when one
    ends in the second half of the line.
    """
    raw = str(text)
    flat = _collapsed(raw, limit)
    if limit is None or len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if not at_word:
        return cut.rstrip() + "…"
    # Back to the last whole word, unless that would lose half the line.
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:—–-") + "…"


def _collapsed(raw: str, limit: int | None) -> str:
    """``raw`` with its whitespace collapsed; with ``limit``, possibly only a prefix of
    that, but always more than ``limit`` characters of it when the whole is longer.

    Collapsing a prefix of the text gives a prefix of the collapsed text, so a long text
    is collapsed a window at a time (doubling) until more than ``limit`` characters come
    out: a message cut to 60 characters never splits a megabyte into words.
    """
    if limit is None:
        return " ".join(raw.split())
    window = max(2 * limit, 64)
    while window < len(raw):
        flat = " ".join(raw[:window].split())
        if len(flat) > limit:
            return flat
        window *= 2
    return " ".join(raw.split())


def describe_validation_error(
    exc: ValidationError,
    *,
    first_only: bool = False,
    wording: Mapping[str, str] | None = None,
    show_input: bool = False,
    location: str = "",
) -> str:
    """Pydantic's errors as one line: ``field: reason; field: reason``.

    ``wording`` replaces pydantic's message for an error type (``{"extra_forbidden":
    "unexpected argument"}``); pydantic's ``Value error, `` prefix (added to messages
    raised by validators) is dropped. ``first_only`` keeps the first problem, for messages
    that name one thing to fix; ``show_input`` adds the offending value (``(got 9)``),
    except for tables; ``location`` names an error that has no field of its own.
    """
    parts: list[str] = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(item) for item in error.get("loc", ())) or location
        kind = str(error.get("type", ""))
        if wording and kind in wording:
            message = wording[kind]
        else:
            message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
            value = error.get("input")
            if show_input and value is not None and not isinstance(value, dict):
                message += f" (got {value!r})"
        parts.append(f"{where}: {message}" if where else message)
        if first_only:
            break
    return one_line("; ".join(parts)) or "invalid value"


def strip_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` part of every URL in it removed.

    Credentials pasted into a URL must never reach a message, a log or a key stored on
    disk. Works on any text (a URL that does not parse, an error message quoting one).
    """
    return _USERINFO.sub("//", text) if "@" in text else text


def _surrogate_escape(code: int) -> str:
    # Python keeps a byte b that did not decode (a file name that is not UTF-8) as the
    # lone surrogate U+DC00 + b: it is shown as the byte it stands for.
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


_UNDECODABLE = {code: _surrogate_escape(code) for code in range(0xD800, 0xE000)}


def escape_undecodable(text: str) -> str:
    """``text`` with every lone surrogate written as a visible escape: ``\\xe9`` for a byte
    that did not decode (a Latin-1 ``café`` in a file name), ``\\ud800`` for any other.

    Such a character cannot be written as UTF-8 (a file, a socket, a terminal, SQLite all
    refuse it); escaped, the text can go anywhere and still says which byte it was.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.translate(_UNDECODABLE)
    return text


INVISIBLE = frozenset(
    {
        0x00AD,  # soft hyphen
        0x061C,  # Arabic letter mark
        0x180E,  # Mongolian vowel separator
        *range(0x200B, 0x2010),  # zero-width space, non-joiner, joiner; LRM, RLM
        *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
        *range(0x2060, 0x2065),  # word joiner, invisible operators
        *range(0x2066, 0x206A),  # bidirectional isolates
        0xFEFF,  # zero-width no-break space (a byte order mark)
    }
)
"""Characters that show nothing, or reorder what is shown around them: a reader cannot
tell ``1234-5678`` from ``8765-4321`` written backwards with U+202E, nor two names that
differ by a zero-width space."""

_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_VISIBLE = {
    **{code: _NAMED.get(code, f"\\x{code:02x}") for code in (*range(0x20), *range(0x7F, 0xA0))},
    **{code: f"\\u{code:04x}" for code in (*INVISIBLE, 0x2028, 0x2029)},
    **_UNDECODABLE,
}


def visible(text: str) -> str:
    """``text`` on one line with nothing hidden: every control character (line breaks and
    tabs included), line separator, :data:`INVISIBLE` character and lone surrogate written
    as a visible escape (``\\n``, ``\\x1b``, ``\\u202e``, ``\\xe9``).

    For a name from outside (a file name, a folder name) in a one-line message: a name
    holding a newline cannot add lines of its own to a report, and a name that is not
    UTF-8 can be written anywhere."""
    return text.translate(_VISIBLE)


def plain_name(name: str) -> bool:
    """Whether a file or folder name can be shown, cited and written as it is: no line
    break, control or :data:`INVISIBLE` character, no byte that is not UTF-8. A name that
    fails cannot be a memory namespace or key, a facet or a listed file."""
    return visible(name) == name


NOT_PLAIN = (
    "its name holds a line break, a control or invisible character, or bytes that are not "
    "UTF-8; rename it"
)
"""Why a name that is not :func:`plain_name` is left out."""


def without_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (U+D800-U+DFFF) replaced by U+FFFD.

    A JSON escape such as ``"\\ud800"`` or a byte that did not decode (Python's
    ``surrogateescape``) leaves one in a ``str``, and such a string cannot be encoded as
    UTF-8: writing it to a file, a socket or a terminal raises. Text from outside is put
    through this where it enters, so nothing later has to.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


# Politeness and framing that a goal does not need ("please", "help me", "can you").
_WORK_LEAD_INS = re.compile(
    r"^(?:(?:please|kindly|can you|could you|would you|will you|help me(?: to)?|"
    r"i need to|i need you to|i want to|i'd like to|i would like to|let's|lets)\s+)+",
    re.IGNORECASE,
)


def goal_line(request: str) -> str:
    """A thread goal written from the request: one line, lead-ins dropped, capitalised."""
    text = " ".join(request.split()).rstrip(" .!?")
    text = _WORK_LEAD_INS.sub("", text)
    text = text[:1].upper() + text[1:]
    return one_line(text, 160)
