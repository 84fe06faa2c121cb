"""The shipped demo workspace, copied into the lab home on first use; and a copy of any
workspace, for work that must leave the folder itself as it was.

The installed package is never written to: the demo is copied into
``lab_home()/demo-workspace/`` (where its memory index may be built) and copied again
when the shipped content changes. :func:`copy_workspace` copies a folder somebody named
into ``lab_home()/copies/`` the way a workspace reads it, confined.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from pathlib import Path

from .._atomic import write_atomic
from .._confine import read_confined
from .._hashing import digest_files
from ..config import lab_home
from ..errors import PathRefusedError, WorkspaceError
from .confined import MAX_DATA_BYTES
from .files_folder import MAX_LIST_DEPTH, MAX_LIST_ENTRIES
from .layout import Finding
from .memory import INDEX_DIR
from .workspace import IGNORED_NAMES, Workspace

__all__ = [
    "MAX_COPIED_BYTES",
    "copy_workspace",
    "demo_workspace_path",
    "is_packaged",
    "open_workspace",
    "packaged_workspace_path",
]

_DEMO_DIR_NAME = "demo-workspace"
_DEMO_MARKER = "demo-source.sha256"
_PACKAGE = Path(__file__).resolve().parent.parent
_SHIPPED_DEMO = _PACKAGE / "demo" / "workspace"
_SHIPPED_DIR_NAME = "shipped"
_COPIES_DIR_NAME = "copies"

MAX_COPIED_BYTES = MAX_DATA_BYTES + 1
"""A copied file keeps at most this much of the original: one byte more than any reader
of a workspace reads, so the copy reads exactly as the original does, "more was there"
included."""


def _shipped_files(source: Path) -> list[Path]:
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_NAMES)
        files.extend(Path(dirpath) / name for name in filenames if name not in IGNORED_NAMES)
    return sorted(files)


def _tree_hash(source: Path) -> str:
    # Hashing reads every shipped file; a stat signature of the tree decides whether the
    # last hash still holds, so opening the demo again costs a few stats, not a re-read.
    files = _shipped_files(source)
    signature = tuple(
        (path.relative_to(source).as_posix(), stat.st_size, stat.st_mtime_ns)
        for path in files
        for stat in (path.stat(),)
    )
    return _hash_files(source, signature)


@functools.lru_cache(maxsize=8)
def _hash_files(source: Path, signature: tuple[tuple[str, int, int], ...]) -> str:
    return digest_files(source, (source / rel for rel, _size, _mtime in signature))


def _marker_hash(folder: Path) -> str | None:
    try:
        return (folder / INDEX_DIR / _DEMO_MARKER).read_text(encoding="utf-8").strip()
    except OSError:
        return None


def demo_workspace_path(refresh: bool = False) -> Path:
    """The demo workspace, copied from the package into ``lab_home()/demo-workspace/``.

    The copy is made on first use and again when the shipped content changes (its hash is
    kept in ``.supercontext/demo-source.sha256``) or when ``refresh`` is true. It is built in
    a temporary folder and renamed into place, so a half-made copy is never used, and the
    installed package is never written to.
    """
    source = _SHIPPED_DEMO
    if not source.is_dir():
        raise WorkspaceError(
            f"the shipped demo workspace is missing at '{source}'; reinstall supercontext-lab."
        )
    return _copy_of(source, lab_home() / _DEMO_DIR_NAME, refresh=refresh)


def is_packaged(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` lies inside the installed package (a shipped workspace)."""
    try:
        Path(path).resolve().relative_to(_PACKAGE)
    except (ValueError, OSError):
        return False
    return True


def packaged_workspace_path(path: str | os.PathLike[str], refresh: bool = False) -> Path:
    """A workspace shipped inside the package (the evaluation sets' workspaces), copied
    as the demo is into ``lab_home()/shipped/<its path in the package>``: an evaluation
    indexes its memory, and the installed package is never written to."""
    source = Path(path).resolve()
    relative = source.relative_to(_PACKAGE)
    if not source.is_dir():
        raise WorkspaceError(f"the shipped workspace '{relative}' is missing; reinstall.")
    target = lab_home() / _SHIPPED_DIR_NAME / "-".join(relative.parts)
    return _copy_of(source, target, refresh=refresh)


def _copy_of(source: Path, target: Path, *, refresh: bool) -> Path:
    """``target``, made a copy of ``source`` unless it already holds one of its content."""
    expected = _tree_hash(source)
    if not refresh and target.is_dir() and _marker_hash(target) == expected:
        return target
    home = target.parent
    try:
        home.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=home))
    except OSError as exc:
        raise WorkspaceError(f"cannot create the workspace copy in '{home}' ({exc}).") from exc
    try:
        fresh = staging / "workspace"
        for path in _shipped_files(source):
            dest = fresh / path.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        (fresh / INDEX_DIR).mkdir(parents=True, exist_ok=True)
        write_atomic(fresh / INDEX_DIR / _DEMO_MARKER, expected + "\n")
        _swap_into_place(fresh, target, staging)
    except OSError as exc:
        raise WorkspaceError(f"cannot copy the workspace to '{target}' ({exc}).") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def copy_workspace(workspace: Workspace) -> tuple[Path, list[Finding]]:
    """A fresh copy of ``workspace`` in ``lab_home()/copies/<its folder name>``, and what
    was left out of it (each a path and why).

    For work that must leave the folder as it was (a shipped notebook run on a folder its
    user named stores and forgets conversations in the copy). Files are read as the
    workspace reads them: a link leading out of it (unless the workspace follows such
    links), a FIFO or a device is left out, and each file keeps at most
    :data:`MAX_COPIED_BYTES`. Hidden names and the lab's own ``.supercontext/`` (index,
    conversations) are not copied; nor is the lab home, should it lie inside the folder.
    The walk is bounded like the listing of ``files/``. The copy is made in a temporary
    folder and renamed into place, replacing an older copy of the same name.
    """
    root = workspace.root
    copies = lab_home() / _COPIES_DIR_NAME
    target = copies / (root.name or "workspace")
    try:
        copies.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=copies))
    except OSError as exc:
        raise WorkspaceError(f"cannot create the workspace copy in '{copies}' ({exc}).") from exc
    try:
        fresh = staging / "workspace"
        fresh.mkdir()
        left_out = _copy_files(workspace, fresh, skip=lab_home().resolve())
        _swap_into_place(fresh, target, staging)
    except OSError as exc:
        raise WorkspaceError(f"cannot copy the workspace to '{target}' ({exc}).") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target, left_out


def _copy_files(workspace: Workspace, fresh: Path, *, skip: Path) -> list[Finding]:
    root, left_out, seen = workspace.root, [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        # Links to folders are not walked into (os.walk's default), nor is the lab home.
        dirnames[:] = sorted(n for n in dirnames if not _hidden(n) and here / n != skip)
        if dirnames and len(here.relative_to(root).parts) >= MAX_LIST_DEPTH:
            deeper = (here / dirnames[0]).relative_to(root).as_posix()
            left_out.append((deeper + "/", f"more than {MAX_LIST_DEPTH} folders deep"))
            dirnames[:] = []
        for name in sorted(n for n in filenames if not _hidden(n)):
            seen += 1
            rel = (here / name).relative_to(root)
            if seen > MAX_LIST_ENTRIES:
                left_out.append((rel.as_posix(), f"past the first {MAX_LIST_ENTRIES:,} files"))
                return left_out
            try:
                data, _more = read_confined(
                    root,
                    here / name,
                    MAX_COPIED_BYTES,
                    allow_outside=workspace.allow_outside_links,
                )
            except PathRefusedError as exc:
                left_out.append((rel.as_posix(), str(exc)))
                continue
            except OSError as exc:
                left_out.append((rel.as_posix(), exc.strerror or type(exc).__name__))
                continue
            dest = fresh / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
    return left_out


def _hidden(name: str) -> bool:
    return name.startswith(".") or name in IGNORED_NAMES


def _swap_into_place(fresh: Path, target: Path, staging: Path) -> None:
    """Rename ``fresh`` to ``target``, moving an older copy aside first."""
    if target.exists():
        # Moved into the staging folder so it is removed with it; another process may
        # have moved it first.
        with contextlib.suppress(FileNotFoundError):
            target.rename(staging / "previous")
    try:
        fresh.rename(target)
    except OSError:
        # Another process put its copy in place between the two renames; it is as good.
        if not target.is_dir():
            raise


def open_workspace(path: str | os.PathLike[str] | None) -> Workspace:
    """The workspace at ``path``, or the demo workspace when ``path`` is ``None``."""
    if path is None:
        return Workspace(demo_workspace_path())
    return Workspace(path)
