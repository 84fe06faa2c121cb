"""The persona in a real Jupyter Server with jupyterlab-chat, jupyter-ai's router and its
persona manager (pytest-jupyter): messages go in over the chat's WebSocket as the chat
panel sends them (addressed to the persona in ``metadata.to_persona``), and what the
persona answers is read back from the frames the server broadcasts to that client.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.conversations.formats.jupyter_chat import parse_jupyter_chat
from supercontext_lab.conversations.reading import decode_export, load_json, read_bytes
from supercontext_lab.models.routing import ORCHESTRATOR_HINT
from supercontext_lab.routes import ModelRoute, set_model_route
from supercontext_lab.testing import OpenAITestServer, ScriptedResponse

from .persona_support import FIRST, PERSONA_ID, persona_workspace, require_jupyter_ai
from .server_fixtures import *  # noqa: F403

require_jupyter_ai(module_level=True)

KEY = "sk-persona-server-0123456789abcdef"
Run = Callable[[Coroutine[Any, Any, Any]], Any]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return persona_workspace(tmp_path / "workspace")


@pytest.fixture
def jp_server_config(workspace: Path) -> dict[str, Any]:
    return {
        "ServerApp": {
            "jpserver_extensions": {
                "jupyterlab_chat": True,
                "jupyter_ai_router": True,
                "jupyter_ai_persona_manager": True,
                # Its HTTP server would take port 3001, shared by every test server.
                "jupyter_server_mcp": False,
            }
        },
        # Only the persona under test answers; jupyter-ai's own default is not installed.
        "PersonaManager": {"default_persona_id": None, "builtin_mcp_servers": []},
        "SupercontextPersona": {"workspace": str(workspace)},
    }


@pytest.fixture
def run(jp_serverapp: Any, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Run:
    """Run a coroutine on the server's loop (the server is started first)."""
    return jp_asyncio_loop.run_until_complete


class ChatClient:
    """One chat panel's WebSocket: it sends messages to the persona and keeps every
    message the server broadcasts, by id (a streamed message arrives many times)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.messages: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.writing: list[str] = []

    async def start(self) -> None:
        frame = json.loads(await self.ws.read_message())
        assert frame["action"] == "connection"

    async def send(self, body: str) -> None:
        frame = {
            "type": "client",
            "action": "send",
            "id": uuid.uuid4().hex,
            "body": body,
            "metadata": {"to_persona": PERSONA_ID},
        }
        await self.ws.write_message(json.dumps(frame))

    def said(self) -> list[str]:
        return [
            self.messages[i]["body"] for i in self.order if self.messages[i]["sender"] == PERSONA_ID
        ]

    async def until(self, count: int, timeout_s: float = 60.0) -> list[str]:
        """Read frames until the persona has said ``count`` messages and stopped writing."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout_s
        while True:
            done = len(self.said()) >= count and self.writing and self.writing[-1] == "idle"
            if done:
                return self.said()
            left = end - loop.time()
            assert left > 0, f"the persona said {self.said()!r}"
            try:
                raw = await asyncio.wait_for(self.ws.read_message(), min(left, 5.0))
            except asyncio.TimeoutError:
                continue
            assert raw is not None, "the chat's WebSocket closed"
            frame = json.loads(raw)
            if frame["action"] == "message":
                message = frame["message"]
                if message["id"] not in self.messages:
                    self.order.append(message["id"])
                self.messages[message["id"]] = message
            elif frame["action"] == "writing" and frame["user"]["username"] == PERSONA_ID:
                status = frame.get("typingIndicator") or ""
                self.writing.append(status if frame["state"] else "idle")


@pytest.fixture
def chat(run: Run, jp_ws_fetch: Any) -> ChatClient:
    client = ChatClient(run(jp_ws_fetch("api", "chat", "ws", "persona-test.chat")))
    run(client.start())
    return client


def test_the_first_message_gets_a_bundle_then_a_reply(
    run: Run, chat: ChatClient, workspace: Path
) -> None:
    run(chat.send(FIRST))
    said = run(chat.until(2))
    # The chat file is the archive: the persona's turn is not stored in the workspace too.
    assert not (workspace / ".supercontext" / "conversations.sqlite3").exists()
    assert said[0].startswith("**Pre-flight**")
    assert "by the lab manager" in said[0] and "workspace workspace" in said[0]
    assert "offline orchestrator" in said[1]
    # The status said what the persona was doing before the reply streamed.
    assert any(status.startswith("is ") and status != "is typing..." for status in chat.writing)


def test_a_second_message_gets_no_preflight(run: Run, chat: ChatClient, jp_root_dir: Path) -> None:
    run(chat.send(FIRST))
    run(chat.until(2))
    run(chat.send("And who reviews it?"))
    said = run(chat.until(3))
    assert not said[2].startswith("**Pre-flight**")
    assert sum(body.startswith("**Pre-flight**") for body in said) == 1
    # The chat file, as the .chat import reads it: the persona speaks as the assistant.
    path = jp_root_dir / "persona-test.chat"
    data = load_json(decode_export(read_bytes(path)), str(path))
    turns = parse_jupyter_chat(data, str(path), "persona-test").conversations[0].turns
    assert [t.role for t in turns] == ["user", "assistant", "assistant", "user", "assistant"]


def test_preflight_off_for_the_chat_answers_without_a_bundle(run: Run, chat: ChatClient) -> None:
    run(chat.send("/preflight off"))
    said = run(chat.until(1))
    assert "**off**" in said[0]
    run(chat.send(FIRST))
    said = run(chat.until(2))
    assert not said[1].startswith("**Pre-flight**")
    assert "offline orchestrator" in said[1]
    run(chat.send("/preflight"))
    assert "**off**" in run(chat.until(3))[2]


def test_a_failing_route_ends_in_a_chat_message_with_the_key_masked(
    run: Run, chat: ChatClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCL_PERSONA_SERVER_KEY", KEY)
    # The server echoes the key back in its error, as some proxies do.
    with OpenAITestServer([ScriptedResponse.error(400, f"bad request for key {KEY}")]) as server:
        set_model_route(
            ORCHESTRATOR_HINT,
            ModelRoute(
                kind="openai",
                base_url=server.base_url,
                model="m",
                api_key_env="SCL_PERSONA_SERVER_KEY",
            ),
        )
        run(chat.send(FIRST))
        said = run(chat.until(2))
    assert said[0].startswith("**Pre-flight**")
    assert said[-1].startswith("**The model route")
    assert "400" in said[-1]
    assert all(KEY not in body for body in said)
    assert chat.writing[-1] == "idle"
