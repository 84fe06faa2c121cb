"""The ``super_context_enabled`` flag (SPEC §3): environment, then config.toml, then default.

``OPENHUMAN_SUPER_CONTEXT`` is read first, ``OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED`` only
when it is unset; a value that is not a yes/no word is ignored with one warning on stderr.
The file value lives in ``[context] super_context_enabled`` (:mod:`.store`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Literal

import tomlkit

from .store import FLAG_KEY, FLAG_TABLE, config_path, ensure_table, load_config, update_config

__all__ = [
    "DEFAULT_SUPER_CONTEXT_ENABLED",
    "ENV_SUPER_CONTEXT",
    "ENV_SUPER_CONTEXT_LONG",
    "FlagStatus",
    "get_super_context_enabled",
    "set_super_context_enabled",
    "super_context_status",
]

ENV_SUPER_CONTEXT = "OPENHUMAN_SUPER_CONTEXT"
"""The flag's environment override, read first."""

ENV_SUPER_CONTEXT_LONG = "OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED"
"""The flag's second environment override, read only when the first one is unset."""

DEFAULT_SUPER_CONTEXT_ENABLED = True
"""The flag's value when neither the environment nor the config file sets it."""

_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS = frozenset({"0", "false", "no", "off"})
# (variable, raw value) pairs already warned about in this process.
_warned_env_values: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class FlagStatus:
    """The effective value of ``super_context_enabled`` and where it came from."""

    enabled: bool
    """The effective value."""
    source: Literal["env", "file", "default"]
    """``"env"`` (an environment override), ``"file"`` (config.toml) or ``"default"``."""
    detail: str
    """``"<VARIABLE>=<value>"``, the config file path, or ``"default"``."""

    def describe(self) -> str:
        """One line for people: the value and where it comes from."""
        state = "on" if self.enabled else "off"
        origin = {
            "env": f"environment {self.detail}",
            "file": f"config file {self.detail}",
            "default": "default (no config file value, no environment override)",
        }[self.source]
        return f"{state} (from the {origin})"


def _parse_env_bool(raw: str) -> bool | None:
    """Map an override value to a bool: trimmed, case-insensitive; ``None`` when invalid."""
    word = raw.strip().lower()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    return None


def _env_override() -> tuple[str, str] | None:
    """Return (variable, raw value) of the override in force, ``None`` when neither is set.

    An empty value counts as set, so it hides the second variable.
    """
    for name in (ENV_SUPER_CONTEXT, ENV_SUPER_CONTEXT_LONG):
        raw = os.environ.get(name)
        if raw is not None:
            return name, raw
    return None


def _warn_invalid_env(name: str, raw: str, fallback: str) -> None:
    key = (name, raw)
    if key in _warned_env_values:
        return
    _warned_env_values.add(key)
    print(
        f"supercontext_lab: warning: ignoring {name}={raw!r} "
        f"(use on/off, true/false, yes/no or 1/0); using the {fallback}.",
        file=sys.stderr,
    )


def super_context_status() -> FlagStatus:
    """Return the effective flag and its source: environment, then config file, then default.

    A valid environment override decides without reading the file. An invalid one is
    ignored with one warning line on stderr (once per process per variable and value).
    """
    override = _env_override()
    if override is not None:
        name, raw = override
        value = _parse_env_bool(raw)
        if value is not None:
            return FlagStatus(enabled=value, source="env", detail=f"{name}={raw}")
    status = _file_flag_status()
    if override is not None:
        fallback = "config file value" if status.source == "file" else "default value (on)"
        _warn_invalid_env(override[0], override[1], fallback)
    return status


def _file_flag_status() -> FlagStatus:
    data = load_config()
    value = data.get(FLAG_TABLE, {}).get(FLAG_KEY)
    if isinstance(value, bool):
        return FlagStatus(enabled=value, source="file", detail=str(config_path()))
    return FlagStatus(enabled=DEFAULT_SUPER_CONTEXT_ENABLED, source="default", detail="default")


def get_super_context_enabled() -> bool:
    """Return the effective value of ``super_context_enabled`` (environment overrides file)."""
    return super_context_status().enabled


def set_super_context_enabled(value: bool) -> bool:
    """Persist ``[context] super_context_enabled`` and return the saved value.

    An environment override, when set, still decides the effective value; this function
    returns what was saved to the file. Anything but a real bool raises TypeError.
    """
    if not isinstance(value, bool):
        raise TypeError(f"super_context_enabled must be True or False, not {type(value).__name__}.")

    def mutate(document: tomlkit.TOMLDocument) -> None:
        ensure_table(document, FLAG_TABLE)[FLAG_KEY] = value

    update_config(mutate)
    return value
