"""``supercontext-lab workspace check DIR``: what a workspace folder holds, and what it does not read.

    supercontext-lab workspace check ~/my-workspace [--json]

Prints one line per kind of thing found (memory notes by namespace, PROFILE.md, MEMORY.md,
flavour facets, skills, registry entries, integrations, the orchestrator's tools, files
under ``files/``), one line per entry the workspace does not read and why
(``Memory/`` for ``memory/``, a ``.txt`` note, ``SKILLS/``, a link out of the folder: the
same lines as ``Workspace.diagnostics`` and the panel's Problems tab), and one line per
part that cannot be used (a malformed ``registry.json``). Nothing is written: the memory
notes are counted, not indexed. Exit status: 0 when the workspace is usable (every part
found can be read), 1 when a part cannot be used, 2 for bad input.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._text import visible
from .common import PROG, UsageProblem, emit, emit_json

if TYPE_CHECKING:
    from ..sources.workspace import Workspace

__all__ = ["add_workspace_parser"]


def add_workspace_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``workspace`` command (``workspace check``) to the CLI's subparsers."""
    parser: argparse.ArgumentParser = sub.add_parser("workspace", help="inspect a workspace folder")
    inner = parser.add_subparsers(
        dest="workspace_command", required=True, parser_class=type(parser)
    )
    check = inner.add_parser(
        "check",
        help="say what a workspace holds, what it does not read and why",
        description="Count what the workspace folder holds, kind by kind, and name every "
        "entry it does not read (wrong case, a .txt note, a skill without SKILL.md, a link "
        "out of the folder) with the reason. Exit 0 when usable, 1 when a part cannot be "
        "used, 2 for bad input.",
    )
    check.add_argument("folder", help="the workspace folder")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(handler=_cmd_check)
    return parser


def _cmd_check(args: argparse.Namespace) -> int:
    from ..errors import WorkspaceError
    from ..sources.workspace import Workspace

    folder = Path(args.folder)
    if not folder.is_dir():
        raise UsageProblem(f"{PROG}: workspace folder not found: {args.folder}")
    try:
        workspace = Workspace(folder)
    except WorkspaceError as exc:
        raise UsageProblem(f"{PROG}: {exc}") from None
    found, problems, left_out, refused = _found(workspace)
    index = workspace.index_problem()
    # Names come from the folder: each is shown on one line, escaped (a name holding a
    # line break must not add lines of its own to the report).
    findings = [*workspace.diagnostics, *left_out, *([index] if index else [])]
    not_read = list(dict.fromkeys(visible(line) for line in findings))
    problems = [visible(line) for line in problems]
    usable = not problems
    if args.json:
        emit_json(
            {
                "workspace": visible(str(workspace.root)),
                "usable": usable,
                "found": found,
                "not_read": not_read,
                "problems": problems,
            }
        )
        return 0 if usable else 1
    emit(f"workspace: {visible(str(workspace.root))}")
    for line in _found_lines(found, workspace.root, refused):
        emit(f"found: {line}")
    for line in not_read:
        emit(f"not read: {line}")
    for line in problems:
        emit(f"problem: {line}")
    verdict = "usable" if usable else "not usable: fix the problems above"
    counted = (
        f"{len(not_read)} not read, {len(problems)} problem{'' if len(problems) == 1 else 's'}"
    )
    emit(f"{verdict} ({counted})")
    return 0 if usable else 1


def _found(workspace: Workspace) -> tuple[dict[str, Any], list[str], list[str], set[str]]:
    """What each part holds, counted (``None``: the part is absent or cannot be used), one
    line per part that cannot be used, one per memory note left out of the index, and the
    files the workspace's reader refused (a FIFO, a link out).

    Every part is read with the scout's own reader (:class:`Workspace`), whatever the
    entry is (a file, a folder, a FIFO, a link), so the check says what a turn will do."""
    from ..errors import SupercontextError
    from ..sources.memory.files import survey_notes
    from ..sources.workspace import memory_refusal

    problems: list[str] = []

    def count(part: Callable[[], int]) -> int | None:
        try:
            return part()
        except SupercontextError as exc:
            problems.append(str(exc))
            return None

    left_out: list[str] = []
    try:
        notes, refused = survey_notes(
            workspace.root, allow_outside_links=workspace.allow_outside_links
        )
        left_out = [memory_refusal(rel, reason) for rel, reason in refused]
    except SupercontextError as exc:
        notes = {}
        problems.append(str(exc))
    root = workspace.root

    def present(file_name: str) -> bool:
        return (root / file_name).exists() or (root / file_name).is_symlink()

    def readable(file_name: str, read: Callable[[], str]) -> bool | None:
        """Whether the file was read (``None``: there, but it cannot be used)."""
        if not present(file_name):
            return False
        if count(lambda: len(read())) is None:
            return None
        return not workspace.refused(file_name)

    per_namespace = Counter(visible(e.namespace) for e in notes.values())
    found: dict[str, Any] = {
        "memory_notes": dict(sorted(per_namespace.items())),
        "profile_md": readable("PROFILE.md", lambda: workspace.profile_md),
        "memory_md": readable("MEMORY.md", lambda: workspace.memory_md),
        "flavour_facets": count(lambda: len(workspace.flavour)),
        "skills": count(lambda: len(workspace.skills)),
    }
    parts: tuple[tuple[str, str, Callable[[], int]], ...] = (
        ("registry_entries", "registry.json", lambda: len(workspace.registry)),
        ("integrations", "integrations.toml", lambda: len(workspace.integrations)),
        (
            "orchestrator_tools",
            "orchestrator_tools.toml",
            lambda: len(workspace.orchestrator_tools),
        ),
    )
    for key, file_name, part in parts:
        found[key] = count(part) if present(file_name) else None
    found["files"] = count(lambda: len(workspace.list_files()))
    names = ("PROFILE.md", "MEMORY.md", *(file_name for _, file_name, _ in parts))
    return found, problems, left_out, {name for name in names if workspace.refused(name)}


_COUNTED = (
    ("flavour_facets", "flavour facet", "flavour facets", "flavour/<facet>.md"),
    ("skills", "installed skill", "installed skills", "skills/<name>/SKILL.md"),
    ("registry_entries", "registry entry", "registry entries", "registry.json"),
    ("integrations", "integration", "integrations", "integrations.toml"),
    ("orchestrator_tools", "orchestrator tool", "orchestrator tools", "orchestrator_tools.toml"),
    ("files", "file", "files", "files/"),
)


_FILES = (("profile_md", "PROFILE.md"), ("memory_md", "MEMORY.md"))


def _file_line(value: bool | None, name: str, refused: set[str]) -> str:
    if value is None:
        return f"{name} cannot be used (see the problem below)"
    if name in refused:
        return f"{name} is not read (see below)"
    return name if value else f"no {name}"


def _found_lines(found: dict[str, Any], root: Path, refused: set[str]) -> list[str]:
    """One line per kind of part, in the layout's order (an absent or refused part said
    so)."""
    notes: dict[str, int] = found["memory_notes"]
    total = sum(notes.values())
    per = ", ".join(f"{namespace} {n}" for namespace, n in notes.items())
    lines = [
        f"{total} memory note{'' if total == 1 else 's'}"
        + (f" in memory/ ({per})" if notes else " (memory/<namespace>/<key>.md)"),
        *(_file_line(found[key], name, refused) for key, name in _FILES),
    ]
    for key, one, many, where in _COUNTED:
        value = found[key]
        if where in refused:
            lines.append(f"{where} is not read (see below)")
        elif value is None and (root / where.split("/")[0]).exists():
            lines.append(f"{where} cannot be used (see the problem below)")
        elif value is None:
            default = " (the built-in catalogue is used)" if key == "orchestrator_tools" else ""
            lines.append(f"no {where}{default}")
        else:
            lines.append(f"{value} {one if value == 1 else many} ({where})")
    return lines
