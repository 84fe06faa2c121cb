"""What in a workspace folder is not read, and why: near-misses of the layout.

A workspace is written by hand, so its first mistakes are near-misses: ``Memory/`` for
``memory/``, ``profile.md`` for ``PROFILE.md``, a ``.txt`` note, ``SKILLS/``, a skill
folder without its ``SKILL.md``, a note one folder too deep. None of them is an error
(every part of a workspace is optional), which is why each must be said: :func:`ignored`
names every entry the workspace does not read, with the reason and the fix, and
:class:`~.workspace.Workspace` puts them in its diagnostics (the panel's Problems tab and
``supercontext-lab workspace check``).

Only names are looked at (a few listings, no file is read), the top level of the
workspace, ``memory/`` and its namespace folders, ``skills/`` and ``flavour/``; hidden
entries and the lab's own (``.supercontext/``) are passed over, and at most
:data:`MAX_IGNORED` entries are named. A folder reached through a link that leads out of
the workspace is not listed (unless links out are allowed): even its names are someone
else's, and the workspace's own reads report the link.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .._confine import confined_path
from ..errors import PathRefusedError
from .flavour import FLAVOUR_FACETS, normalise_facet
from .memory import INDEX_DIR

__all__ = ["IGNORED_NAMES", "KNOWN_FILES", "KNOWN_FOLDERS", "MAX_IGNORED", "Finding", "ignored"]

KNOWN_FILES = (
    "PROFILE.md",
    "MEMORY.md",
    "registry.json",
    "integrations.toml",
    "orchestrator_tools.toml",
    "README.md",
)
"""The files read at the top of a workspace (``README.md`` is for people and passed over)."""
KNOWN_FOLDERS = ("memory", "flavour", "skills", "files")
"""The folders read at the top of a workspace."""
MAX_IGNORED = 200
"""At most this many ignored entries are named; one more line counts the rest."""

_NOTE_SUFFIXES = (".md", ".txt", ".markdown", ".mdown", ".text", ".rst")
# Other spellings of a folder's name, as people write them.
_FOLDER_SPELLINGS = {
    "memories": "memory",
    "flavor": "flavour",
    "flavors": "flavour",
    "flavours": "flavour",
    "skill": "skills",
    "file": "files",
}
IGNORED_NAMES = frozenset({INDEX_DIR, "__pycache__", ".DS_Store", ".ipynb_checkpoints"})
"""Names a listing of the workspace (or a copy of the demo) passes over without a word."""

Finding = tuple[str, str]
"""``(path inside the workspace, why it is not read)``; a folder's path ends in ``/``."""


_Listing = Callable[[Path], "list[os.DirEntry[str]]"]
"""The visible entries of a folder of the workspace being scanned, sorted by name."""


def _lister(root: Path, allow_outside: bool) -> _Listing:
    """How the scan of the workspace at ``root`` lists a folder: never one a link leads
    to outside ``root`` (unless ``allow_outside``)."""
    real_root = root.resolve()

    def listing(folder: Path) -> list[os.DirEntry[str]]:
        try:
            confined_path(real_root, folder, allow_outside=allow_outside)
            with os.scandir(folder) as entries:
                return sorted(
                    (
                        e
                        for e in entries
                        if not e.name.startswith(".") and e.name not in IGNORED_NAMES
                    ),
                    key=lambda entry: entry.name,
                )
        except (OSError, PathRefusedError):
            # Absent, unreadable or leading out: the part is empty, reported where it is read.
            return []

    return listing


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def ignored(root: Path, *, allow_outside_links: bool = False) -> list[Finding]:
    """Every entry of the workspace at ``root`` that is not read, with the reason."""
    listing = _lister(root, allow_outside_links)
    found: list[Finding] = []
    for entry in listing(root):
        if _is_dir(entry):
            found.extend(_top_folder(listing, root, entry.name))
        else:
            found.extend(_top_file(entry.name))
    if len(found) > MAX_IGNORED:
        rest = len(found) - MAX_IGNORED
        found = [*found[:MAX_IGNORED], ("…", f"{rest} more entries are not read either")]
    return found


def _top_file(name: str) -> list[Finding]:
    if name in KNOWN_FILES:
        return []
    for known in KNOWN_FILES:
        if name.lower() == known.lower():
            return [(name, f"only {known} is read (the name is case-sensitive); rename it")]
        stem, _, _ = known.rpartition(".")
        if name.lower().startswith(stem.lower() + "."):
            return [(name, f"only {known} is read; rename it to {known}")]
    if name.lower().endswith(_NOTE_SUFFIXES):
        return [
            (
                name,
                "at the top of a workspace only PROFILE.md and MEMORY.md are read; move a "
                "note into memory/ as a .md file, or into files/",
            )
        ]
    return [(name, "not a part of a workspace; move it into files/ for the scout to list it")]


def _top_folder(listing: _Listing, root: Path, name: str) -> list[Finding]:
    if name == "memory":
        return _memory(listing, root / name)
    if name == "skills":
        return _skills(listing, root / name)
    if name == "flavour":
        return _flavour(listing, root / name)
    if name == "files":
        return []
    known = _FOLDER_SPELLINGS.get(name.lower(), name.lower())
    if known in KNOWN_FOLDERS:
        return [(f"{name}/", f"only {known}/ is read (the name is case-sensitive); rename it")]
    return [
        (
            f"{name}/",
            "not a part of a workspace (memory/, flavour/, skills/, files/); move notes "
            "into memory/<namespace>/ and other files into files/",
        )
    ]


def _flavour(listing: _Listing, folder: Path) -> list[Finding]:
    """The entries of ``flavour/`` that no facet is read from."""
    out: list[Finding] = []
    facets = ", ".join(FLAVOUR_FACETS)
    for entry in listing(folder):
        rel = f"flavour/{entry.name}"
        if _is_dir(entry):
            out.append((f"{rel}/", "a facet is one .md file, flavour/<facet>.md"))
        elif not entry.name.lower().endswith(".md"):
            out.append((rel, "a facet is read from a .md file, flavour/<facet>.md"))
        elif normalise_facet(entry.name[:-3]) is None:
            out.append((rel, f"'{entry.name[:-3]}' is not a facet ({facets}); rename it"))
    return out


def _memory(listing: _Listing, folder: Path) -> list[Finding]:
    out: list[Finding] = []
    for entry in listing(folder):
        if not _is_dir(entry):
            if not entry.name.lower().endswith(".md"):
                out.append(_not_md(f"memory/{entry.name}", entry.name))
            continue
        if entry.name == "*":
            out.append(("memory/*/", "'*' means every namespace and cannot be one; rename it"))
            continue
        for inner in listing(Path(entry.path)):
            rel = f"memory/{entry.name}/{inner.name}"
            if _is_dir(inner):
                out.append(
                    (
                        f"{rel}/",
                        "notes sit directly in a namespace folder "
                        "(memory/<namespace>/<key>.md); move them up",
                    )
                )
            elif not inner.name.lower().endswith(".md"):
                out.append(_not_md(rel, inner.name))
    return out


def _not_md(rel: str, name: str) -> Finding:
    stem = name.rpartition(".")[0] or name
    if name.lower().endswith(_NOTE_SUFFIXES):
        return (rel, f"only .md notes are indexed; rename it {stem}.md")
    return (rel, "only .md notes are indexed")


def _skills(listing: _Listing, folder: Path) -> list[Finding]:
    out: list[Finding] = []
    for entry in listing(folder):
        rel = f"skills/{entry.name}"
        if not _is_dir(entry):
            out.append((rel, "a skill is a folder holding SKILL.md (skills/<name>/SKILL.md)"))
            continue
        names = {inner.name for inner in listing(Path(entry.path))}
        if "SKILL.md" in names:
            continue
        near = next((n for n in sorted(names) if n.lower() == "skill.md"), None)
        if near is not None:
            out.append((f"{rel}/{near}", "only SKILL.md is read (the name is case-sensitive)"))
        else:
            out.append((f"{rel}/", "it holds no SKILL.md, so it is not an installed skill"))
    return out
