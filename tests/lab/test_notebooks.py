"""Where a shipped notebook works: the demo's copy, archived into; a folder the user
named, read with archiving off; or, for a notebook that stores conversations itself, a
copy of that folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.config import lab_home
from supercontext_lab.conversations import (
    demo_chat_export_path,
    import_conversations,
    list_conversations,
)
from supercontext_lab.errors import WorkspaceError
from supercontext_lab.harness import Thread
from supercontext_lab.lab.notebooks import notebook_workspace
from supercontext_lab.sources.demo import demo_workspace_path
from supercontext_lab.sources.workspace import Workspace

from .conftest import GRANT, kelp_workspace


def _stored(folder: Path) -> list[tuple[str, int]]:
    return [(c.id, c.turns) for c in list_conversations(Workspace(folder))]


@pytest.mark.parametrize("empty", ["", None])
def test_no_folder_named_is_the_demos_copy_archived_into(empty: str | None) -> None:
    setup = notebook_workspace(empty)

    assert setup.workspace.root == demo_workspace_path().resolve()
    assert setup.archive is True and setup.named is None and setup.folder == ""
    assert setup.note.startswith("Workspace: the shipped demo, copied into this notebook's")
    Thread(setup.workspace, archive=setup.archive).send(GRANT)
    assert len(list_conversations(setup.workspace)) == 1


def test_a_folder_named_is_read_in_place_and_never_archived_into(tmp_path: Path) -> None:
    folder = kelp_workspace(tmp_path)
    Thread(folder, thread_id="earlier").send("How many urchins per transect?")
    before = _stored(folder)

    setup = notebook_workspace(str(folder))
    Thread(setup.workspace, archive=setup.archive).send(GRANT)

    assert setup.workspace.root == folder.resolve() and setup.folder == str(folder.resolve())
    assert setup.archive is False and setup.named == "kelp-ws" and not setup.copied
    assert setup.note == (
        "Workspace: kelp-ws, read where it is; this notebook's threads run with "
        "archive=False, so none of its messages is stored among its past conversations."
    )
    assert _stored(folder) == before == [("earlier", 1)]


def test_a_notebook_that_stores_conversations_works_on_a_copy(tmp_path: Path) -> None:
    folder = kelp_workspace(tmp_path)
    Thread(folder, thread_id="earlier").send("How many urchins per transect?")
    before = _stored(folder)

    setup = notebook_workspace(folder, copy=True)
    Thread(setup.workspace, archive=setup.archive, thread_id="notebook").send(GRANT)
    import_conversations(demo_chat_export_path(), setup.workspace)

    assert setup.workspace.root == (lab_home() / "copies" / "kelp-ws").resolve()
    assert setup.archive is True and setup.copied and setup.named == "kelp-ws"
    assert setup.folder == str(setup.workspace.root)
    assert "a copy of kelp-ws in this notebook's lab home" in setup.note
    assert "never into kelp-ws itself" in setup.note and "Not copied" not in setup.note
    # The notes came along; the conversations stored went into the copy only.
    assert "412 urchins" in (setup.workspace.root / "memory/global/urchin-survey.md").read_text()
    assert ("notebook", 1) in _stored(setup.workspace.root)
    assert _stored(folder) == before


def test_a_copy_names_what_it_left_out(tmp_path: Path) -> None:
    folder = kelp_workspace(tmp_path)
    (tmp_path / "secret.txt").write_text("not for the copy\n", "utf-8")
    (folder / "memory" / "global" / "escape.md").symlink_to(tmp_path / "secret.txt")

    setup = notebook_workspace(folder, copy=True)

    assert setup.left_out and setup.left_out[0][0] == "memory/global/escape.md"
    assert "Not copied: memory/global/escape.md (it is a link to " in setup.note
    assert "\n" not in setup.note


def test_a_folder_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        notebook_workspace(tmp_path / "missing")
