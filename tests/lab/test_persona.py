"""The Jupyter AI persona's words (lab.chat_turn) and the persona without a server.

The bundle message is rendered with markdown-it-py, CommonMark with raw HTML on (as the
chat renders it), so escaping is checked on what a reader would see. The persona in a
real Jupyter Server is in test_persona_server.py.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from supercontext_lab._markdown import md_inline
from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.gate import ColdStartReason
from supercontext_lab.harness import Thread
from supercontext_lab.harness.turn import Preparation, TurnResult
from supercontext_lab.lab.chat_turn import (
    MAX_HISTORY_MESSAGES,
    ChatLine,
    bundle_markdown,
    command_reply,
    failure_markdown,
    history_of,
    parse_command,
    plain_lines,
    skip_note,
)
from supercontext_lab.models.boundary import SECRET_MARKER
from supercontext_lab.models.routing import ORCHESTRATOR_HINT
from supercontext_lab.routes import ModelRoute, set_model_route

from .persona_support import (
    FIRST,
    PERSONA_ID,
    bodies,
    persona_workspace,
    require_jupyter_ai,
)

HOSTILE = """[context_bundle]
has_enough_context: false
proposed_goal: Review the <img src=x onerror=alert(1)> log
summary:
- The log is at [click me](javascript:alert(1)) and **really** urgent (memory: global/log)
- # Not a heading <script>alert(2)</script> (profile)
Missing: who signs off <b>the review</b>.
recommended_tool_calls:
  - tool: open_<i>file</i>
    args: {}
    why: read [it](http://evil.example)
recommended_skills:
  - skill: husbandry-review
    installed: true
    why: the `weekly` review
[/context_bundle]"""


def _result(envelope: str, **extra: Any) -> TurnResult:
    bundle = parse_context_bundle(envelope)
    assert bundle is not None
    result = TurnResult(
        message=FIRST,
        sent_message=FIRST,
        reply="",
        preparation=Preparation.PREPARED,
        reason=None,
        first_turn=True,
        bundle=bundle,
        envelope=envelope,
        design="pack",
        prepared_by="pack",
    )
    for name, value in extra.items():
        setattr(result, name, value)
    return result


def _html(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize(
    ("body", "command"),
    [
        ("/preflight off", "off"),
        ("  /PREFLIGHT   On ", "on"),
        ("/preflight disable", "off"),
        ("/preflight", "status"),
        ("/preflight maybe", "unknown"),
        ("/preflightoff", None),
        ("preflight off", None),
        ("Turn /preflight off", None),
    ],
)
def test_the_preflight_command_is_read_from_the_first_word(body: str, command: str | None) -> None:
    assert parse_command(body) == command


def test_the_command_reply_says_the_state_and_how_to_change_it() -> None:
    assert "**off**" in command_reply("off", False)
    assert "**on**" in command_reply("status", True)
    assert "`/preflight off`" in command_reply("unknown", True)


def test_the_history_leaves_out_commands_and_their_answers_and_joins_one_role() -> None:
    lines = [
        ChatLine("user", "/preflight off"),
        ChatLine("assistant", "The pre-flight is now **off** for this chat.", own=True),
        ChatLine("user", "First question"),
        ChatLine("assistant", "**Pre-flight** bundle", own=True),
        ChatLine("assistant", "The reply", own=True),
        ChatLine("user", "   "),
        ChatLine("user", "/preflight on"),
        ChatLine("assistant", "The pre-flight is now **on** for this chat.", own=True),
        ChatLine("assistant", "Another persona speaks after the command"),
    ]
    history = history_of(lines)
    assert [(m.role, m.content) for m in history.transcript] == [
        ("user", "First question"),
        (
            "assistant",
            "**Pre-flight** bundle\n\nThe reply\n\nAnother persona speaks after the command",
        ),
    ]
    assert history.preflight is True
    assert history_of(lines[:2]).transcript == []
    assert history_of(lines[:2]).preflight is False
    assert history_of([]).preflight is None


def test_the_history_keeps_the_latest_messages_only() -> None:
    lines = [ChatLine("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(200)]
    transcript = history_of(lines).transcript
    assert len(transcript) == MAX_HISTORY_MESSAGES
    assert transcript[-1].content == "m199"


def test_the_bundle_message_lists_goal_facts_tools_skills_and_what_is_missing() -> None:
    shown = bundle_markdown(_result(HOSTILE), "my-workspace")
    assert shown is not None
    html = _html(shown)
    # Two facts, one tool, one skill: four list items, and no other.
    assert html.count("<li>") == 4
    assert "Goal:" in html
    assert "husbandry-review</strong> (installed)" in html
    assert "<strong>Enough context:</strong> no — missing: who signs off" in html
    assert "(memory: global/log)" in html
    assert "my-workspace" in html


def test_untrusted_text_in_the_bundle_message_opens_nothing() -> None:
    shown = bundle_markdown(_result(HOSTILE), "<b>ws</b>")
    assert shown is not None
    html = _html(shown)
    for opened in ("<img", "<script", "<a ", "<h1", "<b>", "<i>", "<code>", "<em>really"):
        assert opened not in html, opened
    # The text is still there, as text.
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "[click me](javascript:alert(1))" in html


def test_the_offline_stand_ins_plain_lines_stay_lines_in_the_chat() -> None:
    reply = "Goal: x\nWhat I already know:\n  • a fact"
    assert _html(plain_lines(reply)).count("<br />") == 2
    assert _html(reply).count("<br />") == 0


def test_a_turn_without_a_bundle_has_no_bundle_message() -> None:
    result = _result(HOSTILE)
    result.bundle = None
    assert bundle_markdown(result, "ws") is None


def test_the_skip_note_speaks_of_this_message_only() -> None:
    result = _result(HOSTILE)
    result.bundle, result.reason = None, ColdStartReason.CONTEXT_FREE_GREETING
    note = skip_note(result)
    assert note is not None and "context\\_free\\_greeting" in note
    result.reason = ColdStartReason.PRIOR_CONVERSATION
    assert skip_note(result) is None
    result.reason = ColdStartReason.SUPER_CONTEXT_DISABLED
    assert skip_note(result) is None


def test_a_failure_message_masks_the_configured_key(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-persona-0123456789abcdef"
    monkeypatch.setenv("SCL_PERSONA_KEY", key)
    set_model_route(
        ORCHESTRATOR_HINT,
        ModelRoute(
            kind="openai",
            base_url="http://127.0.0.1:9/v1",
            model="m",
            api_key_env="SCL_PERSONA_KEY",
        ),
    )
    shown = failure_markdown("The model route failed", f"401: bad key {key} <b>x</b>")
    assert key not in shown
    assert "<b>" not in _html(shown)
    # A note that quotes the key: the pack has no model boundary to remove it.
    quoted = HOSTILE.replace("really", key)
    bundle = bundle_markdown(_result(quoted), "ws")
    assert bundle is not None and md_inline(SECRET_MARKER) in bundle
    assert key not in bundle and md_inline(key) not in bundle


def test_the_thread_hands_the_prepared_turn_over_before_the_orchestrator(tmp_path: Path) -> None:
    seen: list[str] = []

    def prepared(result: TurnResult) -> None:
        seen.append(f"prepared:{result.preparation.value}:{result.reply!r}")

    thread = Thread(persona_workspace(tmp_path / "ws"), archive=False, design="pack")
    thread.send(FIRST, on_prepared=prepared, on_text=lambda text: seen.append("text"))
    assert seen[0] == "prepared:prepared:''"
    assert seen[1:] and set(seen[1:]) == {"text"}


# -- the persona object, on a chat model without a server -----------------------------------


@pytest.fixture
def jupyter_ai() -> None:
    require_jupyter_ai()


def _persona(chat: Any, **traits: Any) -> Any:
    from supercontext_lab.lab.persona import SupercontextPersona

    return SupercontextPersona(chat=chat, **traits)


def _send(chat: Any, persona: Any, body: str) -> None:
    from jupyterlab_chat.models import NewMessage

    message_id = chat.add_message(NewMessage(body=body, sender="someone"))
    asyncio.run(persona.process_message(chat.get_message(message_id)))


@pytest.mark.usefixtures("jupyter_ai")
def test_the_persona_prepares_the_first_message_from_its_workspace(tmp_path: Path) -> None:
    from jupyterlab_chat.ychat import YChat

    chat = YChat()
    persona = _persona(chat, workspace=str(persona_workspace(tmp_path / "ws")))
    _send(chat, persona, FIRST)
    said = bodies(chat.get_messages(), PERSONA_ID)
    assert len(said) == 2, said
    assert said[0].startswith("**Pre-flight**") and "by the lab manager" in said[0]
    assert "offline orchestrator" in said[1]


@pytest.mark.usefixtures("jupyter_ai")
def test_an_unreadable_history_is_read_from_the_chat_file_else_said(tmp_path: Path) -> None:
    from jupyterlab_chat.ychat import YChat

    from supercontext_lab.lab.persona import SupercontextPersona

    chat_file = tmp_path / "other-tool.chat"

    class Broken(YChat):  # type: ignore[misc]
        def get_messages(self) -> Any:
            raise KeyError("'sender'")

    class FilePersona(SupercontextPersona):
        def get_chat_path(self, relative: bool = False) -> str:
            return str(chat_file)

    persona = FilePersona(chat=Broken(), workspace=str(persona_workspace(tmp_path / "ws")))
    current = type("M", (), {"id": "now", "body": "And then?"})()
    chat_file.write_text(
        json.dumps(
            {
                "messages": [
                    {"sender": "me", "body": "Earlier question", "time": 1},
                    {"sender": PERSONA_ID, "body": "Earlier answer", "time": 2},
                    {"sender": "me", "body": "And then?", "time": 3},
                ],
                "users": {PERSONA_ID: {"username": PERSONA_ID, "bot": True}},
            }
        ),
        "utf-8",
    )
    history = persona.read_history(current)
    assert [(m.role, m.content) for m in history.transcript] == [
        ("user", "Earlier question"),
        ("assistant", "Earlier answer"),
    ]
    chat_file.write_text("{not json", "utf-8")
    history = persona.read_history(current)
    assert history.transcript == [] and history.unreadable == "KeyError: \"'sender'\""


@pytest.mark.usefixtures("jupyter_ai")
def test_a_chat_whose_history_cannot_be_read_is_answered_without_a_preflight(
    tmp_path: Path,
) -> None:
    from jupyterlab_chat.ychat import YChat

    from supercontext_lab.lab.persona import SupercontextPersona

    class Unreadable(YChat):  # type: ignore[misc]
        broken = True

        def get_messages(self) -> Any:
            if self.broken:
                raise KeyError("'sender'")
            return super().get_messages()

    class NoFile(SupercontextPersona):
        def get_chat_path(self, relative: bool = False) -> str:
            return str(tmp_path / "missing.chat")

    chat = Unreadable()
    persona = NoFile(chat=chat, workspace=str(persona_workspace(tmp_path / "ws")))
    _send(chat, persona, FIRST)
    chat.broken = False
    said = bodies(chat.get_messages(), persona.id)
    assert said[0].startswith("**The chat") and "KeyError" in said[0]
    # Whether the chat is new is unknown, so no bundle: the reply comes straight away.
    assert len(said) == 2 and "offline orchestrator" in said[1]


@pytest.mark.usefixtures("jupyter_ai")
def test_the_workspace_is_the_setting_else_the_chats_when_it_holds_one(tmp_path: Path) -> None:
    from jupyterlab_chat.ychat import YChat

    from supercontext_lab.lab.persona import SupercontextPersona, holds_workspace

    chat_root = tmp_path / "chat-root"
    chat_root.mkdir()

    class Here(SupercontextPersona):
        def get_workspace_dir(self) -> str:
            return str(chat_root)

    configured = persona_workspace(tmp_path / "ws")
    assert Here(chat=YChat(), workspace=str(configured)).resolve_workspace().root == configured
    assert not holds_workspace(chat_root)
    assert Here(chat=YChat()).resolve_workspace().root.name == "demo-workspace"
    (chat_root / "PROFILE.md").write_text("# Profile\n", "utf-8")
    assert Here(chat=YChat()).resolve_workspace().root == chat_root


@pytest.mark.usefixtures("jupyter_ai")
def test_the_stop_button_ends_a_slow_reply_at_once(tmp_path: Path) -> None:
    from jupyterlab_chat.models import NewMessage
    from jupyterlab_chat.ychat import YChat

    from supercontext_lab.testing import OpenAITestServer, ScriptedResponse

    chat = YChat()
    persona = _persona(chat, workspace=str(persona_workspace(tmp_path / "ws")))
    with OpenAITestServer([ScriptedResponse.reply("too late", delay_s=4)]) as server:
        set_model_route(
            ORCHESTRATOR_HINT, ModelRoute(kind="openai", base_url=server.base_url, model="m")
        )

        async def scenario() -> float:
            message_id = chat.add_message(NewMessage(body=FIRST, sender="someone"))
            turn = asyncio.create_task(persona.process_message(chat.get_message(message_id)))
            while not bodies(chat.get_messages(), PERSONA_ID):
                await asyncio.sleep(0.05)
            stopped = time.perf_counter()
            await persona.cancel_response()
            await turn
            return time.perf_counter() - stopped

        took = asyncio.run(scenario())
    said = bodies(chat.get_messages(), PERSONA_ID)
    assert said[0].startswith("**Pre-flight**")
    assert said[-1] == "*Stopped.*" and "too late" not in "".join(said)
    assert took < 2.0


@pytest.mark.usefixtures("jupyter_ai")
def test_a_later_message_reaches_the_route_with_the_chats_history(tmp_path: Path) -> None:
    from jupyterlab_chat.ychat import YChat

    from supercontext_lab.models.offline import OfflineOrchestratorModel
    from supercontext_lab.testing import OpenAITestServer

    chat = YChat()
    persona = _persona(chat, workspace=str(persona_workspace(tmp_path / "ws")))
    with OpenAITestServer(model=OfflineOrchestratorModel()) as server:
        set_model_route(
            ORCHESTRATOR_HINT, ModelRoute(kind="openai", base_url=server.base_url, model="m")
        )
        _send(chat, persona, FIRST)
        _send(chat, persona, "And who reviews it?")
        sent = [r.json["messages"] for r in server.requests if r.path.endswith("/completions")]
    first, second = sent[0], sent[-1]
    assert [m["role"] for m in first] == ["system", "user"]
    assert "## Prepared context (super context)" in first[-1]["content"]
    roles = [m["role"] for m in second]
    assert roles == ["system", "user", "assistant", "user"]
    assert second[1]["content"] == FIRST
    assert second[2]["content"].startswith("**Pre-flight**")
    assert second[3]["content"] == "And who reviews it?"
