"""Round-trip editing of ``agent.toml`` text that keeps comments, order and formatting.

The live editor in the notebook layer builds on these functions: every change is applied
to a tomlkit document, the result is validated with the same loader as any definition,
and an invalid result is refused before anything is written. Saving is atomic and keeps
a backup of the file it replaces.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array

from .._atomic import write_atomic
from .._bounded import InputLimitError, toml_document
from ..errors import AgentDefinitionError
from .definition import AgentDefinition, load_agent_definition

__all__ = ["backup_path", "edit_agent_toml", "save_agent_files", "set_tool_enabled"]


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
        for item in value:
            if item not in current:
                current.append(item)
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


def set_tool_enabled(text: str, tool: str, enabled: bool) -> str:
    """Add ``tool`` to, or remove it from, ``[tools] named`` (validated like any edit)."""
    doc = _document(text)
    tools = doc.get("tools")
    named = list(tools.get("named", [])) if isinstance(tools, Mapping) else []
    names = [str(name) for name in named]
    if enabled and tool not in names:
        names.append(tool)
    elif not enabled:
        names = [name for name in names if name != tool]
    return edit_agent_toml(text, {"tools.named": names})


def backup_path(path: Path) -> Path:
    """Where :func:`save_agent_files` keeps the previous version of ``path``."""
    return path.with_name(path.name + ".bak")


def save_agent_files(
    path: str | os.PathLike[str], toml_text: str, *, prompt: str | None = None
) -> AgentDefinition:
    """Validate, then atomically save ``toml_text`` to ``path`` (and ``prompt`` to the
    ``prompt.md`` beside it when given), keeping a ``.bak`` of each replaced file.

    Nothing is written when the definition or the prompt is invalid. A crash at any point
    leaves each file either whole-old or whole-new; the backup holds the previous version.
    """
    target = Path(path)
    if prompt is not None and not prompt.strip():
        raise AgentDefinitionError("prompt.md: the role prompt is empty; write one.")
    definition = load_agent_definition(toml_text, prompt=prompt)
    target.parent.mkdir(parents=True, exist_ok=True)
    pairs = [(target, toml_text)]
    if prompt is not None:
        pairs.append((target.with_name("prompt.md"), prompt))
    try:
        for file, text in pairs:
            write_atomic(file, text, backup=backup_path(file))
    except OSError as exc:
        raise AgentDefinitionError(
            f"{target}: could not save ({exc.strerror or exc}); the previous file is "
            "unchanged or kept in its .bak backup."
        ) from exc
    del definition  # validated above; reload so the result knows its file and prompt
    return load_agent_definition(target)
