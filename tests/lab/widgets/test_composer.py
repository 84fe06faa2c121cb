"""The composer and its Super Context toggle, driven without a browser."""

from __future__ import annotations

import logging

import pytest

import supercontext_lab
from supercontext_lab.errors import WorkspaceError
from supercontext_lab.harness import Thread, TurnResult
from supercontext_lab.lab.widgets import BundlePanel, Composer
from supercontext_lab.lab.widgets.html import note
from supercontext_lab.testing import ScriptedModel

BUDGET = "Help me prepare the grant renewal budget"


def panels_in(entry: object) -> list[BundlePanel]:
    return [child for child in entry.children if isinstance(child, BundlePanel)]  # type: ignore[attr-defined]


def send(composer: Composer, text: str) -> None:
    composer.message.value = text
    composer.send_button.click()


@pytest.mark.parametrize("saved", [True, False])
def test_toggle_starts_at_the_effective_flag(saved: bool) -> None:
    supercontext_lab.set_super_context_enabled(saved)
    composer = Composer(Thread)
    assert composer.toggle.value is saved
    state = "on" if saved else "off"
    assert composer.toggle.description == f"Super Context: {state}"
    assert composer.toggle.icon == f"toggle-{state}"
    assert composer.toggle.button_style == ("success" if saved else "")


def test_toggle_is_shown_only_while_the_thread_has_no_messages() -> None:
    composer = Composer(Thread)
    assert composer.toggle_row.layout.display is None

    send(composer, BUDGET)

    assert composer.toggle_row.layout.display == "none"
    composer.new_thread()
    assert composer.toggle_row.layout.display is None


def test_the_placeholder_promises_the_scout_only_before_the_first_message() -> None:
    composer = Composer(Thread)
    first = composer.message.placeholder
    assert "prepared by the scout" in first

    send(composer, BUDGET)
    assert "first message of a new thread is prepared" not in composer.message.placeholder
    assert "continues this thread" in composer.message.placeholder
    send(composer, "And the travel line?")
    assert "continues this thread" in composer.message.placeholder

    composer.new_thread()
    assert composer.message.placeholder == first
    # A thread given messages with %%chat: refresh catches up.
    thread = Thread(super_context_enabled=True)
    other = Composer(Thread, thread=thread)
    thread.send(BUDGET)
    other.refresh()
    assert "continues this thread" in other.message.placeholder


@pytest.mark.parametrize(
    ("enabled", "message", "after"),
    [
        (True, BUDGET, "only its first message was prepared"),
        (True, "thanks", "it started cold: context_free_greeting"),
        (False, BUDGET, "it started cold: super_context_disabled"),
    ],
)
def test_after_the_first_message_the_placeholder_says_whether_it_was_prepared(
    enabled: bool, message: str, after: str
) -> None:
    supercontext_lab.set_super_context_enabled(enabled)
    composer = Composer(Thread)
    before = composer.message.placeholder
    assert ("prepared by the scout" in before) is enabled
    assert ("Super Context is off for this thread" in before) is not enabled

    send(composer, message)

    assert after in composer.message.placeholder
    assert "was prepared" not in composer.message.placeholder or (enabled and message == BUDGET)


def test_toggle_is_hidden_for_a_thread_that_already_has_messages() -> None:
    thread = Thread(super_context_enabled=True)
    thread.send(BUDGET)
    composer = Composer(Thread, thread=thread)
    assert composer.toggle_row.layout.display == "none"


@pytest.mark.parametrize("value", [False, True])
def test_flipping_the_toggle_persists_the_flag_for_new_threads(value: bool) -> None:
    supercontext_lab.set_super_context_enabled(not value)
    composer = Composer(Thread)
    empty = composer.thread
    assert empty.enabled is (not value)

    composer.toggle.value = value

    assert supercontext_lab.get_super_context_enabled() is value
    assert supercontext_lab.super_context_status().source == "file"
    assert "new threads" in composer.toggle_note.value
    # The still-empty thread was rebuilt so its first message uses the new value.
    assert composer.thread is not empty
    assert composer.thread.enabled is value


def test_environment_override_wins_and_the_note_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENHUMAN_SUPER_CONTEXT", "on")
    composer = Composer(Thread)
    assert composer.toggle.value is True

    composer.toggle.value = False

    assert supercontext_lab.super_context_status().enabled is True
    assert composer.toggle.value is True  # shows the value in force
    assert "OPENHUMAN_SUPER_CONTEXT=on" in composer.toggle_note.value
    monkeypatch.delenv("OPENHUMAN_SUPER_CONTEXT")
    assert supercontext_lab.get_super_context_enabled() is False  # the file value was saved


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_message_is_refused(text: str) -> None:
    made: list[Thread] = []

    def factory() -> Thread:
        made.append(Thread())
        return made[-1]

    composer = Composer(factory)
    send(composer, text)

    assert "nothing was sent" in composer.status.value
    assert composer.history.children == ()
    assert made == []
    assert composer.toggle_row.layout.display is None


def test_first_turn_shows_a_panel_then_the_reply_later_turns_the_reply_only() -> None:
    results: list[TurnResult] = []
    composer = Composer(lambda: Thread(super_context_enabled=True), on_result=results.append)

    send(composer, BUDGET)
    send(composer, "What should I send Priya first?")

    first, second = composer.history.children
    assert len(panels_in(first)) == 1
    assert first.children[1] is composer.last_panel
    assert "Prepare the grant renewal budget" in panels_in(first)[0].goal_html.value
    assert "offline orchestrator" in first.children[-1].value
    assert panels_in(second) == []
    assert len(second.children) == 2
    assert "What should I send Priya first?" in second.children[0].value
    assert [r.first_turn for r in results] == [True, False]
    assert results[0].prepared
    assert composer.message.value == ""
    assert "Turn 2" in composer.status.value
    assert composer.send_button.disabled is False


@pytest.mark.parametrize(
    ("enabled", "message", "reason"),
    [(False, BUDGET, "super_context_disabled"), (True, "hello", "context_free_greeting")],
)
def test_cold_start_shows_its_reason(enabled: bool, message: str, reason: str) -> None:
    composer = Composer(lambda: Thread(super_context_enabled=enabled))
    send(composer, message)

    (entry,) = composer.history.children
    assert panels_in(entry) == []
    assert reason in entry.children[1].value
    assert "Cold start" in entry.children[1].value
    assert reason in composer.status.value


def test_reply_text_is_escaped() -> None:
    orchestrator = ScriptedModel(["<script>alert(1)</script>"])
    composer = Composer(
        lambda: Thread(super_context_enabled=False, orchestrator_model=orchestrator)
    )
    send(composer, "<b>hi there</b> friend")

    values = [child.value for child in composer.history.children[0].children]
    assert all("<script" not in value and "<b>hi" not in value for value in values)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in values[-1]
    assert "&lt;b&gt;hi there&lt;/b&gt;" in values[0]


def test_engine_errors_go_to_the_status_escaped() -> None:
    def factory() -> Thread:
        raise WorkspaceError("workspace folder '<nowhere>' does not exist.")

    composer = Composer(factory)
    send(composer, BUDGET)

    assert "workspace folder &#x27;&lt;nowhere&gt;&#x27; does not exist." in composer.status.value
    assert composer.history.children == ()


def test_real_bugs_are_not_swallowed(caplog: pytest.LogCaptureFixture) -> None:
    def factory() -> Thread:
        raise RuntimeError("a bug in the factory")

    composer = Composer(factory)
    with caplog.at_level(logging.WARNING):
        send(composer, BUDGET)

    # Outside a kernel the exception reaches ipywidgets' dispatcher (inside one, the
    # output widget shows its traceback); the composer neither hides nor reports it.
    assert "a bug in the factory" in caplog.text
    assert composer.status.value == ""
    assert composer.history.children == ()


def test_refresh_after_messages_sent_elsewhere_hides_the_toggle_and_counts_turns() -> None:
    composer = Composer(Thread)
    thread = composer.thread
    thread.send(BUDGET)
    thread.send("And the numbers?")
    assert composer.toggle_row.layout.display is None  # not told yet

    composer.refresh()

    assert composer.toggle_row.layout.display == "none"
    assert "This thread has 2 turns (sent with %%chat" in composer.status.value
    assert "Super Context was on when it started" in composer.status.value


def test_the_toggle_note_never_calls_a_thread_with_turns_empty() -> None:
    composer = Composer(Thread)
    composer.thread.send(BUDGET)
    composer.toggle.value = False  # a stale view of the toggle can still be clicked

    assert "which has no messages yet" not in composer.toggle_note.value
    assert "This thread already has 1 turn and keeps Super Context on" in (
        composer.toggle_note.value
    )
    assert composer.toggle.description == "Super Context: off"


def test_while_a_message_is_sent_the_status_says_what_the_turn_is_doing() -> None:
    composer = Composer(Thread)
    seen: list[str] = []
    composer.status.observe(lambda change: seen.append(change["new"]), names="value")

    send(composer, BUDGET)

    working = [value for value in seen if "Working:" in value]
    assert "asking the model offline:scout (call 1 of up to 8)" in working[0]
    assert any("gathering with memory_recall" in value for value in working)
    assert "asking the orchestrator offline:orchestrator" in working[-1]
    assert all(" s</span>" in value for value in working)
    # Then the outcome replaces it.
    assert "context prepared by the scout, then replied" in composer.status.value


def test_the_toggle_says_where_it_is_clicked_that_it_is_saved_for_new_threads() -> None:
    composer = Composer(Thread)
    caption = composer.toggle_note.value
    assert "Saved in the lab&#x27;s config.toml for every new thread when clicked" in caption
    assert "(a thread reads it when it starts)" in caption
    assert "this thread has no messages yet, so its first one uses it too" in caption
    assert "reference system" not in caption
    assert composer.toggle_row.children == (composer.toggle, composer.toggle_note)


def test_new_thread_is_offered_once_the_thread_has_messages_and_brings_the_toggle_back() -> None:
    supercontext_lab.set_super_context_enabled(False)
    made: list[Thread] = []

    def factory() -> Thread:
        made.append(Thread())
        return made[-1]

    composer = Composer(factory)
    assert composer.new_button.layout.display == "none"
    send(composer, BUDGET)
    assert composer.new_button.layout.display is None
    assert composer.toggle_row.layout.display == "none"

    supercontext_lab.set_super_context_enabled(True)
    composer.new_button.click()

    assert composer.thread is made[-1] and len(made) == 2
    assert composer.thread.enabled is True
    assert composer.history.children == ()
    assert composer.toggle_row.layout.display is None
    assert composer.toggle.value is True
    assert composer.new_button.layout.display == "none"
    assert composer.status.value == note(
        "New thread started; the earlier one stays as it was.", "info"
    )
    assert "(a thread reads it when it starts)" in composer.toggle_note.value
    assert "prepared by the scout" in composer.message.placeholder


def test_after_new_thread_and_the_toggle_every_line_says_what_the_thread_uses() -> None:
    """New thread (flag on), then the toggle: the lines name one state, the thread's"""
    supercontext_lab.set_super_context_enabled(True)
    composer = Composer(Thread)
    send(composer, BUDGET)
    composer.new_button.click()
    composer.toggle.value = False

    assert composer.thread.enabled is False and not composer.thread.turns
    shown = [composer.status.value, composer.toggle_note.value, composer.toggle.description]
    assert not any("Super Context on" in line or "Super Context: on" in line for line in shown)
    assert composer.toggle.description == "Super Context: off"
    assert composer.toggle_note.value == note(
        "Saved: Super Context off. It applies to new threads and to this one, which has no "
        "messages yet.",
        "info",
    )
    assert "Super Context is off for this thread" in composer.message.placeholder
