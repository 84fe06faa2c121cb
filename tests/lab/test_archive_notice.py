"""The archive notice: said once a session, on the first turn a thread archives, with the
real switches; never when the thread does not archive."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from supercontext_lab.conversations import list_conversations
from supercontext_lab.harness import Thread
from supercontext_lab.lab.archive_notice import ARCHIVE_OFF, archive_notice, reset_archive_notice
from supercontext_lab.lab.display import TurnDisplay
from supercontext_lab.lab.widgets import Composer
from supercontext_lab.sources.demo import open_workspace
from supercontext_lab.testing import build_workspace

from .conftest import GRANT, outputs_of

NOTICE = "This thread is saved to demo-workspace/.supercontext/conversations.sqlite3"


def _chat(shell: InteractiveShell, message: str, new: bool = False) -> str:
    """The text of the turn's display, then its Markdown with the escapes read back."""
    outputs, _ = outputs_of(lambda: shell.run_cell_magic("chat", "--new" if new else "", message))
    (output,) = outputs
    markdown = re.sub(r"\\(.)", r"\1", str(output.data["text/markdown"]))
    return str(output.data["text/plain"]) + "\n" + markdown


def test_the_first_archived_turn_of_a_session_says_it_and_no_later_one(
    shell: InteractiveShell,
) -> None:
    reset_archive_notice()

    first = _chat(shell, GRANT)
    later = _chat(shell, "And what about the budget?")
    other_thread = _chat(shell, "Which numbers are still missing?", new=True)

    # In the text and in the Markdown, with the switch the magics really have.
    assert first.count(NOTICE) == 2
    assert f"turn it off with {ARCHIVE_OFF} (or Thread(archive=False)" in first
    assert NOTICE not in later and NOTICE not in other_thread


def test_a_thread_that_does_not_archive_says_nothing_and_the_first_that_does_says_it(
    shell: InteractiveShell, magics: Any
) -> None:
    reset_archive_notice()
    shell.run_line_magic("config", "SupercontextMagics.archive = False")

    quiet = _chat(shell, GRANT)
    assert magics.thread.archive is False
    assert NOTICE not in quiet
    assert list_conversations(magics.thread.workspace) == []

    # Unset, the option leaves it to config.toml (archive by default): said now, once.
    shell.run_line_magic("config", "SupercontextMagics.archive = None")
    assert NOTICE in _chat(shell, GRANT, new=True)
    assert NOTICE not in _chat(shell, "Which numbers are still missing?", new=True)


def test_the_composer_and_chat_share_one_notice(shell: InteractiveShell, magics: Any) -> None:
    reset_archive_notice()
    outputs_of(lambda: shell.run_line_magic("scout_thread", "new"))
    composer = magics.composer
    composer.message.value = GRANT
    composer.send_button.click()

    (entry,) = composer.history.children
    assert NOTICE in entry.children[-1].value
    assert "scl-note" in entry.children[-1].value
    assert NOTICE not in _chat(shell, "Which numbers are still missing?", new=True)


def test_a_composer_thread_that_does_not_archive_shows_no_notice() -> None:
    reset_archive_notice()
    composer = Composer(lambda: Thread(archive=False))
    composer.message.value = GRANT
    composer.send_button.click()

    values = [getattr(child, "value", "") for child in composer.history.children[0].children]
    assert not [value for value in values if "This thread is saved" in value]


def test_a_turn_whose_archive_failed_says_nothing(tmp_path: Path) -> None:
    reset_archive_notice()
    workspace = build_workspace(tmp_path / "ws", {"PROFILE.md": "# Profile\n"})
    # A folder where the conversation store must go: the archive fails, the turn does not.
    (workspace / ".supercontext" / "conversations.sqlite3").mkdir(parents=True)
    thread = Thread(workspace)
    turn = thread.send(GRANT)

    assert turn.orchestrator_error is None
    assert not turn.archived
    assert any("not archived" in note for note in turn.notes)
    assert archive_notice(turn, thread.workspace) is None
    # Nothing was said, so the next archived turn still says it.
    archived = Thread().send(GRANT)
    assert archived.archived
    assert archive_notice(archived, open_workspace(None)) is not None


def test_the_notice_is_escaped_like_every_panel_text(tmp_path: Path) -> None:
    reset_archive_notice()
    folder = build_workspace(tmp_path / "<img src=x onerror=1>&y", {"PROFILE.md": "# Profile\n"})
    thread = Thread(folder)
    turn = thread.send(GRANT)
    display = TurnDisplay(
        turn,
        workspace=thread.workspace,
        provenance={},
        notice=archive_notice(turn, thread.workspace),
    )

    assert "<img src=x onerror=1>&y/.supercontext/conversations.sqlite3" in display.text()
    assert "<img" not in display.markdown()
    html = display.widget.children[-1].value
    assert "&lt;img src=x onerror=1&gt;&amp;y/.supercontext" in html
    assert "<img" not in html
