"""The workspace folder: the user's data the scout reads, as a plain folder.

Layout (every part optional; a missing part is an empty source)::

    PROFILE.md, MEMORY.md          user files injected into the scout's prompt
    memory/<namespace>/<key>.md    memory tree documents (indexed under .supercontext/)
    memory/<key>.md                a note without a namespace folder: namespace "global"
    flavour/<facet>.md             one file per flavour facet
    skills/<dir_name>/SKILL.md     installed skills (front matter name, description, tags)
    registry.json                  the skill registry, a JSON list of entries
    integrations.toml              [[integration]] toolkit, description, connected
    orchestrator_tools.toml        [[tool]] name, description
    files/                         other files the scout may list and read (:mod:`.files_folder`)

A :class:`Workspace` reads lazily and caches each part; it never writes anything except
the memory index under ``.supercontext/`` (through :class:`MemoryTree`). A workspace is
often somebody else's folder, so every read is confined: a file or folder that is a link
leading out of the workspace, a FIFO, a device or anything under /proc is not read, and
the refusal is recorded in :attr:`Workspace.diagnostics` (the scout copies it into its
run's problems). So is every entry the layout does not read (``Memory/``, a ``.txt`` note,
``SKILLS/``, a skill folder without ``SKILL.md``: :mod:`.layout`), with the reason. Links that stay inside keep working; ``workspace.allow_outside_links =
true`` in the lab's config.toml (or ``allow_outside_links=True``) follows links out too,
but never into /proc, /sys or /dev. Reads inside ``files/`` cannot leave ``files/``. Every
file is read up to a size limit and every TOML or JSON file is parsed with bounded depth.
"""

from __future__ import annotations

import contextlib
import json
import os
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ValidationError

from .._bounded import InputLimitError, TOMLDecodeError, json_loads, toml_loads
from .._text import describe_validation_error, visible
from ..config import get_setting
from ..errors import ConfigError, MemoryIndexError, WorkspaceError
from .confined import resolve_or_none
from .files_folder import FilesFolder
from .frontmatter import parse_front_matter
from .integrations import (
    DEFAULT_ORCHESTRATOR_TOOLS,
    Integration,
    IntegrationIn,
    OrchestratorTool,
    ToolIn,
)
from .layout import IGNORED_NAMES, ignored
from .memory import INDEX_DIR, MemoryTree
from .memory.files import scan_memory_folder
from .memory.index import INDEX_FILE, index_problem
from .memory.schema import SCHEMA_VERSION
from .memory.seal import Seal
from .skills import InstalledSkill, RegistryEntry, parse_registry_entries

__all__ = [
    "IGNORED_NAMES",
    "Workspace",
    "memory_refusal",
]

_TOML_FILES = ("integrations.toml", "orchestrator_tools.toml")
_INDEX = f"{INDEX_DIR}/{INDEX_FILE}"


class Workspace(FilesFolder):
    """A workspace folder; every part is read on first use and cached.

    Raises :class:`WorkspaceError` when ``root`` is missing or not a folder, and (on first
    use of the part) when one of its files is unreadable or malformed; the message names
    the file.
    """

    def __init__(
        self, root: str | os.PathLike[str], *, allow_outside_links: bool | None = None
    ) -> None:
        path = Path(root).expanduser()
        if not path.exists():
            raise WorkspaceError(
                f"workspace folder '{path}' does not exist; create it or pass an existing folder."
            )
        if not path.is_dir():
            raise WorkspaceError(f"workspace '{path}' is not a folder; pass a folder path.")
        self.root: Path = path.resolve()
        self._diagnostics: list[str] = []
        self._refused: set[str] = set()
        self._surveyed = False
        if allow_outside_links is None:
            try:
                allow_outside_links = get_setting("workspace.allow_outside_links", False)
            except ConfigError as exc:
                # The safe value; the config problem itself is reported where it is used.
                allow_outside_links = False
                self._note(f"links out of the workspace are not followed ({exc})")
        self.allow_outside_links: bool = allow_outside_links
        """Whether links leading out of the workspace are followed (never into /proc,
        /sys or /dev)."""

    @property
    def diagnostics(self) -> list[str]:
        """One line per thing this workspace refused to read so far (a link out of it, a
        FIFO, a device, /proc, a file past its size limit), including the memory tree's
        refusals once it is open (notes left out, an index rebuilt), and one per entry its
        layout does not read (``Memory/`` for ``memory/``, a ``.txt`` note, ``SKILLS/``;
        :func:`.layout.ignored`), with the reason. Names are shown escaped
        (:func:`~supercontext_lab._text.visible`): each line is one line. Parts are read on
        first use, so this grows as they are."""
        if not self._surveyed:
            self._surveyed = True
            self._survey()
        return self.noted_diagnostics()

    @property
    def surveyed(self) -> bool:
        """Whether :attr:`diagnostics` has surveyed the workspace for refused sources."""
        return self._surveyed

    def noted_diagnostics(self) -> list[str]:
        """:attr:`diagnostics` without a survey: what the parts read so far refused, and
        a line saying the rest was not looked for when it was not (a survey stats every
        note of the memory folder, which a run out of time cannot afford)."""
        found = list(self._diagnostics)
        memory = self.__dict__.get("memory")
        if isinstance(memory, MemoryTree):
            if memory.rebuilt_because is not None:
                found.append(f"{_INDEX} was rebuilt from memory/: {memory.rebuilt_because}.")
            for rel, reason in memory.last_sync.refused:
                found.append(memory_refusal(rel, reason))
        if not self._surveyed:
            found.append(
                "not surveyed for refused files, to keep within the time limit "
                "(supercontext-lab workspace check lists them)"
            )
        # A line holds names from the folder: a name with a line break, a control or a
        # bidirectional character, or bytes that are not UTF-8 is shown escaped, so every
        # line stays one line that any sink can write.
        return list(dict.fromkeys(visible(line) for line in found))

    def index_problem(self) -> str | None:
        """The line :attr:`diagnostics` will hold when the memory index is opened and
        rebuilt (a copied workspace's index, a damaged one), found without opening it for
        writing; ``None`` when it is absent or usable."""
        reason = index_problem(self.root, Seal.for_folder(self.root, SCHEMA_VERSION))
        if reason is None:
            return None
        return f"{_INDEX} is not used and is rebuilt from memory/ on first use: {reason}."

    def _survey(self) -> None:
        """Note every refused source, read yet or not: checking where links lead costs a
        few stats, and a refusal must show even when the scout never opens that part."""
        for name in ("PROFILE.md", "MEMORY.md", "registry.json", *_TOML_FILES):
            path = self.root / name
            if path.is_symlink():
                self._confined(path)
        for name, pattern in (("flavour", "*.md"), ("skills", "*/SKILL.md")):
            folder = self._folder(name)
            if folder is not None:
                for path in sorted(folder.glob(pattern)):
                    if path.is_symlink() or path.parent.is_symlink():
                        self._confined(path)
        with contextlib.suppress(MemoryIndexError, OSError):
            _, _, refused = scan_memory_folder(
                self.root, allow_outside_links=self.allow_outside_links
            )
            # Namespace by namespace, file by file, as the scan's listing order is not.
            for rel, reason in sorted(refused, key=lambda item: item[0].split("/")):
                self._note(memory_refusal(rel, reason))
        for rel, reason in ignored(self.root, allow_outside_links=self.allow_outside_links):
            self._note(f"{rel} is not read: {reason}.")

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # ------------------------------------------------------------------ user files

    @cached_property
    def profile_md(self) -> str:
        """PROFILE.md, or ``""`` when absent."""
        return self._read_optional_text("PROFILE.md")

    @cached_property
    def memory_md(self) -> str:
        """MEMORY.md, or ``""`` when absent."""
        return self._read_optional_text("MEMORY.md")

    @cached_property
    def flavour(self) -> dict[str, str]:
        """Facet name (the file stem) → text, from ``flavour/<facet>.md``."""
        folder = self._folder("flavour")
        if folder is None:
            return {}
        facets: dict[str, str] = {}
        for path in sorted(folder.glob("*.md")):
            if path.name.startswith(".") or path.is_dir() or not self._named_in_text(path):
                continue
            text = self._read_text(path)
            if text is not None:
                facets[path.stem] = text
        return facets

    # ------------------------------------------------------------------ skills

    @cached_property
    def skills(self) -> list[InstalledSkill]:
        """Installed skills from ``skills/<dir_name>/SKILL.md``, sorted by ``dir_name``."""
        folder = self._folder("skills")
        if folder is None:
            return []
        skills: list[InstalledSkill] = []
        for skill_dir in sorted(folder.iterdir()):
            manifest = skill_dir / "SKILL.md"
            if skill_dir.name.startswith(".") or manifest.is_dir():
                continue
            if manifest.exists() and not self._named_in_text(skill_dir):
                continue
            text = self._read_text(manifest)
            if text is not None:
                skills.append(self._read_skill(skill_dir.name, text))
        return skills

    def _read_skill(self, dir_name: str, text: str) -> InstalledSkill:
        # The front-matter reader is forgiving: a damaged block reads as body, not an error.
        front = parse_front_matter(text)
        return InstalledSkill(
            dir_name=dir_name,
            name=(front.get("name") or "").strip() or dir_name,
            description=(front.get("description") or "").strip(),
            tags=tuple(front.get_list("tags")),
            body=front.body.strip(),
        )

    @cached_property
    def registry(self) -> list[RegistryEntry]:
        """Skill registry entries from ``registry.json``."""
        path = self.root / "registry.json"
        text = self._read_data(path)
        if text is None:
            return []
        try:
            data = json_loads(text)
        except InputLimitError as exc:
            raise WorkspaceError(f"{self._rel(path)} is unusable: {exc}; fix the file.") from None
        except ValueError as exc:
            detail = (
                f"{exc.msg} at line {exc.lineno} column {exc.colno}"
                if isinstance(exc, json.JSONDecodeError)
                else str(exc)
            )
            raise WorkspaceError(
                f"{self._rel(path)} is not valid JSON ({detail}); fix the file or remove it."
            ) from exc
        return parse_registry_entries(data, self._rel(path))

    # ------------------------------------------------------------------ integrations

    @cached_property
    def integrations(self) -> list[Integration]:
        """Integrations from ``integrations.toml`` (``[[integration]]`` tables)."""
        items = self._toml_array("integrations.toml", "integration", IntegrationIn)
        if items is None:
            return []
        return [
            Integration(toolkit=i.toolkit.strip(), description=i.description, connected=i.connected)
            for i in items
            if isinstance(i, IntegrationIn)
        ]

    @property
    def connected_integrations(self) -> list[Integration]:
        """The integrations marked ``connected = true``."""
        return [i for i in self.integrations if i.connected]

    @cached_property
    def orchestrator_tools(self) -> list[OrchestratorTool]:
        """The orchestrator's tool catalogue from ``orchestrator_tools.toml`` (``[[tool]]``),
        or :data:`DEFAULT_ORCHESTRATOR_TOOLS` when the file is absent."""
        items = self._toml_array("orchestrator_tools.toml", "tool", ToolIn)
        if items is None:
            return list(DEFAULT_ORCHESTRATOR_TOOLS)
        return [
            OrchestratorTool(name=t.name.strip(), description=t.description)
            for t in items
            if isinstance(t, ToolIn)
        ]

    def _toml_array(
        self, file_name: str, table: str, model: type[BaseModel]
    ) -> list[BaseModel] | None:
        """The validated ``[[table]]`` items of ``file_name``, or ``None`` when it is absent."""
        path = self.root / file_name
        text = self._read_data(path)
        if text is None:
            return None
        try:
            data = toml_loads(text)
        except InputLimitError as exc:
            raise WorkspaceError(f"{file_name} is unusable: {exc}; fix the file.") from None
        except TOMLDecodeError as exc:
            raise WorkspaceError(f"{file_name} is not valid TOML ({exc}); fix the file.") from exc
        raw = data.get(table, [])
        if not isinstance(raw, list):
            raise WorkspaceError(f"{file_name}: '{table}' must be an array of tables [[{table}]].")
        items: list[BaseModel] = []
        for index, item in enumerate(raw):
            if not isinstance(item, dict):
                raise WorkspaceError(f"{file_name} {table} {index} must be a table.")
            try:
                items.append(model.model_validate(item))
            except ValidationError as exc:
                raise WorkspaceError(
                    f"{file_name} {table} {index}: {describe_validation_error(exc, first_only=True)}."
                ) from exc
        return items

    # ------------------------------------------------------------------ memory

    @cached_property
    def memory(self) -> MemoryTree:
        """The memory tree, indexed under ``.supercontext/`` (opened on first use).

        Raises :class:`WorkspaceError` when ``.supercontext`` is a symlink or leads out of
        the workspace: the index is the one thing the lab writes (and, when damaged,
        deletes), so a hostile folder must not point it at somebody else's files.
        """
        index = self.root / INDEX_DIR
        resolved = resolve_or_none(index)
        if index.is_symlink() or resolved is None or not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"{INDEX_DIR} in workspace '{self.root}' is a link; the memory index is "
                f"only written inside the workspace. Remove the link (or delete {INDEX_DIR})."
            )
        return MemoryTree(self.root, allow_outside_links=self.allow_outside_links)


def memory_refusal(rel: str, reason: str) -> str:
    """The diagnostic line of a memory file or folder left out of the index."""
    return f"{'memory/' + rel if rel else 'memory/'} was not indexed: {reason}."
