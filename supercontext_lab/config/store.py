"""The lab home and its ``config.toml``: reading, locked atomic writes, and settings.

Layout of ``config.toml`` (every key optional)::

    [context]
    super_context_enabled = true        # the flag; the environment may override it

    [models.burst]                      # one table per model hint
    kind = "openai"
    base_url = "http://localhost:11434/v1"
    model = "llama3.1"

    [web]
    allow_private_addresses = false     # any other setting: get_setting / set_setting

    [memory]
    archive_threads = true              # threads keep their turns as past conversations
    semantic = "off"                    # or "minilm", "openai", a provider:model id

The flag's own rules (environment first) are in :mod:`.flag`, model routes in
:mod:`supercontext_lab.routes`; this module owns the file. Reads never create anything.
Writes go through :func:`update_config`: an exclusive
inter-process lock, a comment-preserving edit (tomlkit) and an atomic replace, so readers
see either the old file or the new one and concurrent writers never lose each other's
updates. A corrupt file is reported as :class:`~supercontext_lab.errors.ConfigError`
naming the file; it is never reset or overwritten.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import tomlkit
import tomlkit.exceptions
from tomlkit.items import Table

from .._atomic import write_atomic
from .._bounded import (
    MAX_TOML_CHARS,
    InputLimitError,
    TOMLDecodeError,
    toml_document,
    toml_loads,
)
from .._confine import read_limited
from .._text import one_line
from ..errors import ConfigError, PathRefusedError

try:
    import fcntl
except ImportError:  # pragma: no cover - platforms without fcntl (Windows)
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "ENV_LAB_HOME",
    "FLAG_KEY",
    "FLAG_TABLE",
    "MODELS_TABLE",
    "config_path",
    "ensure_table",
    "get_setting",
    "lab_home",
    "load_config",
    "set_setting",
    "update_config",
]

ENV_LAB_HOME = "SUPERCONTEXT_LAB_HOME"
"""Environment variable naming the lab home folder (default ``~/.supercontext_lab``)."""

_CONFIG_NAME = "config.toml"
_LOCK_NAME = "config.toml.lock"
FLAG_TABLE = "context"
FLAG_KEY = "super_context_enabled"
MODELS_TABLE = "models"


_log = logging.getLogger(__name__)

# Threads of one process serialise here; flock then serialises processes.
_THREAD_LOCK = threading.Lock()


# --------------------------------------------------------------------------- lab home


def lab_home() -> Path:
    """Return the lab home folder: ``$SUPERCONTEXT_LAB_HOME`` when set and non-empty, else
    ``~/.supercontext_lab``. The folder is not created."""
    value = os.environ.get(ENV_LAB_HOME, "")
    if value.strip():
        return Path(value).expanduser()
    return Path.home() / ".supercontext_lab"


def config_path() -> Path:
    """Return the path of the lab's ``config.toml`` (which may not exist yet)."""
    return lab_home() / _CONFIG_NAME


def _corrupt(path: Path, problem: str) -> ConfigError:
    return ConfigError(f"Config file {path} is unusable: {problem}; fix or delete {path}.")


# --------------------------------------------------------------------------- reading


def _read_text(path: Path) -> str | None:
    """Return the file's text, ``None`` when it does not exist."""
    try:
        # Bounded: the text is refused past MAX_TOML_CHARS anyway (UTF-8 is at most four
        # bytes a character), so a huge file is never read whole.
        data, more = read_limited(path, 4 * MAX_TOML_CHARS)
    except FileNotFoundError:
        return None
    except PathRefusedError as exc:
        raise _corrupt(path, f"cannot read it ({one_line(exc)})") from exc
    except OSError as exc:
        raise _corrupt(path, f"cannot read it ({one_line(exc.strerror or exc)})") from exc
    if more:
        raise _corrupt(path, f"it is too large (the limit is {MAX_TOML_CHARS:,} characters)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _corrupt(path, f"it is not UTF-8 text ({one_line(exc)})") from exc


def _parse_checked(text: str, path: Path) -> dict[str, Any]:
    """Parse TOML text strictly and check the types of the keys this module owns."""
    try:
        data = toml_loads(text)
    except InputLimitError as exc:
        raise _corrupt(path, str(exc)) from None
    except TOMLDecodeError as exc:
        raise _corrupt(path, f"TOML syntax error: {one_line(exc)}") from exc
    problem = _known_key_problem(data)
    if problem is not None:
        raise _corrupt(path, problem)
    return data


def _known_key_problem(data: Mapping[str, Any]) -> str | None:
    """Describe the first wrong type among the known keys, or return ``None``."""
    context = data.get(FLAG_TABLE)
    if context is not None:
        if not isinstance(context, dict):
            return f"[{FLAG_TABLE}] must be a table, not {_type_name(context)}"
        flag = context.get(FLAG_KEY)
        if flag is not None and not isinstance(flag, bool):
            return f"{FLAG_TABLE}.{FLAG_KEY} must be true or false, not {_type_name(flag)} {flag!r}"
    models = data.get(MODELS_TABLE)
    if models is not None:
        if not isinstance(models, dict):
            return f"[{MODELS_TABLE}] must be a table, not {_type_name(models)}"
        for hint, route in models.items():
            if not isinstance(route, dict):
                return f"[{MODELS_TABLE}.{hint}] must be a table, not {_type_name(route)}"
    return None


def _type_name(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return names.get(type(value), f"a {type(value).__name__}")


def load_config() -> dict[str, Any]:
    """Read ``config.toml`` as plain Python data; ``{}`` when the file does not exist.

    Raises ConfigError (naming the file) when it is unreadable, not TOML, or a known key
    has the wrong type (``[context]`` or ``[models.<hint>]`` not a table, the flag not a
    boolean). Model route contents are checked when a route is read.
    """
    path = config_path()
    text = _read_text(path)
    if text is None:
        return {}
    return _parse_checked(text, path)


# --------------------------------------------------------------------------- writing


@contextmanager
def _exclusive_lock(home: Path) -> Iterator[None]:
    """Hold the lab home's lock: a thread lock, plus flock where the platform has it.

    Without fcntl only threads of this process are serialised; each write is still atomic,
    so files stay valid, but two processes writing at once may drop one update.
    """
    with _THREAD_LOCK:
        if fcntl is None:  # pragma: no cover - depends on the platform
            yield
            return
        lock_path = home / _LOCK_NAME
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ConfigError(
                f"Cannot open the config lock file {lock_path} ({one_line(exc.strerror)}); "
                f"make {home} writable or set {ENV_LAB_HOME} to a writable folder."
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            # Closing the descriptor releases the flock.
            os.close(fd)


def _log_folder_sync_error(exc: OSError) -> None:
    _log.warning("config.toml was saved, but its folder could not be synced to disk (%s).", exc)


def update_config(mutate: Callable[[tomlkit.TOMLDocument], None]) -> None:
    """Read, modify and write ``config.toml`` under an exclusive inter-process lock.

    ``mutate`` edits the tomlkit document in place, so comments and formatting of the rest
    of the file survive. The lab home is created when missing. A corrupt existing file
    raises ConfigError and is left untouched; so does a change that would make a known key
    invalid. An exception raised by ``mutate`` propagates and nothing is written.
    """
    home = lab_home()
    path = home / _CONFIG_NAME
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"Cannot create the lab home {home} ({one_line(exc.strerror or exc)}); "
            f"set {ENV_LAB_HOME} to a writable folder."
        ) from exc
    with _exclusive_lock(home):
        text = _read_text(path) or ""
        _parse_checked(text, path)
        try:
            document = toml_document(text)
        except InputLimitError as exc:
            raise _corrupt(path, str(exc)) from None
        except tomlkit.exceptions.TOMLKitError as exc:
            raise _corrupt(path, f"TOML syntax error: {one_line(exc)}") from exc
        mutate(document)
        new_text = tomlkit.dumps(document)
        try:
            problem = _known_key_problem(toml_loads(new_text))
        except (InputLimitError, TOMLDecodeError) as exc:
            problem = f"the edited file would not be valid TOML ({one_line(exc)})"
        if problem is not None:
            raise ConfigError(f"Refusing to save {path}: {problem}; the file was left unchanged.")
        try:
            # The new file is in place once renamed; a folder fsync failing after that is
            # logged rather than reported as a failed save.
            # A linked config.toml (a dotfiles setup) is written where its link leads:
            # replacing the link with a plain file would cut it from the user's copy.
            target = path.resolve() if path.is_symlink() else path
            write_atomic(target, new_text, on_folder_sync_error=_log_folder_sync_error)
        except OSError as exc:
            raise ConfigError(
                f"Cannot write {path} ({one_line(exc.strerror or exc)}); "
                f"make {home} writable or set {ENV_LAB_HOME} to a writable folder."
            ) from exc


def ensure_table(container: Any, key: str, *, super_table: bool = False) -> Any:
    """Return ``container[key]``, creating an empty table there when missing."""
    if key not in container:
        container[key] = tomlkit.table(is_super_table=super_table)
    return container[key]


# --------------------------------------------------------------------------- other settings

T = TypeVar("T", bool, int, float, str)


def _split_dotted(dotted: str) -> list[str]:
    parts = dotted.split(".") if isinstance(dotted, str) else []
    if not parts or any(not part.strip() for part in parts):
        raise ValueError(f"A setting name is dotted words such as 'cache.enabled', not {dotted!r}.")
    return parts


def _expected_type_name(default: object) -> str:
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int):
        return "an integer"
    if isinstance(default, float):
        return "a number"
    return "a string"


def get_setting(dotted: str, default: T) -> T:
    """Return the setting at the dotted key (``"web.allow_private_addresses"``) from the
    config file, or ``default`` when absent. The value must have the default's type
    (an integer is accepted where a float is expected); otherwise ConfigError.

    This reads the file only: the flag's environment override is not applied here.
    """
    parts = _split_dotted(dotted)
    if not isinstance(default, (bool, int, float, str)):
        raise TypeError(f"The default of {dotted!r} must be a bool, int, float or str.")
    node: Any = load_config()
    for depth, part in enumerate(parts):
        if not isinstance(node, dict):
            parent = ".".join(parts[:depth])
            raise _corrupt(config_path(), f"{parent} must be a table, not {_type_name(node)}")
        if part not in node:
            return default
        node = node[part]
    value: Any = node
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok:
            value = float(value)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise _corrupt(
            config_path(),
            f"{dotted} must be {_expected_type_name(default)}, not {_type_name(value)} {value!r}",
        )
    return value  # type: ignore[no-any-return]


def set_setting(dotted: str, value: bool | int | float | str) -> None:
    """Save a bool, int, float or str at the dotted key, creating tables as needed.

    The flag must be a bool (TypeError otherwise); model routes are written with
    set_model_route (ValueError here). A non-table in the way raises ConfigError.
    """
    parts = _split_dotted(dotted)
    if not isinstance(value, (bool, int, float, str)):
        raise TypeError(f"Setting {dotted!r} must be a bool, int, float or str, not {value!r}.")
    if parts[0] == MODELS_TABLE:
        raise ValueError(
            f"Model routes are saved with set_model_route, not set_setting({dotted!r})."
        )
    if parts == [FLAG_TABLE, FLAG_KEY] and not isinstance(value, bool):
        raise TypeError(f"{dotted} must be True or False, not {type(value).__name__}.")

    def mutate(document: tomlkit.TOMLDocument) -> None:
        node: Any = document
        for depth, part in enumerate(parts[:-1]):
            # Tables that only hold sub-tables get no header of their own ([a.b], not [a]).
            node = ensure_table(node, part, super_table=depth < len(parts) - 2)
            if not isinstance(node, (Table, dict)):
                parent = ".".join(parts[: depth + 1])
                raise ConfigError(
                    f"Cannot save {dotted} in {config_path()}: {parent} is not a table; "
                    f"fix or delete {parent} in {config_path()}."
                )
        node[parts[-1]] = value

    update_config(mutate)
