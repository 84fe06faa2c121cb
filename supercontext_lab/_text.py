"""Text helpers every layer shares: one-line messages and pydantic errors as one line.

Messages shown to a user or a model are single lines (a trace row, a CLI error, a tool
error a model reads back), so every place that turns text into a message goes through
:func:`one_line`, and every place that reports a pydantic ``ValidationError`` goes
through :func:`describe_validation_error`.
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["describe_validation_error", "one_line"]


def one_line(text: object, limit: int | None = None) -> str:
    """``text`` with every run of whitespace (newlines included) collapsed to one space.

    With ``limit``, a longer result is cut to ``limit`` characters ending in ``…``.
    """
    flat = " ".join(str(text).split())
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: limit - 1].rstrip() + "…"


def describe_validation_error(
    exc: ValidationError, *, noun: str = "key", first_only: bool = False
) -> str:
    """Pydantic's errors as one line: ``field: reason; field: reason``.

    A field that is not allowed reads ``unexpected <noun>``; pydantic's ``Value error, ``
    prefix (added to messages raised by validators) is dropped. ``first_only`` keeps the
    first problem only, for messages that already name a position (``entry 3: ...``).
    """
    parts: list[str] = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(item) for item in error.get("loc", ()))
        if error.get("type") == "extra_forbidden":
            message = f"unexpected {noun}"
        else:
            message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
        parts.append(f"{location}: {message}" if location else message)
        if first_only:
            break
    return one_line("; ".join(parts)) or f"invalid {noun}s"
