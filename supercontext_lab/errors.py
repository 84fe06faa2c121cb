"""The one exception tree of supercontext_lab.

Every error the package raises on purpose derives from :class:`SupercontextError`, so
``except SupercontextError`` catches all of them and nothing else::

    SupercontextError
    ├── ConfigError                 config.toml unreadable, corrupt or invalid; bad env route
    ├── AgentDefinitionError        agent.toml / prompt.md invalid        (also ValueError)
    ├── WorkspaceError              a workspace folder or one of its files is unusable
    │   ├── MemoryIndexError        the SQLite memory index is unusable
    │   ├── PathRefusedError        a link out of the workspace, a FIFO, a device, /proc
    │   └── ConversationStoreError  the transcript store under .supercontext/ is unusable
    ├── ToolError                   a scout tool refused or failed a call
    │   └── ToolNotAllowedError     a call outside the read-only allowlist
    ├── ModelError                  a chat model failed (bad status, bad body, unreachable)
    │   └── ModelTimeoutError       a model call ran past its timeout
    ├── ScoutError                  a scout run could not start (bad inputs)
    ├── DatasetError                an evaluation dataset line is invalid  (also ValueError)
    ├── ConversationImportError     a chat export cannot be imported       (also ValueError)
    ├── InputLimitError             untrusted TOML/JSON refused before parsing (also ValueError)
    │   ├── InputTooLargeError      more characters or bytes than allowed
    │   ├── InputTooDeepError       nested deeper than allowed
    │   ├── DuplicateKeyError       a JSON object names one key twice
    │   └── NonJsonConstantError    NaN or Infinity, which JSON does not have
    └── CacheError                  the response cache is unusable

Messages are full sentences that name the problem and, where there is one, the way out.
Library errors are wrapped at the boundary with ``raise ... from exc``.
"""

from __future__ import annotations

__all__ = [
    "AgentDefinitionError",
    "CacheError",
    "ConfigError",
    "ConversationImportError",
    "ConversationStoreError",
    "DatasetError",
    "DuplicateKeyError",
    "InputLimitError",
    "InputTooDeepError",
    "InputTooLargeError",
    "MemoryIndexError",
    "ModelError",
    "ModelTimeoutError",
    "NonJsonConstantError",
    "PathRefusedError",
    "ScoutError",
    "SupercontextError",
    "ToolError",
    "ToolNotAllowedError",
    "WorkspaceError",
]


class SupercontextError(Exception):
    """Base class of every error raised on purpose by supercontext_lab."""


class ConfigError(SupercontextError):
    """The lab's config.toml (or an environment override) cannot be used."""


class AgentDefinitionError(SupercontextError, ValueError):
    """An agent.toml or prompt.md is invalid; the message names the key and the reason."""


class WorkspaceError(SupercontextError):
    """A workspace folder, or one of its files, cannot be used."""


class MemoryIndexError(WorkspaceError):
    """The SQLite memory index cannot be opened, read or rebuilt."""


class PathRefusedError(WorkspaceError):
    """A file the lab will not read: it leads out of its folder (through a link), or it is
    a FIFO, a device or a file under /proc, /sys or /dev."""


class ConversationStoreError(WorkspaceError):
    """The transcript store of past conversations cannot be opened, read or written."""


class ToolError(SupercontextError):
    """A scout tool refused a call or failed while answering it."""


class ToolNotAllowedError(ToolError):
    """A tool call outside the scout's read-only allowlist."""


class ModelError(SupercontextError):
    """A chat model call failed: unreachable server, bad status or an unusable body."""

    attempts: int = 1
    """How many requests the failed call made, retries included."""


class ModelTimeoutError(ModelError):
    """A chat model call ran past its timeout."""


class ScoutError(SupercontextError):
    """A scout run could not be started with the inputs given."""


class DatasetError(SupercontextError, ValueError):
    """An evaluation dataset cannot be read; the message names the line."""


class ConversationImportError(SupercontextError, ValueError):
    """A chat export (or a saved thread) cannot be imported; the message names the file,
    where in it and why. Nothing of the file is imported when it is raised."""


class InputLimitError(SupercontextError, ValueError):
    """TOML or JSON text refused before it is parsed: one of the subclasses says why."""


class InputTooLargeError(InputLimitError):
    """TOML or JSON text longer than its reader allows."""


class InputTooDeepError(InputLimitError):
    """TOML or JSON text nested deeper than its reader allows (parsers recurse per level)."""


class DuplicateKeyError(InputLimitError):
    """A JSON object naming one key twice, where the reader refuses to guess which wins."""


class NonJsonConstantError(InputLimitError):
    """``NaN`` or ``Infinity`` in JSON text where the reader accepts only JSON values."""


class CacheError(SupercontextError):
    """The response cache cannot be opened or used."""
