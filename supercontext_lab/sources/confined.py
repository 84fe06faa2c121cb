"""A folder read under confinement: links out of it refused, sizes bounded, refusals noted.

:class:`ConfinedFolder` is what :class:`~supercontext_lab.sources.workspace.Workspace`
reads its files through. A file reached through a link that leads out of the folder (or
anywhere into /proc, /sys or /dev), a FIFO or a device is not read: a one-line note goes
to :attr:`ConfinedFolder._diagnostics` instead, so the refusal is shown, never silent.
Markdown is cut at :data:`MAX_TEXT_BYTES`; JSON and TOML past :data:`MAX_DATA_BYTES` are
refused. Every read goes through :func:`~supercontext_lab._confine.read_confined`, which
opens the very file it checked (a file swapped for a link in between is not followed).
"""

from __future__ import annotations

from pathlib import Path

from .._confine import confined_path, read_confined
from ..config.secrets import mask
from ..errors import PathRefusedError, WorkspaceError

__all__ = ["MAX_DATA_BYTES", "MAX_TEXT_BYTES", "ConfinedFolder", "resolve_or_none"]

MAX_TEXT_BYTES = 1 << 20
"""Markdown sources are read up to this size (the prompt keeps far less of them)."""
MAX_DATA_BYTES = 8 << 20
"""registry.json and the TOML files are refused past this size."""


class ConfinedFolder:
    """Reads inside :attr:`root`, following links out of it only when
    :attr:`allow_outside_links` is true."""

    root: Path
    allow_outside_links: bool
    _diagnostics: list[str]
    _refused: set[str]
    """The paths (relative to :attr:`root`) of the files refused so far."""

    def _note(self, line: str) -> None:
        if line not in self._diagnostics:
            self._diagnostics.append(line)

    def _refuse(self, path: Path, why: str) -> None:
        """Note that ``path`` was not read, and why."""
        rel = self._rel(path)
        self._refused.add(rel)
        self._note(f"{rel} was not read: {why}.")

    def refused(self, rel: str) -> bool:
        """Whether the file ``rel`` (relative to :attr:`root`) was refused when read."""
        return rel in self._refused

    def _rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def _read_optional_text(self, name: str) -> str:
        return self._read_text(self.root / name) or ""

    def _folder(self, name: str) -> Path | None:
        """The folder ``name`` of the workspace, or ``None`` when absent or refused."""
        folder = self.root / name
        if not folder.is_dir():
            return None
        try:
            return confined_path(self.root, folder, allow_outside=self.allow_outside_links)
        except (PathRefusedError, OSError) as exc:
            self._refused.add(name)
            self._note(f"{name}/ was not read: {exc}.")
            return None

    def _confined(self, path: Path) -> Path | None:
        """The real path of a workspace file, or ``None`` (with a diagnostic) if refused."""
        try:
            return confined_path(self.root, path, allow_outside=self.allow_outside_links)
        except PathRefusedError as exc:
            self._refuse(path, str(exc))
        except FileNotFoundError:
            if path.is_symlink():
                self._refuse(path, "it is a link to nothing")
        except OSError as exc:
            raise WorkspaceError(
                f"{self._rel(path)} in '{self.root}' cannot be read ({exc.strerror or exc})."
            ) from exc
        return None

    def _read_text(self, path: Path) -> str | None:
        """A Markdown source, cut at its size limit, with secrets masked; ``None`` when
        absent or refused."""
        text = self._decoded(path, self._read_bytes(path, MAX_TEXT_BYTES, cut=True))
        # A key pasted into a note must not reach a prompt, a bundle or a trace: every
        # Markdown source is masked as it is read, so what is quoted and what the
        # grounding check compares it with are the same text.
        return None if text is None else mask(text)

    def _read_data(self, path: Path) -> str | None:
        """A JSON or TOML source (refused past its size limit); ``None`` when absent or
        refused."""
        return self._decoded(path, self._read_bytes(path, MAX_DATA_BYTES, cut=False))

    def _decoded(self, path: Path, data: bytes | None) -> str | None:
        if data is None:
            return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise WorkspaceError(
                f"{self._rel(path)} in '{self.root}' is not UTF-8 text; save it as UTF-8."
            ) from exc

    def _read_bytes(self, path: Path, limit: int, *, cut: bool) -> bytes | None:
        if not path.exists() and not path.is_symlink():
            return None
        if self._confined(path) is None:  # refused (noted) or a link to nothing
            return None
        if path.is_dir():
            raise WorkspaceError(f"{self._rel(path)} in '{self.root}' is not a file.")
        try:
            data, more = read_confined(
                self.root, path, limit, allow_outside=self.allow_outside_links
            )
        except PathRefusedError as exc:
            self._refuse(path, str(exc))
            return None
        except FileNotFoundError:
            return None  # removed since it was listed
        except OSError as exc:
            raise WorkspaceError(
                f"{self._rel(path)} in '{self.root}' cannot be read ({exc.strerror or exc})."
            ) from exc
        if more and not cut:
            raise WorkspaceError(
                f"{self._rel(path)} in '{self.root}' is larger than {limit >> 20} MiB; "
                "make it smaller."
            )
        if more:
            self._note(f"{self._rel(path)} was read up to its first {limit >> 20} MiB only.")
        return data


def resolve_or_none(path: Path) -> Path | None:
    """``path`` with every symlink resolved, or ``None`` when it cannot be resolved.

    A workspace is untrusted input: ``Path.resolve`` raises ``RuntimeError`` on a symlink
    loop (before Python 3.13), ``ValueError`` on a NUL byte and ``OSError`` on other
    failures, none of which may escape from a listing or a read.
    """
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
