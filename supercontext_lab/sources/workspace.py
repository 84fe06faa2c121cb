"""The workspace folder: the user's data the scout reads, as a plain folder.

Layout (every part optional; a missing part is an empty source)::

    PROFILE.md, MEMORY.md          user files injected into the scout's prompt
    memory/<namespace>/<key>.md    memory tree documents (indexed under .supercontext/)
    flavour/<facet>.md             one file per flavour facet
    skills/<dir_name>/SKILL.md     installed skills (front matter name, description, tags)
    registry.json                  the skill registry, a JSON list of entries
    integrations.toml              [[integration]] toolkit, description, connected
    orchestrator_tools.toml        [[tool]] name, description
    files/                         other files the scout may list and read

A :class:`Workspace` reads lazily and caches each part; it never writes anything except
the memory index under ``.supercontext/`` (through :class:`MemoryTree`). Reads inside
``files/`` cannot leave it: ``..``, absolute paths and symlinks that point outside are
refused.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._text import describe_validation_error
from ..errors import WorkspaceError
from .frontmatter import parse_front_matter
from .memory import INDEX_DIR, MemoryTree
from .skills import InstalledSkill, RegistryEntry, parse_registry_entries

# tomllib (3.11+) and its backport tomli share one API.
tomllib: Any = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")

__all__ = [
    "DEFAULT_ORCHESTRATOR_TOOLS",
    "IGNORED_NAMES",
    "Integration",
    "OrchestratorTool",
    "Workspace",
]

#: Names a listing of the workspace (or a copy of the demo) passes over.
IGNORED_NAMES = frozenset({INDEX_DIR, "__pycache__", ".DS_Store", ".ipynb_checkpoints"})


@dataclass(frozen=True)
class Integration:
    """A toolkit the orchestrator can reach (Gmail, Slack, ...), connected or not."""

    toolkit: str
    description: str
    connected: bool


@dataclass(frozen=True)
class OrchestratorTool:
    """One tool in the orchestrator's catalogue (what the scout may recommend calling)."""

    name: str
    description: str


def _delegate(toolkit: str, label: str, scope: str) -> OrchestratorTool:
    return OrchestratorTool(
        f"delegate_{toolkit}",
        f"Hand a task to the {label} integration's agent ({scope}); it acts on the "
        "user's connected account and reports back.",
    )


DEFAULT_ORCHESTRATOR_TOOLS: tuple[OrchestratorTool, ...] = (
    OrchestratorTool(
        "memory_recall",
        "Search the user's memory tree by namespace and query; returns the best matching "
        "notes with their category and key.",
    ),
    OrchestratorTool(
        "memory_store",
        "Save a fact, preference or decision to the memory tree under a namespace and key.",
    ),
    OrchestratorTool("web_search", "Search the web and return titles, URLs and snippets."),
    OrchestratorTool("web_fetch", "Fetch one web page and return its readable text."),
    OrchestratorTool(
        "run_workflow",
        "Run an installed skill by its dir_name slug with a JSON object of inputs.",
    ),
    OrchestratorTool(
        "skill_registry_install",
        "Install a skill from the registry by its entry id so run_workflow can run it.",
    ),
    OrchestratorTool("file_read", "Read a text file from the user's workspace."),
    OrchestratorTool("file_write", "Create or overwrite a text file in the user's workspace."),
    OrchestratorTool(
        "shell", "Run a shell command in the user's environment and return its output."
    ),
    OrchestratorTool(
        "spawn_subagent",
        "Start a worker agent on a self-contained sub-task and wait for its result.",
    ),
    OrchestratorTool(
        "agent_prepare_context",
        "Run the context scout on a question and return a [context_bundle] envelope.",
    ),
    OrchestratorTool("set_thread_goal", "Set or replace the one-line goal of this thread."),
    _delegate("gmail", "Gmail", "search, read, draft and send email"),
    _delegate("google_calendar", "Google Calendar", "find, create and move events"),
    _delegate("slack", "Slack", "read channels, search and post messages"),
    _delegate("notion", "Notion", "search, read and edit pages and databases"),
    _delegate("github", "GitHub", "issues, pull requests and repository files"),
    _delegate("google_drive", "Google Drive", "search, read and share documents"),
)
"""The orchestrator catalogue used when a workspace has no ``orchestrator_tools.toml``."""


class _IntegrationIn(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    toolkit: str = Field(min_length=1)
    description: str = ""
    connected: bool = False


class _ToolIn(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    name: str = Field(min_length=1)
    description: str = ""


class Workspace:
    """A workspace folder; every part is read on first use and cached.

    Raises :class:`WorkspaceError` when ``root`` is missing or not a folder, and (on first
    use of the part) when one of its files is unreadable or malformed; the message names
    the file.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        path = Path(root).expanduser()
        if not path.exists():
            raise WorkspaceError(
                f"workspace folder '{path}' does not exist; create it or pass an existing folder."
            )
        if not path.is_dir():
            raise WorkspaceError(f"workspace '{path}' is not a folder; pass a folder path.")
        self.root: Path = path.resolve()

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
        folder = self.root / "flavour"
        if not folder.is_dir():
            return {}
        facets: dict[str, str] = {}
        for path in sorted(folder.glob("*.md")):
            if path.is_file() and not path.name.startswith("."):
                facets[path.stem] = self._read_text(path)
        return facets

    # ------------------------------------------------------------------ skills

    @cached_property
    def skills(self) -> list[InstalledSkill]:
        """Installed skills from ``skills/<dir_name>/SKILL.md``, sorted by ``dir_name``."""
        folder = self.root / "skills"
        if not folder.is_dir():
            return []
        skills: list[InstalledSkill] = []
        for skill_dir in sorted(folder.iterdir()):
            manifest = skill_dir / "SKILL.md"
            if skill_dir.name.startswith(".") or not manifest.is_file():
                continue
            skills.append(self._read_skill(skill_dir.name, manifest))
        return skills

    def _read_skill(self, dir_name: str, manifest: Path) -> InstalledSkill:
        # The front-matter reader is forgiving: a damaged block reads as body, not an error.
        front = parse_front_matter(self._read_text(manifest))
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
        if not path.exists():
            return []
        text = self._read_text(path)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise WorkspaceError(
                f"{self._rel(path)} is not valid JSON ({exc.msg} at line {exc.lineno} "
                f"column {exc.colno}); fix the file or remove it."
            ) from exc
        return parse_registry_entries(data, self._rel(path))

    # ------------------------------------------------------------------ integrations

    @cached_property
    def integrations(self) -> list[Integration]:
        """Integrations from ``integrations.toml`` (``[[integration]]`` tables)."""
        items = self._toml_array("integrations.toml", "integration", _IntegrationIn)
        if items is None:
            return []
        return [
            Integration(toolkit=i.toolkit.strip(), description=i.description, connected=i.connected)
            for i in items
            if isinstance(i, _IntegrationIn)
        ]

    @property
    def connected_integrations(self) -> list[Integration]:
        """The integrations marked ``connected = true``."""
        return [i for i in self.integrations if i.connected]

    @cached_property
    def orchestrator_tools(self) -> list[OrchestratorTool]:
        """The orchestrator's tool catalogue from ``orchestrator_tools.toml`` (``[[tool]]``),
        or :data:`DEFAULT_ORCHESTRATOR_TOOLS` when the file is absent."""
        items = self._toml_array("orchestrator_tools.toml", "tool", _ToolIn)
        if items is None:
            return list(DEFAULT_ORCHESTRATOR_TOOLS)
        return [
            OrchestratorTool(name=t.name.strip(), description=t.description)
            for t in items
            if isinstance(t, _ToolIn)
        ]

    def _toml_array(
        self, file_name: str, table: str, model: type[BaseModel]
    ) -> list[BaseModel] | None:
        """The validated ``[[table]]`` items of ``file_name``, or ``None`` when it is absent."""
        path = self.root / file_name
        if not path.exists():
            return None
        text = self._read_text(path)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
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
        return MemoryTree(self.root)

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
        would lead into.
        """
        base = self._files_root()
        if base is None:
            return []
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            current = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES)
            for name in filenames:
                if name in IGNORED_NAMES:
                    continue
                path = current / name
                target = _resolve(path)
                if target is not None and target.is_relative_to(base) and target.is_file():
                    found.append(path.relative_to(base).as_posix())
        return sorted(found)

    def read_file(self, rel: str, max_chars: int = 20_000) -> str:
        """The text of ``files/<rel>``, at most ``max_chars`` characters.

        ``..``, absolute paths, paths that resolve outside ``files/`` (through symlinks),
        missing files, folders and binary files raise :class:`WorkspaceError`.
        """
        if max_chars < 0:
            raise WorkspaceError("max_chars must not be negative.")
        target = self._resolve_inside_files(rel)
        try:
            with target.open("rb") as handle:
                head = handle.read(8192)
            if b"\0" in head:
                raise WorkspaceError(f"files/{rel} is a binary file; only text files are read.")
            with target.open(encoding="utf-8", errors="replace", newline="") as handle:
                return handle.read(max_chars)
        except OSError as exc:
            raise WorkspaceError(f"files/{rel} cannot be read ({exc.strerror}).") from exc

    def _resolve_inside_files(self, rel: str) -> Path:
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
        return target

    # ------------------------------------------------------------------ helpers

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _read_optional_text(self, name: str) -> str:
        path = self.root / name
        if not path.exists():
            return ""
        return self._read_text(path)

    def _read_text(self, path: Path) -> str:
        if not path.is_file():
            raise WorkspaceError(f"{self._rel(path)} in '{self.root}' is not a file.")
        try:
            return path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise WorkspaceError(
                f"{self._rel(path)} in '{self.root}' is not UTF-8 text; save it as UTF-8."
            ) from exc
        except OSError as exc:
            raise WorkspaceError(
                f"{self._rel(path)} in '{self.root}' cannot be read ({exc.strerror})."
            ) from exc


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
