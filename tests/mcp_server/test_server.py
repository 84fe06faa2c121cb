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
from contextlib import AsyncExitStack, asynccontextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from supercontext_lab.harness import AGENT_CONTEXT_STATUS_HEADER
from supercontext_lab.mcp_server import ContextService, build_server
from supercontext_lab.testing import build_workspace

# The two SDK lines differ in the client's in-process entry and the name of its error;
# results are compared in their wire form (camelCase), which both lines share.
try:
    from mcp import Client, MCPError  # 2.x

    def _memory_session(server: Any) -> Any:
        return Client(server)

    ProtocolError: type[Exception] = MCPError
except ImportError:  # 1.x
    from mcp.shared.exceptions import McpError
    from mcp.shared.memory import create_connected_server_and_client_session

    def _memory_session(server: Any) -> Any:
        return create_connected_server_and_client_session(server)

    ProtocolError = McpError

MCP_MAJOR = int(version("mcp").split(".")[0])
ROOT = Path(__file__).resolve().parents[2]
MESSAGE = "What is the travel cap of the grant renewal budget?"
BIG = MESSAGE + " " + "the travel budget of the grant " * 33_000  # over 1 MB


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = build_workspace(tmp_path / "ws")
    outside = build_workspace(tmp_path / "outside", {"secret.md": "outside text\n"})
    os.symlink(outside / "secret.md", root / "memory" / "global" / "leak.md")
    return root


@asynccontextmanager
async def in_process(workspace: Path) -> AsyncIterator[Any]:
    server = build_server(ContextService(workspace, design="pack"))
    async with _memory_session(server) as session:
        yield session


@asynccontextmanager
async def over_stdio(workspace: Path) -> AsyncIterator[Any]:
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


def _wire(result: Any) -> dict[str, Any]:
    """A result as the protocol carries it (camelCase keys, no unset fields)."""
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


async def _exercise(session: Any) -> None:
    """Everything the server offers, and its refusals, through one client session."""
    tools = {tool["name"]: tool for tool in _wire(await session.list_tools())["tools"]}
    assert set(tools) == {"prepare_context", "recall"}
    assert tools["prepare_context"]["inputSchema"]["required"] == ["message"]

    done = _wire(await session.call_tool("prepare_context", {"message": MESSAGE}))
    assert not done.get("isError")
    text = done["content"][0]["text"]
    assert text.startswith("[context_bundle]")
    assert "(memory: global/grant-budget)" in text
    data = done["structuredContent"]
    assert (data["prepared"], data["prepared_by"], data["envelope"]) == (True, "pack", text)
    assert "250k EUR" in data["bundle"]["summary"]

    cold = _wire(await session.call_tool("prepare_context", {"message": "hi"}))
    assert cold["structuredContent"]["reason"] == "context_free_greeting"
    bad = _wire(await session.call_tool("prepare_context", {"message": MESSAGE, "design": "x"}))
    assert bad["isError"]

    hits = _wire(await session.call_tool("recall", {"query": "grant budget travel", "limit": 2}))
    assert hits["structuredContent"]["hits"][0]["key"] == "grant-budget"

    profile = _wire(await session.read_resource("supercontext://profile"))["contents"][0]
    assert profile["text"].startswith("# Dr. Ada Test")
    templates = _wire(await session.list_resource_templates())["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["supercontext://memory/{namespace}/{key}"]
    uri = "supercontext://memory/global/grant-budget"
    note = _wire(await session.read_resource(uri))["contents"][0]
    assert "capped at 250k EUR" in note["text"]

    unknown = "Unknown resource"  # the SDK itself found no resource for the URI
    for uri, why_1x, why_2x in [
        # An encoded separator: 1.x hands it over and the server decodes and refuses it;
        # 2.x's template matching refuses it first.
        ("supercontext://memory/global/..%2Fsourdough", "not a memory namespace", unknown),
        ("supercontext://memory/..%2F..%2Foutside/secret", "not a memory namespace", unknown),
        ("supercontext://memory/global/leak", "outside the workspace", "outside the workspace"),
        # 1.x's client resolves a bare "..": what arrives is memory/outside/secret.
        ("supercontext://memory/global/../../outside/secret", "no note memory/outside", unknown),
    ]:
        with pytest.raises(ProtocolError, match=why_1x if MCP_MAJOR < 2 else why_2x):
            await session.read_resource(uri)

    prompt = _wire(await session.get_prompt("first_turn", {"message": MESSAGE}))
    sent = prompt["messages"][0]["content"]["text"]
    assert sent.startswith(AGENT_CONTEXT_STATUS_HEADER)
    assert sent.endswith("\n" + MESSAGE)

    started = time.perf_counter()
    big = await session.call_tool("prepare_context", {"message": BIG, "deadline_ms": 2000})
    assert time.perf_counter() - started < 20  # generous: the machine is shared
    data = _wire(big)["structuredContent"]
    assert (data["read_chars"], data["message_chars"]) == (8000, len(BIG))
    assert data["prepared"]

    answers: dict[int, Any] = {}

    async def one(index: int) -> None:
        answers[index] = _wire(
            await session.call_tool("prepare_context", {"message": f"{MESSAGE} ({index})"})
        )

    async with anyio.create_task_group() as group:
        for index in range(8):
            group.start_soon(one, index)
    assert sorted(answers) == list(range(8))
    for answer in answers.values():
        assert not answer.get("isError")
        assert "(memory: global/grant-budget)" in answer["content"][0]["text"]


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
        # 1.x yields a third item (the session id), 2.x two streams.
        async with AsyncExitStack() as stack:
            url = f"http://127.0.0.1:{port}/mcp"
            streams = await stack.enter_async_context(streamable_http_client(url))
            session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
            await session.initialize()
            return _wire(await session.call_tool("prepare_context", {"message": MESSAGE}))

    try:
        _wait_for(port, server, 30.0)
        done = anyio.run(call)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert "(memory: global/grant-budget)" in done["content"][0]["text"]
