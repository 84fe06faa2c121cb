"""The thread archive (SPEC §15): a thread keeps its turns, the next thread recalls them,
and no thread recalls itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab import Thread
from supercontext_lab.config import set_setting
from supercontext_lab.conversations import list_conversations, open_store
from supercontext_lab.errors import ModelError
from supercontext_lab.models.base import ChatModel, ModelInfo
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace

SETTLED = "Settled: the Lund symposium poster uses the teal palette, and Jonas prints it on 3 June."
QUESTION = "Which palette did we pick for the Lund symposium poster?"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {"memory/global/bread.md": "Sourdough starter feeding schedule.\n"}
    return Workspace(build_workspace(tmp_path / "ws", files))


def test_thread_two_first_bundle_cites_what_thread_one_settled(workspace: Workspace) -> None:
    one = Thread(workspace, thread_id="poster-talk", super_context_enabled=True)
    first = one.send(SETTLED)
    assert first.notes == []
    two = Thread(Workspace(workspace.root), super_context_enabled=True)
    result = two.send(QUESTION)
    assert result.prepared, result.reason
    assert result.envelope is not None
    assert f"- User: {SETTLED} (transcript: poster-talk)" in result.envelope
    assert result.bundle is not None and result.bundle.has_enough_context is True
    report = result.scout.grounding if result.scout is not None else None
    assert report is not None and report.grounded == report.checked == 1
    # The orchestrator got it inside the prepared block.
    assert "(transcript: poster-talk)" in result.sent_message


def test_the_turn_is_archived_as_typed_with_its_reply_and_time(workspace: Workspace) -> None:
    replies = ScriptedModel(["Booked: the boat leaves at 07:00.", "It holds six."], name="o")
    thread = Thread(workspace, orchestrator_model=replies, thread_id="t-1")
    turn = thread.send("Help me plan the October dives")
    assert turn.prepared  # the orchestrator saw the prepared block …
    thread.send("And the boat?")
    store = open_store(workspace.root, create=False)
    assert store is not None
    (info,) = store.conversations()
    assert (info.id, info.title, info.source, info.turns) == (
        "t-1",
        "Help me plan the October dives",
        "thread",
        4,
    )
    turns = store.turns("t-1")
    # … but the archive keeps the message as typed.
    assert [t.content for t in turns][::2] == ["Help me plan the October dives", "And the boat?"]
    assert turns[1].content == turn.reply == "Booked: the boat leaves at 07:00."
    assert all(t.time is not None and t.time.endswith("Z") for t in turns)


def test_the_offline_stand_in_reply_is_not_archived(workspace: Workspace) -> None:
    """The offline orchestrator only restates the bundle and the request: quoted later,
    it would pass for something settled, so only the user's message is kept."""
    thread = Thread(workspace, thread_id="offline")
    assert "offline orchestrator" in thread.send(SETTLED).reply
    store = open_store(workspace.root, create=False)
    assert store is not None
    assert [(t.role, t.content) for t in store.turns("offline")] == [("user", SETTLED)]


def test_archiving_is_off_by_argument_or_by_config(workspace: Workspace) -> None:
    assert Thread(workspace, archive=False).send(SETTLED).archived is False
    assert list_conversations(workspace) == []
    set_setting("memory.archive_threads", False)
    thread = Thread(workspace)
    assert thread.archive is False
    assert thread.send(SETTLED).archived is False
    assert list_conversations(workspace) == []
    assert Thread(workspace, archive=True).archive is True


def test_a_failed_orchestrator_call_is_not_archived(workspace: Workspace) -> None:
    class Broken(ScriptedModel):
        def complete(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
            raise ModelError("the server is down")

    broken: ChatModel = Broken([], name="down")
    thread = Thread(workspace, orchestrator_model=broken, thread_id="down")
    result = thread.send(SETTLED)
    assert result.orchestrator_error
    assert not result.archived
    assert list_conversations(workspace) == []


def test_a_thread_never_recalls_itself(workspace: Workspace) -> None:
    thread = Thread(workspace, thread_id="self", super_context_enabled=True)
    thread.send(SETTLED)
    # Later in the same thread the explicit path runs the scout again: its own turn is
    # not a past conversation to it.
    envelope = thread.agent_prepare_context(QUESTION)
    assert "(transcript: self)" not in envelope
    other = Thread(workspace, super_context_enabled=True).agent_prepare_context(QUESTION)
    assert "(transcript: self)" in other


def test_an_archive_that_cannot_be_written_is_a_note_not_a_broken_turn(
    workspace: Workspace,
) -> None:
    (workspace.root / ".supercontext" / "conversations.sqlite3").mkdir(parents=True)
    result = Thread(workspace, super_context_enabled=True).send(SETTLED)
    assert result.reply
    assert len(result.notes) == 1 and result.notes[0].startswith("the turn was not archived:")
    assert not result.archived


def test_a_resumed_thread_keeps_archiving_under_its_id(
    workspace: Workspace, tmp_path: Path
) -> None:
    thread = Thread(workspace, thread_id="long-run")
    thread.send(SETTLED)
    resumed = Thread.load(thread.save(tmp_path / "t.json"))
    resumed.send("And the printer?")
    (info,) = list_conversations(workspace)
    assert (info.id, info.turns) == ("long-run", 2)


def test_model_info_is_untouched_by_archiving(workspace: Workspace) -> None:
    # A third-party model without a store of its own still works with the archive on.
    scripted = ScriptedModel(["ok"] * 3, name="plain")
    assert isinstance(scripted.info, ModelInfo)
    Thread(workspace, orchestrator_model=scripted).send("Help me tidy the dive log")
    assert [c.turns for c in list_conversations(workspace)] == [2]


def test_a_first_turn_repeated_word_for_word_is_not_stored_twice(workspace: Workspace) -> None:
    # A notebook run again sends the same first message: one conversation, not one a run.
    for run in range(3):
        Thread(workspace, thread_id=f"run-{run}").send(QUESTION)
    assert [c.id for c in list_conversations(workspace.root)] == ["run-0"]
    # Another message, or the same one with another reply, is a conversation of its own.
    Thread(workspace, thread_id="other").send("Which printer does Jonas use?")
    replies = ScriptedModel(["Teal, as agreed."], name="o")
    Thread(workspace, orchestrator_model=replies, thread_id="answered").send(QUESTION)
    ids = sorted(c.id for c in list_conversations(workspace.root))
    assert ids == ["answered", "other", "run-0"]


def test_a_held_back_first_turn_is_stored_with_the_threads_next_turn(
    workspace: Workspace,
) -> None:
    assert Thread(workspace, thread_id="first").send(QUESTION).archived
    again = Thread(workspace, thread_id="again")
    # Held back, not lost: the turn is the thread's, kept for its next one.
    assert again.send(QUESTION).archived
    assert "again" not in {c.id for c in list_conversations(workspace.root)}
    again.send("And who prints it?")
    store = open_store(workspace.root, create=False)
    assert store is not None
    assert [t.content for t in store.turns("again")] == [QUESTION, "And who prints it?"]
