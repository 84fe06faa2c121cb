"""The MCP server through the SDK's own client: in-process (the SDK's memory streams) and
over stdio (``python -m supercontext_lab mcp`` in a fresh process, as a host launches it),
plus one call over streamable HTTP.

Each transport checks the tools, the resources and the prompt, the refusal of a URI with
``..`` and of a link out of the workspace, a 1 MB message and eight ``prepare_context``
calls at once. Offline models only.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent, TextResourceContents

from supercontext_lab.harness import AGENT_CONTEXT_STATUS_HEADER
from supercontext_lab.mcp_server import ContextService, build_server
from supercontext_lab.testing import build_workspace

ROOT = Path(__file__).resolve().parents[2]
MESSAGE = "What is the travel cap of the grant renewal budget?"
BIG = MESSAGE + " " + "the travel budget of the grant " * 33_000  # over 1 MB
Session = Callable[[], Any]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "ws")
    outside = build_workspace(tmp_path / "outside", {"secret.md": "outside text\n"})
    os.symlink(outside / "secret.md", root / "memory" / "global" / "leak.md")
    return root


@asynccontextmanager
async def in_process(workspace: Path) -> AsyncIterator[ClientSession]:
    server = build_server(ContextService(workspace, design="pack"))
    async with create_connected_server_and_client_session(server) as session:
        yield session


@asynccontextmanager
async def over_stdio(workspace: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "supercontext_lab", "mcp", "--workspace", str(workspace), "--design", "pack"],
        env=dict(os.environ),  # the test's private lab home
        cwd=str(ROOT),
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def _text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def _exercise(session: ClientSession) -> None:
    """Everything the server offers, and its refusals, through one client session."""
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == {"prepare_context", "recall"}
    assert tools["prepare_context"].inputSchema["required"] == ["message"]

    done = await session.call_tool("prepare_context", {"message": MESSAGE})
    assert not done.isError
    assert _text(done).startswith("[context_bundle]")
    assert "(memory: global/grant-budget)" in _text(done)
    data = done.structuredContent
    assert data is not None
    assert (data["prepared"], data["prepared_by"], data["envelope"]) == (True, "pack", _text(done))
    assert "250k EUR" in data["bundle"]["summary"]

    cold = await session.call_tool("prepare_context", {"message": "hi", "design": "pack"})
    assert cold.structuredContent is not None
    assert cold.structuredContent["reason"] == "context_free_greeting"
    bad = await session.call_tool("prepare_context", {"message": MESSAGE, "design": "warm"})
    assert bad.isError

    hits = await session.call_tool("recall", {"query": "grant budget travel", "limit": 2})
    assert hits.structuredContent is not None
    assert hits.structuredContent["hits"][0]["key"] == "grant-budget"

    profile = (await session.read_resource("supercontext://profile")).contents[0]
    assert isinstance(profile, TextResourceContents)
    assert profile.text.startswith("# Dr. Ada Test")
    templates = (await session.list_resource_templates()).resourceTemplates
    assert [t.uriTemplate for t in templates] == ["supercontext://memory/{namespace}/{key}"]
    note = (await session.read_resource("supercontext://memory/global/grant-budget")).contents[0]
    assert isinstance(note, TextResourceContents)
    assert "capped at 250k EUR" in note.text

    for uri, why in [
        ("supercontext://memory/global/..%2Fsourdough", "not a memory namespace or key"),
        ("supercontext://memory/..%2F..%2Foutside/secret", "not a memory namespace or key"),
        ("supercontext://memory/global/leak", "outside the workspace"),
        # The client's URL parser resolves a bare "..": what arrives is memory/outside/secret.
        ("supercontext://memory/global/../../outside/secret", "no note memory/outside/secret"),
    ]:
        with pytest.raises(McpError, match=why):
            await session.read_resource(uri)  # type: ignore[arg-type]

    prompt = await session.get_prompt("first_turn", {"message": MESSAGE})
    sent = prompt.messages[0].content
    assert isinstance(sent, TextContent)
    assert sent.text.startswith(AGENT_CONTEXT_STATUS_HEADER)
    assert sent.text.endswith("\n" + MESSAGE)

    started = time.perf_counter()
    big = await session.call_tool("prepare_context", {"message": BIG, "deadline_ms": 2000})
    assert time.perf_counter() - started < 20  # generous: the machine is shared
    assert big.structuredContent is not None
    assert big.structuredContent["read_chars"] == 8000
    assert big.structuredContent["message_chars"] == len(BIG)
    assert big.structuredContent["prepared"]

    answers: dict[int, Any] = {}

    async def one(index: int) -> None:
        answers[index] = await session.call_tool(
            "prepare_context", {"message": f"{MESSAGE} (request {index})"}
        )

    async with anyio.create_task_group() as group:
        for index in range(8):
            group.start_soon(one, index)
    assert sorted(answers) == list(range(8))
    for answer in answers.values():
        assert not answer.isError
        assert "(memory: global/grant-budget)" in _text(answer)


def _run(client: Callable[[Path], Any], workspace: Path) -> None:
    async def main() -> None:
        async with client(workspace) as session:
            await _exercise(session)

    anyio.run(main)


def test_in_process(workspace: Path) -> None:
    _run(in_process, workspace)


@pytest.mark.slow
def test_over_stdio(workspace: Path) -> None:
    _run(over_stdio, workspace)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_for(port: int, server: subprocess.Popen[bytes], seconds: float) -> None:
    """Return once something listens on ``port``; fail when the server ended or took
    longer than ``seconds``."""
    deadline = time.monotonic() + seconds
    while server.poll() is None and time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    pytest.fail(f"the server did not listen on {port} (exit status {server.poll()})")


@pytest.mark.slow
def test_over_streamable_http_on_loopback(workspace: Path) -> None:
    port = _free_port()
    command = [sys.executable, "-m", "supercontext_lab", "mcp", "--workspace", str(workspace)]
    server = subprocess.Popen(
        [*command, "--http", "--port", str(port), "--design", "pack"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    async def call() -> Any:
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("prepare_context", {"message": MESSAGE})

    try:
        _wait_for(port, server, 30.0)
        done = anyio.run(call)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert "(memory: global/grant-budget)" in _text(done)
