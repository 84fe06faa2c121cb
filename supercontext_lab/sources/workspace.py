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
    files/                         other files the scout may list and read

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
from pathlib import Path, PurePosixPath, PureWindowsPath

from pydantic import BaseModel, ValidationError

from .._bounded import InputLimitError, TOMLDecodeError, json_loads, toml_loads
from .._confine import read_confined
from .._text import NOT_PLAIN, describe_validation_error, plain_name, visible
from ..config import get_setting
from ..errors import ConfigError, MemoryIndexError, PathRefusedError, WorkspaceError
from .confined import ConfinedFolder
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
from .memory.index import INDEX_FILE, SCHEMA_VERSION, index_problem
from .memory.seal import Seal
from .skills import InstalledSkill, RegistryEntry, parse_registry_entries

__all__ = [
    "IGNORED_NAMES",
    "MAX_LIST_DEPTH",
    "MAX_LIST_ENTRIES",
    "Workspace",
    "memory_refusal",
]

_TOML_FILES = ("integrations.toml", "orchestrator_tools.toml")
_INDEX = f"{INDEX_DIR}/{INDEX_FILE}"
MAX_LIST_DEPTH = 32
"""``files/`` is listed this many folders deep."""
MAX_LIST_ENTRIES = 50_000
"""``files/`` is listed up to this many entries (files and folders)."""


class Workspace(ConfinedFolder):
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
        found = list(self._diagnostics)
        memory = self.__dict__.get("memory")
        if isinstance(memory, MemoryTree):
            if memory.rebuilt_because is not None:
                found.append(f"{_INDEX} was rebuilt from memory/: {memory.rebuilt_because}.")
            for rel, reason in memory.last_sync.refused:
                found.append(memory_refusal(rel, reason))
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
        resolved = _resolve(index)
        if index.is_symlink() or resolved is None or not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"{INDEX_DIR} in workspace '{self.root}' is a link; the memory index is "
                f"only written inside the workspace. Remove the link (or delete {INDEX_DIR})."
            )
        return MemoryTree(self.root, allow_outside_links=self.allow_outside_links)

    # ------------------------------------------------------------------ files/

    @property
    def files_dir(self) -> Path:
        """The ``files/`` folder (it may not exist)."""
        return self.root / "files"

    def _files_root(self) -> Path | None:
        folder = self.files_dir
        if not folder.is_dir():
            return None
        resolved = _resolve(folder)
        if resolved is None or not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"files/ in workspace '{self.root}' points outside the workspace; "
                "make it a real folder."
            )
        return resolved

    def list_files(self) -> list[str]:
        """Every readable file under ``files/`` as a sorted relative POSIX path.

        Symlinks whose target lies outside ``files/`` are left out; so are folders they
        would lead into. The walk is bounded: folders more than :data:`MAX_LIST_DEPTH`
        deep and entries past the first :data:`MAX_LIST_ENTRIES` are not listed (a note
        in :attr:`diagnostics` says so), so a hostile tree cannot exhaust the recursion
        limit or the scout's time.
        """
        base = self._files_root()
        if base is None:
            return []
        found: list[str] = []
        pending = [(base, 0)]
        seen = 0
        while pending:
            folder, depth = pending.pop()
            entries = sorted(_entries(folder), key=lambda entry: entry.name)
            subfolders: list[Path] = []
            for entry in entries:
                seen += 1
                if seen > MAX_LIST_ENTRIES:
                    self._note(f"files/ was listed up to its first {MAX_LIST_ENTRIES:,} entries.")
                    return sorted(found)
                if entry.name in IGNORED_NAMES:
                    continue
                path = Path(entry.path)
                if _is_dir(entry, follow=False):
                    subfolders.append(path)
                elif not (entry.is_symlink() and _is_dir(entry, follow=True)):
                    self._list_file(base, path, found)
            if subfolders and depth >= MAX_LIST_DEPTH:
                shown = subfolders[0].relative_to(base).as_posix()
                self._note(
                    f"files/{shown} and folders beside it were not listed: deeper than "
                    f"{MAX_LIST_DEPTH} folders."
                )
                continue
            pending.extend((sub, depth + 1) for sub in reversed(subfolders))
        return sorted(found)

    def _named_in_text(self, path: Path) -> bool:
        """Whether ``path``'s name is a :func:`~supercontext_lab._text.plain_name`; one
        that is not (a Latin-1 ``café``, a name holding a line break) cannot reach a
        prompt, a tool result or a citation as it is, and is noted instead."""
        if plain_name(path.name):
            return True
        self._note(f"{self._rel(path)} was left out: {NOT_PLAIN}.")
        return False

    def _list_file(self, base: Path, path: Path, found: list[str]) -> None:
        if not self._named_in_text(path):
            return
        target = _resolve(path)
        if target is not None and target.is_relative_to(base) and target.is_file():
            found.append(path.relative_to(base).as_posix())
        elif path.is_symlink():
            self._note(
                f"files/{path.relative_to(base).as_posix()} was left out: it is a link "
                "that leads out of files/ or nowhere."
            )

    def read_file(self, rel: str, max_chars: int = 20_000) -> str:
        """The text of ``files/<rel>``, at most ``max_chars`` characters.

        ``..``, absolute paths, paths that resolve outside ``files/`` (through symlinks),
        missing files, folders and binary files raise :class:`WorkspaceError`.
        """
        if max_chars < 0:
            raise WorkspaceError("max_chars must not be negative.")
        candidate, base = self._resolve_inside_files(rel)
        try:
            # One read of the file that was checked (see _confine.read_confined): at most
            # four bytes a character, and the first 8 kB to tell a binary file.
            data, _ = read_confined(base, candidate, max(4 * max_chars, 8192))
        except PathRefusedError as exc:
            raise WorkspaceError(f"files/{rel} was not read: {exc}; refused.") from exc
        except FileNotFoundError as exc:
            raise WorkspaceError(f"files/{rel} does not exist; list the files first.") from exc
        except OSError as exc:
            raise WorkspaceError(f"files/{rel} cannot be read ({exc.strerror}).") from exc
        if b"\0" in data[:8192]:
            raise WorkspaceError(f"files/{rel} is a binary file; only text files are read.")
        return data.decode("utf-8", errors="replace")[:max_chars]

    def _resolve_inside_files(self, rel: str) -> tuple[Path, Path]:
        """``files/<rel>`` (unresolved) and the resolved ``files/`` folder, once ``rel``
        passed every check; the read checks the file it opens again."""
        cleaned = rel.strip()
        if not cleaned:
            raise WorkspaceError("give a path inside files/, e.g. 'notes.md'.")
        if (
            PurePosixPath(cleaned).is_absolute()
            or PureWindowsPath(cleaned).is_absolute()
            or PureWindowsPath(cleaned).drive
            or cleaned.startswith(("/", "\\"))
        ):
            raise WorkspaceError(f"'{rel}' is an absolute path; give a path inside files/.")
        parts = cleaned.replace("\\", "/").split("/")
        if ".." in parts:
            raise WorkspaceError(f"'{rel}' leaves files/ ('..' is not allowed).")
        base = self._files_root()
        if base is None:
            raise WorkspaceError("this workspace has no files/ folder.")
        candidate = base.joinpath(*[p for p in parts if p not in ("", ".")])
        target = _resolve(candidate)
        if target is None:
            raise WorkspaceError(
                f"'{rel}' cannot be resolved (a symlink loop or an invalid name); refused."
            )
        if not target.is_relative_to(base):
            raise WorkspaceError(f"'{rel}' points outside files/ (through a symlink); refused.")
        if not target.exists():
            raise WorkspaceError(f"files/{rel} does not exist; list the files first.")
        if not target.is_file():
            raise WorkspaceError(f"files/{rel} is not a file.")
        return candidate, base


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError:
        return []  # unreadable: nothing to list


def _is_dir(entry: os.DirEntry[str], *, follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def memory_refusal(rel: str, reason: str) -> str:
    """The diagnostic line of a memory file or folder left out of the index."""
    return f"{'memory/' + rel if rel else 'memory/'} was not indexed: {reason}."


def _resolve(path: Path) -> Path | None:
    """``path`` with every symlink resolved, or ``None`` when it cannot be resolved.

    A workspace is untrusted input: ``Path.resolve`` raises ``RuntimeError`` on a symlink
    loop (before Python 3.13), ``ValueError`` on a NUL byte and ``OSError`` on other
    failures, none of which may escape from a listing or a read.
    """
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
