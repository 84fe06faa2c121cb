"""The file tools: list and read the workspace's ``files/`` folder."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .base import NoArgs, ToolArgs, ToolResult
from .context import ToolContext

__all__ = [
    "MAX_LISTED_FILES",
    "MAX_READ_CHARS",
    "ReadFileArgs",
    "workspace_list_files",
    "workspace_read_file",
]

MAX_LISTED_FILES = 500
MAX_READ_CHARS = 100_000


class ReadFileArgs(ToolArgs):
    """Arguments of ``workspace_read_file``."""

    path: str = Field(min_length=1, description="A path inside files/, as listed.")
    max_chars: int = Field(
        default=20_000, ge=1, le=MAX_READ_CHARS, description="Return at most this many characters."
    )


def workspace_list_files(context: ToolContext, _args: NoArgs) -> ToolResult:
    """The files under ``files/``, capped at :data:`MAX_LISTED_FILES`."""
    files = context.workspace.list_files()
    payload: dict[str, Any] = {"files": files[:MAX_LISTED_FILES], "count": len(files)}
    if len(files) > MAX_LISTED_FILES:
        payload["note"] = f"only the first {MAX_LISTED_FILES} files are listed"
    return ToolResult.success(payload)


def workspace_read_file(context: ToolContext, args: ReadFileArgs) -> ToolResult:
    """One text file under ``files/``, cut at ``max_chars``."""
    # One character more than asked tells whether the file was cut.
    text = context.workspace.read_file(args.path, max_chars=args.max_chars + 1)
    truncated = len(text) > args.max_chars
    return ToolResult.success(
        {"path": args.path, "content": text[: args.max_chars], "truncated": truncated}
    )
