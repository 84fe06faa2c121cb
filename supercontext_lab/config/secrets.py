"""The secret values in use: every configured API key, read from the environment now.

:func:`mask` is the lab's one masking step for text it shows, sends or keeps (a bundle, a
trace, a turn's record, a saved thread, an archived or imported conversation): the rule
of :mod:`supercontext_lab._secrets` with the values of every ``api_key_env`` that
``config.toml``'s ``[models.*]`` tables name. The variable names are read from the file
once per version of it (its inode, size and time), the values from the environment on every
call, so a key set after start-up is masked too.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from .._secrets import mask_values, masked_data, secret_values
from ..errors import ConfigError
from .store import MODELS_TABLE, config_path, load_config

__all__ = ["configured_secrets", "mask", "mask_data", "values_in_use"]

_lock = threading.Lock()
_names: dict[tuple[str, int, int, int], tuple[str, ...]] = {}


def _key_variables() -> tuple[str, ...]:
    """The ``api_key_env`` names of config.toml's routes (none when it cannot be read)."""
    path = config_path()
    try:
        info = path.stat()
        # Every write replaces the file (a new inode), so an edit is seen even within
        # one tick of the clock.
        version = (str(path), info.st_ino, info.st_mtime_ns, info.st_size)
    except OSError:
        return ()
    with _lock:
        known = _names.get(version)
    if known is not None:
        return known
    try:
        tables = load_config().get(MODELS_TABLE, {})
    except ConfigError:
        return ()
    names = []
    for table in tables.values() if isinstance(tables, dict) else ():
        name = table.get("api_key_env") if isinstance(table, dict) else None
        if isinstance(name, str) and name:
            names.append(name)
    found = tuple(names)
    with _lock:
        _names.clear()
        _names[version] = found
    return found


def configured_secrets() -> list[str]:
    """The values, in the environment now, of every ``api_key_env`` that config.toml's
    ``[models.*]`` tables name (a config file that cannot be read names none)."""
    return [os.environ.get(name, "").strip() for name in _key_variables()]


def values_in_use(*keys: str) -> tuple[str, ...]:
    """``keys`` and :func:`configured_secrets`, as the masking rule takes them."""
    return secret_values([*keys, *configured_secrets()])


def mask(text: str) -> str:
    """``text`` with every configured key and every common key shape removed."""
    return mask_values(text, values_in_use())[0]


def mask_data(value: Any) -> Any:
    """``value`` (JSON-like data) with every string :func:`mask`-ed."""
    return masked_data(value, values_in_use())
