"""The ``files/`` folder of a workspace: listed and read without leaving it.

``files/`` holds the user's other files, which the scout may list and the orchestrator may
read. Its walk is bounded (:data:`MAX_LIST_DEPTH` folders deep, :data:`MAX_LIST_ENTRIES`
entries), names that cannot be shown as text are left out with a note, and a read cannot
leave ``files/``: ``..``, absolute paths and links out of it are refused, and the file
read is the file that was checked.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from .._confine import read_confined
from .._text import NOT_PLAIN, plain_name
from ..errors import PathRefusedError, WorkspaceError
from .confined import ConfinedFolder, resolve_or_none
from .layout import IGNORED_NAMES

__all__ = ["MAX_LIST_DEPTH", "MAX_LIST_ENTRIES", "FilesFolder"]

MAX_LIST_DEPTH = 32
"""``files/`` is listed this many folders deep."""
MAX_LIST_ENTRIES = 50_000
"""``files/`` is listed up to this many entries (files and folders)."""


class FilesFolder(ConfinedFolder):
    """A confined folder with a ``files/`` folder to list and read."""

    @property
    def files_dir(self) -> Path:
        """The ``files/`` folder (it may not exist)."""
        return self.root / "files"

    def _files_root(self) -> Path | None:
        folder = self.files_dir
        if not folder.is_dir():
            return None
        resolved = resolve_or_none(folder)
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
        target = resolve_or_none(path)
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
        target = resolve_or_none(candidate)
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
