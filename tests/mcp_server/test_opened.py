"""One open workspace per thread, kept while the folder is unchanged and opened anew when
a note, a part the workspace keeps or the lab's config changes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from supercontext_lab.config import set_setting
from supercontext_lab.mcp_server import ContextService
from supercontext_lab.mcp_server.opened import OpenedWorkspaces, signature
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace, write_file


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_workspace(tmp_path / "ws").resolve()


def _touch(path: Path) -> None:
    """Move ``path``'s modification time on, as an edit a moment later would."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))


def test_an_unchanged_folder_keeps_the_thread_s_workspace(root: Path) -> None:
    opened = OpenedWorkspaces(root)
    first = opened.get()
    assert opened.get() is first
    first.memory.recall("global", "grant")  # reading writes only the index, not counted
    assert opened.get() is first


@pytest.mark.parametrize(
    "change",
    [
        lambda root: write_file(root / "memory" / "global" / "new.md", "A new note.\n"),
        lambda root: write_file(root / "memory" / "global" / "sourdough.md", "Fed at 9.\n"),
        lambda root: _touch(root / "memory" / "global" / "grant-budget.md"),
        lambda root: write_file(root / "memory" / "skill-x" / "note.md", "Skill note.\n"),
        lambda root: write_file(root / "PROFILE.md", "# Someone else\n"),
        lambda root: write_file(root / "skills" / "new-skill" / "SKILL.md", "---\nname: N\n---\n"),
        lambda root: write_file(root / "flavour" / "style.md", "Terse.\n"),
        lambda root: write_file(root / "integrations.toml", ""),
        lambda root: (root / "MEMORY.md").unlink(),
        lambda root: set_setting("workspace.allow_outside_links", True),
    ],
)
def test_a_change_opens_it_anew(root: Path, change: object) -> None:
    opened = OpenedWorkspaces(root)
    first = opened.get()
    before = signature(root)
    change(root)  # type: ignore[operator]
    assert signature(root) != before
    assert opened.get() is not first


def test_files_outside_what_it_keeps_do_not_count(root: Path) -> None:
    before = signature(root)
    write_file(root / "files" / "notes" / "draft.md", "listed and read on each use\n")
    write_file(root / ".supercontext" / "other.json", "{}")
    assert signature(root) == before


def test_threads_never_share_one(root: Path) -> None:
    opened = OpenedWorkspaces(root)
    seen: list[Workspace] = []
    workers = [threading.Thread(target=lambda: seen.append(opened.get())) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len({id(workspace) for workspace in seen}) == 3


def test_a_note_written_between_requests_is_prepared_and_recalled(root: Path) -> None:
    service = ContextService(root, design="pack")
    message = "What did we decide about the otter survey?"
    assert "otter survey is in May" not in service.prepare(message).text()
    write_file(root / "memory" / "global" / "otters.md", "Decision: the otter survey is in May.\n")
    assert "otter survey is in May" in service.prepare(message).text()
    assert service.recall("otter survey")["hits"][0]["key"] == "otters"
