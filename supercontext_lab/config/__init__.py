"""The lab home, its ``config.toml`` and the ``super_context_enabled`` flag.

``store`` reads and writes ``config.toml`` (an inter-process lock, comment-preserving
edits, atomic replaces, a clear error naming a corrupt file) and the other settings;
``flag`` decides the flag from the environment, the file and the default. Model routes,
kept in the same file, are in :mod:`supercontext_lab.routes`.
"""

from __future__ import annotations

from .flag import (
    DEFAULT_SUPER_CONTEXT_ENABLED,
    ENV_SUPER_CONTEXT,
    ENV_SUPER_CONTEXT_LONG,
    FlagStatus,
    get_super_context_enabled,
    set_super_context_enabled,
    super_context_status,
)
from .store import (
    ENV_LAB_HOME,
    config_path,
    get_setting,
    lab_home,
    load_config,
    set_setting,
    update_config,
)

__all__ = [
    "DEFAULT_SUPER_CONTEXT_ENABLED",
    "ENV_LAB_HOME",
    "ENV_SUPER_CONTEXT",
    "ENV_SUPER_CONTEXT_LONG",
    "FlagStatus",
    "config_path",
    "get_setting",
    "get_super_context_enabled",
    "lab_home",
    "load_config",
    "set_setting",
    "set_super_context_enabled",
    "super_context_status",
    "update_config",
]
