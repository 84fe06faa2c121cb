"""The shipped demo workspace, copied into the lab home on first use.

The installed package is never written to: the demo is copied into
``lab_home()/demo-workspace/`` (where its memory index may be built) and copied again
when the shipped content changes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from pathlib import Path

from .._atomic import write_atomic
from .._hashing import digest_files
from ..config import lab_home
from ..errors import WorkspaceError
from .memory import INDEX_DIR
from .workspace import IGNORED_NAMES, Workspace

__all__ = ["demo_workspace_path", "open_workspace"]

_DEMO_DIR_NAME = "demo-workspace"
_DEMO_MARKER = "demo-source.sha256"
_SHIPPED_DEMO = Path(__file__).resolve().parent.parent / "demo" / "workspace"


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
    expected = _tree_hash(source)
    home = lab_home()
    target = home / _DEMO_DIR_NAME
    if not refresh and target.is_dir() and _marker_hash(target) == expected:
        return target
    try:
        home.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".demo-workspace-", dir=home))
    except OSError as exc:
        raise WorkspaceError(f"cannot create the demo workspace in '{home}' ({exc}).") from exc
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
        raise WorkspaceError(f"cannot copy the demo workspace to '{target}' ({exc}).") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


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
