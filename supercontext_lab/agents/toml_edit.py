"""Round-trip editing of ``agent.toml`` text that keeps comments, order and formatting.

The live editor in the notebook layer builds on these functions: every change is applied
to a tomlkit document, the result is validated with the same loader as any definition,
and an invalid result is refused before anything is written. Saving is atomic and keeps
a backup of the file it replaces.

A saved file may be a link (``agent.toml -> versions/v3.toml``). Replacing the link with a
plain file would leave the file it names unchanged while the save looked done, so a save
writes through to the link's target when that target stays inside the definition's
folder (or another folder the caller allows, such as the workspace), and refuses, with
the cause in one line, a link leading elsewhere, a link loop, a link to nothing, a
special file (a FIFO, a device, a folder) and a read-only file. After writing, the path
saved must still lead to the file written.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array

from .._atomic import write_atomic
from .._bounded import InputLimitError, toml_document
from .._confine import confined_path
from .._text import one_line
from ..errors import AgentDefinitionError, PathRefusedError
from .definition import AgentDefinition, load_agent_definition

__all__ = [
    "backup_path",
    "edit_agent_toml",
    "save_agent_files",
    "set_tool_enabled",
    "write_target",
]


def _document(text: str) -> tomlkit.TOMLDocument:
    try:
        return toml_document(text)
    except InputLimitError as exc:
        raise AgentDefinitionError(f"agent.toml: {exc}.") from None
    except TOMLKitError as exc:
        raise AgentDefinitionError(f"agent.toml: invalid TOML: {exc}.") from None


def _set_dotted(doc: tomlkit.TOMLDocument, dotted: str, value: Any) -> None:
    *tables, key = dotted.split(".")
    if not key or any(not part for part in tables):
        raise AgentDefinitionError(f"{dotted}: not a valid key path.")
    container: Any = doc
    for name in tables:
        if name not in container:
            container[name] = tomlkit.table()
        container = container[name]
        if not isinstance(container, MutableMapping):
            raise AgentDefinitionError(f"{dotted}: '{name}' is not a table.")
    if value is None:
        if key in container:
            del container[key]
        return
    current = container.get(key)
    if isinstance(current, Array) and isinstance(value, list):
        # Edit the array in place so its layout (one item a line, indentation) survives.
        for index in reversed(range(len(current))):
            if current[index] not in value:
                del current[index]
        # Items come back at their place in ``value`` (a tool re-ticked in the editor
        # returns where it was), so the array is unchanged when the list is.
        for index, item in enumerate(value):
            if item not in current:
                current.insert(index, item)
        if list(current) == value:
            return
    container[key] = value


def edit_agent_toml(text: str, changes: Mapping[str, Any]) -> str:
    """Apply ``changes`` (dotted keys such as ``"temperature"`` or ``"model.hint"``) to
    ``text`` and return the new text, comments and layout preserved.

    A value of ``None`` removes the key. The result is validated; an invalid result
    raises :class:`AgentDefinitionError` and nothing is returned.
    """
    doc = _document(text)
    for dotted, value in changes.items():
        _set_dotted(doc, dotted, value)
    new_text = tomlkit.dumps(doc)
    load_agent_definition(new_text)
    return new_text


def set_tool_enabled(
    text: str, tool: str, enabled: bool, *, order: Sequence[str] | None = None
) -> str:
    """Add ``tool`` to, or remove it from, ``[tools] named`` (validated like any edit).

    ``order``: a list of tools ``tool`` once stood in (say, ``[tools] named`` before it
    was removed); an added tool goes back after the tools that preceded it there, so
    removing and adding it again gives the same list. Otherwise it is added at the end.
    """
    doc = _document(text)
    tools = doc.get("tools")
    named = list(tools.get("named", [])) if isinstance(tools, Mapping) else []
    names = [str(name) for name in named]
    if enabled and tool not in names:
        names.insert(_position(names, tool, order), tool)
    elif not enabled:
        names = [name for name in names if name != tool]
    return edit_agent_toml(text, {"tools.named": names})


def _position(names: list[str], tool: str, order: Sequence[str] | None) -> int:
    if order is None or tool not in order:
        return len(names)
    before = set(order[: list(order).index(tool)])
    return max((index + 1 for index, name in enumerate(names) if name in before), default=0)


def backup_path(path: Path) -> Path:
    """Where :func:`save_agent_files` keeps the previous version of ``path``."""
    return path.with_name(path.name + ".bak")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _link_target(path: Path, allowed: Sequence[Path]) -> Path:
    """The real file the link ``path`` leads to, which must lie inside a folder of
    ``allowed``; raises :class:`PathRefusedError` with the cause."""
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        raise PathRefusedError(f"it is a link to {path.resolve()}, which does not exist") from None
    except (OSError, RuntimeError):
        raise PathRefusedError("it is a link loop") from None
    for root in allowed:
        try:
            return confined_path(root, path)
        except PathRefusedError:
            continue
    where = " or ".join(str(root) for root in allowed)
    raise PathRefusedError(f"it is a link to {real}, outside {where}")


def write_target(path: str | os.PathLike[str], *, allowed: Sequence[Path] = ()) -> Path:
    """The file a save of ``path`` writes: ``path`` itself, or the file its link leads to
    when that stays inside ``path``'s folder or a folder of ``allowed``.

    Raises :class:`AgentDefinitionError` naming ``path`` and the cause: a link leading
    elsewhere, a link loop or to nothing, a special file, a read-only file.
    """
    target = Path(path)
    try:
        try:
            info = os.lstat(target)
        except FileNotFoundError:
            return target  # a new file
        real = target
        if stat.S_ISLNK(info.st_mode):
            folder = target.parent.resolve()
            real = _link_target(target, [folder, *(Path(a).resolve() for a in allowed)])
            info = os.stat(real)
        if not stat.S_ISREG(info.st_mode):
            raise PathRefusedError(f"{real} is {_kind(info.st_mode)}")
        # Root may write any file: the mode bits still say the file is meant read-only.
        if not info.st_mode & 0o222 or not os.access(real, os.W_OK):
            raise PathRefusedError(f"{real} is read-only")
    except (PathRefusedError, OSError, ValueError) as exc:
        raise AgentDefinitionError(one_line(f"{target}: not saved: {exc}.")) from None
    return real


def save_agent_files(
    path: str | os.PathLike[str],
    toml_text: str,
    *,
    prompt: str | None = None,
    allowed: Sequence[Path] = (),
) -> AgentDefinition:
    """Validate, then atomically save ``toml_text`` to ``path`` (and ``prompt`` to the
    ``prompt.md`` beside it when given), keeping a ``.bak`` of each replaced file.

    A file that is a link is written through to its target, under the rules of
    :func:`write_target` (``allowed``: folders besides ``path``'s own that a link may
    lead into). Nothing is written when the definition or the prompt is invalid or a file
    is refused. A crash at any point leaves each file either whole-old or whole-new; the
    backup (beside the file written) holds the previous version.
    """
    target = Path(path)
    if prompt is not None and not prompt.strip():
        raise AgentDefinitionError("prompt.md: the role prompt is empty; write one.")
    definition = load_agent_definition(toml_text, prompt=prompt)
    target.parent.mkdir(parents=True, exist_ok=True)
    pairs = [(target, toml_text)]
    if prompt is not None:
        pairs.append((target.with_name("prompt.md"), prompt))
    # Every file is checked before any is written: a refused prompt.md leaves agent.toml.
    writes = [(file, write_target(file, allowed=allowed), text) for file, text in pairs]
    try:
        for _file, real, text in writes:
            write_atomic(real, text, backup=backup_path(real))
    except OSError as exc:
        raise AgentDefinitionError(
            f"{target}: could not save ({exc.strerror or exc}); the previous file is "
            "unchanged or kept in its .bak backup."
        ) from exc
    for file, real, _text in writes:
        # The path saved must lead to the file written. Paths, not inodes: another
        # process may have saved after this one (its content then wins, as it should).
        if os.path.realpath(file) != os.path.realpath(real):
            raise AgentDefinitionError(
                one_line(f"{file}: not saved: it does not lead to {real}, the file written.")
            )
    del definition  # validated above; reload so the result knows its file and prompt
    return load_agent_definition(target)
