"""Model faults: a full first turn with the scout behind a misbehaving OpenAI-compatible
server on 127.0.0.1 (or behind nothing at all).

Every case drives ``Thread.send`` with the scout routed to the server, and checks that the
turn completes with the scripted orchestrator's reply, cold when it must be (with the
reason on the ``TurnResult``), within a wall-clock bound, that the workspace and the folder
around it are byte-identical afterwards (except the workspace's ``.supercontext/`` index),
that no tool outside the allowlist ran, and that the API key never shows up anywhere.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest

from supercontext_lab.agents.definition import default_agent_definition
from supercontext_lab.bundle import CLOSE_TAG, OPEN_TAG, extract_context_bundle
from supercontext_lab.harness import Thread, build_prepared_message
from supercontext_lab.models import routing
from supercontext_lab.models.base import ChatModel
from supercontext_lab.models.boundary import SECRET_MARKER
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.routes import ModelRoute, set_model_route
from supercontext_lab.testing import (
    OpenAITestServer,
    ScriptedModel,
    ScriptedResponse,
    envelope,
    tool_call_message,
)

from .support import (
    CANARY_KEY,
    KEY_ENV,
    MESSAGE,
    ORCHESTRATOR_REPLY,
    MisbehavingServer,
    Sandbox,
    assert_no_canary,
    closed_port,
    nothing_listening,
    run_turn,
    shown_texts,
)

ALLOWLIST = tuple(default_agent_definition().tools.named)
MAX_RESULT_CHARS = default_agent_definition().max_result_chars

ENVELOPE = envelope(
    has_enough_context=True,
    proposed_goal="Check the grant renewal budget",
    summary="The grant renewal budget is capped at 250k EUR (memory).",
    recommended_tool_calls=[
        ("file_read", {"path": "files/budget/grant-budget-2026.md"}, "the budget")
    ],
    recommended_skills=[("grant-budget-check", True, "checks budgets against caps")],
)
BIG_ENVELOPE = envelope(
    has_enough_context=True,
    proposed_goal="Check the grant renewal budget",
    summary="- The grant renewal budget must be approved by the department head (memory)\n" * 700,
)
assert len(BIG_ENVELOPE) > 50_000

ok = ScriptedResponse.reply
err = ScriptedResponse.error


def raw(body: str | bytes, ctype: str = "application/json", **headers: str) -> ScriptedResponse:
    """A 200 answer with exactly this body."""
    return ScriptedResponse(body=body, headers={"Content-Type": ctype, **headers})


def calls(*items: tuple[str, Mapping[str, Any] | str]) -> ScriptedResponse:
    """A reply asking for these tool calls (arguments as given: a mapping or raw text)."""
    return ok(None, tool_calls=items)


@dataclass(frozen=True)
class Fault:
    """One misbehaviour and what the turn must look like afterwards."""

    id: str
    responses: tuple[ScriptedResponse, ...] = ()
    expect: Literal["prepared", "failed"] = "failed"
    reason: str = ""
    """A fragment of ``TurnResult.reason_detail`` (cold turns)."""
    bound_s: float = 4.0
    """Wall-clock bound of the whole turn."""
    sleeps: tuple[float, ...] | None = None
    """The exact pauses between retries, when they matter."""
    requests: int | None = None
    """How many requests the server must have received."""
    refused: tuple[str, ...] = ()
    """Tool names the scout must have refused, in order."""
    server: Literal["scripted", "closed", "drip_sse", "drip_json", "slam", "endless"] = "scripted"
    stream: bool = False
    native: bool = True
    timeout_s: float = 2.0
    """The route's per-attempt timeout."""
    scout_timeout_s: float = 10.0


RETRIES = (0.5, 1.0, 2.0)

# One fault a line: the table is easier to read (and extend) than its formatted form.
# fmt: off
FAULTS = [
    # -- unreachable, rate limited, failing --------------------------------------------
    Fault("connection-refused", server="closed", reason="Cannot reach the model server", sleeps=RETRIES),
    Fault("429-retry-after-2s", (err(429, retry_after=2), ok(ENVELOPE)), "prepared", sleeps=(2.0,), requests=2),
    Fault("429-retry-after-http-date", (err(429, retry_after="Wed, 21 Oct 2015 07:28:00 GMT"), ok(ENVELOPE)), "prepared", sleeps=(0.0,), requests=2),
    Fault("429-retry-after-negative", (err(429, retry_after="-3"), ok(ENVELOPE)), "prepared", sleeps=(0.0,), requests=2),
    Fault("429-retry-after-unreadable", (err(429, retry_after="soon"), ok(ENVELOPE)), "prepared", sleeps=(0.5,), requests=2),
    Fault("429-without-retry-after", (err(429), ok(ENVELOPE)), "prepared", sleeps=(0.5,), requests=2),
    Fault("429-retry-after-past-the-run-budget", (err(429, retry_after=3600), ok(ENVELOPE)), reason="no time left in the call's budget", sleeps=(), requests=1, scout_timeout_s=5.0),
    Fault("429-retry-after-infinite", (err(429, retry_after="inf"), ok(ENVELOPE)), reason="no time left in the call's budget", sleeps=(), requests=1, scout_timeout_s=5.0),
    Fault("429-beyond-the-retry-budget", (err(429),) * 4, reason="HTTP 429", sleeps=RETRIES, requests=4),
    Fault("5xx-burst-then-success", (err(500), err(502), err(503), ok(ENVELOPE)), "prepared", sleeps=RETRIES, requests=4),
    Fault("503-retry-after-1s-then-success", (err(503, retry_after=1), ok(ENVELOPE)), "prepared", sleeps=(1.0,), requests=2),
    Fault("5xx-beyond-the-retry-budget", (err(500), err(502), err(503), err(500), ok(ENVELOPE)), reason="gave up after 4 attempts", sleeps=RETRIES, requests=4),
    Fault("401-is-not-retried", (err(401), ok(ENVELOPE)), reason="HTTP 401", sleeps=(), requests=1),
    Fault("404-is-not-retried", (err(404), ok(ENVELOPE)), reason="HTTP 404", sleeps=(), requests=1),
    Fault("302-is-not-followed", (ScriptedResponse(status=302, headers={"Location": "http://169.254.169.254/v1"}), ok(ENVELOPE)), reason="HTTP 302", requests=1),
    Fault("connection-slammed-shut", server="slam", reason="model error", sleeps=RETRIES, requests=4),
    # -- slow ----------------------------------------------------------------------------
    Fault("slow-past-the-route-timeout", (ok(ENVELOPE, delay_s=5),) * 4, reason="timeout", sleeps=RETRIES, requests=4, timeout_s=0.3),
    Fault("slow-past-the-scout-time-limit", (ok(ENVELOPE, delay_s=5),), reason="timeout", sleeps=(), requests=1, timeout_s=60, scout_timeout_s=0.6),
    Fault("json-body-dripping-past-the-timeout", server="drip_json", reason="timeout", sleeps=RETRIES, requests=4, timeout_s=0.3),
    Fault("event-stream-of-keep-alives-forever", server="drip_sse", stream=True, reason="timeout", sleeps=RETRIES, requests=4, timeout_s=0.3),
    # -- bodies that are not a completion -------------------------------------------------
    Fault("html-instead-of-json", (ScriptedResponse.garbage(), ok(ENVELOPE)), reason="not JSON", sleeps=(), requests=1),
    Fault("empty-body", (raw(b""), ok(ENVELOPE)), reason="not JSON", requests=1),
    Fault("invalid-utf8-body", (raw(b"\xff\xfe\x00\x81garbage"), ok(ENVELOPE)), reason="not JSON", requests=1),
    Fault("json-nested-100k-deep", (raw("[" * 100_000), ok(ENVELOPE)), reason="not JSON", requests=1),
    Fault("json-with-trailing-garbage", (raw('{"choices": []} trailing'), ok(ENVELOPE)), reason="not JSON", requests=1),
    Fault("gzip-header-on-a-plain-body", (raw(b"not gzip at all", **{"Content-Encoding": "gzip"}), ok(ENVELOPE)), reason="model error", requests=1),
    Fault("json-null", (raw("null"),), reason="JSON that is not an object"),
    Fault("json-array", (raw("[1, 2, 3]"),), reason="JSON that is not an object"),
    Fault("json-string", (raw('"[context_bundle]"'),), reason="JSON that is not an object"),
    Fault("json-without-choices", (raw("{}"),), reason="without 'choices'"),
    Fault("json-empty-choices", (raw('{"choices": []}'),), reason="without 'choices'"),
    Fault("json-choice-without-message", (raw('{"choices": [{}]}'),), reason="no 'message' object"),
    Fault("json-message-is-a-string", (raw('{"choices": [{"message": "hi"}]}'),), reason="no 'message' object"),
    Fault("json-content-is-an-object", (raw('{"choices": [{"message": {"content": {"a": 1}}}]}'),), reason="content of type dict"),
    Fault("json-content-parts-of-bad-type", (raw('{"choices": [{"message": {"content": ["a", 1]}}]}'),), reason="content part of type int"),
    Fault("json-tool-calls-not-a-list", (raw('{"choices": [{"message": {"tool_calls": "shell"}}]}'),), reason="'tool_calls' that is not a list"),
    Fault("json-tool-call-without-name", (raw('{"choices": [{"message": {"tool_calls": [{"function": {"name": ""}}]}}]}'),), reason="without a function name"),
    Fault("json-error-object-with-200", (raw('{"error": {"message": "model overloaded"}}'),), reason="model overloaded"),
    # -- streams -------------------------------------------------------------------------
    Fault("stream-cut-mid-way", (ScriptedResponse.stream(ENVELOPE, cut_after=6), ok(ENVELOPE)), reason="ended early", stream=True, requests=1),
    Fault("stream-cut-before-any-content", (ScriptedResponse.stream(ENVELOPE, cut_after=1), ScriptedResponse.stream(ENVELOPE)), "prepared", stream=True, sleeps=(0.5,), requests=2),
    Fault("stream-chunk-not-json", (ScriptedResponse(sse=["data: {not json", "data: [DONE]"]),), reason="not JSON", stream=True, requests=1),
    Fault("stream-ends-without-done-or-finish", (ScriptedResponse(sse=['data: {"choices": [{"delta": {"content": "[context_bundle]"}}]}']),), reason="ended early", stream=True, requests=1),
    Fault("stream-error-chunk", (ScriptedResponse(sse=['data: {"error": {"message": "backend died"}}']),), reason="backend died", stream=True, requests=1),
    Fault("stream-answered-with-html", (ScriptedResponse.garbage(),), reason="not an event stream", stream=True, requests=1),
    # -- tool calls the scout must refuse or reject --------------------------------------
    Fault("unknown-tool-name", (calls(("delete_everything", {"confirm": True})), ok(ENVELOPE)), "prepared", refused=("delete_everything",)),
    Fault("memory-tree-in-write-mode", (calls(("memory_tree", {"mode": "ingest_document", "content": "pwned"})), ok(ENVELOPE)), "prepared", refused=("memory_tree",)),
    Fault("shell", (calls(("shell", {"command": "touch pwned"})), ok(ENVELOPE)), "prepared", refused=("shell",)),
    Fault("file-write", (calls(("file_write", {"path": "files/pwned.txt", "content": "x"})), ok(ENVELOPE)), "prepared", refused=("file_write",)),
    Fault("agent-prepare-context-recursion", (calls(("agent_prepare_context", {"question": "again"})), ok(ENVELOPE)), "prepared", refused=("agent_prepare_context",)),
    Fault("every-write-tool-at-once", (calls(("memory_store", {}), ("skill_registry_install", {"id": "x"}), ("skill_registry_uninstall", {"id": "grant-budget-check"}), ("run_workflow", {}), ("spawn_subagent", {})), ok(ENVELOPE)), "prepared", refused=("memory_store", "skill_registry_install", "skill_registry_uninstall", "run_workflow", "spawn_subagent")),
    Fault("read-only-tool-outside-the-allowlist", (calls(("workspace_read_file", {"path": "../PROFILE.md"})), ok(ENVELOPE)), "prepared", refused=("workspace_read_file",)),
    Fault("tool-name-of-10k-characters", (calls(("x" * 10_000, {})), ok(ENVELOPE)), "prepared", refused=("x" * 10_000,)),
    Fault("forbidden-tool-in-text-tool-protocol", (ok('<tool_call>{"name": "shell", "arguments": {"command": "id"}}</tool_call>'), ok(ENVELOPE)), "prepared", refused=("shell",), native=False),
    Fault("invalid-json-arguments", (calls(("memory_recall", "{not json")), ok(ENVELOPE)), "prepared"),
    Fault("arguments-of-the-wrong-types", (calls(("memory_recall", {"query": 5, "limit": "all", "sudo": True})), ok(ENVELOPE)), "prepared"),
    Fault("arguments-that-are-an-array", (calls(("memory_recall", "[1, 2]")), ok(ENVELOPE)), "prepared"),
    Fault("path-escape-in-read-only-arguments", (calls(("memory_flavour", {"flavour": "../../outside/secret"}), ("web_fetch", {"url": "file:///etc/passwd"})), ok(ENVELOPE)), "prepared"),
    Fault("hundred-tool-calls-in-one-reply", (calls(*[("memory_recall", {"query": f"budget {i}"}) for i in range(100)]), ok(ENVELOPE)), "prepared"),
    Fault("never-stops-calling-tools", server="endless", reason="no valid envelope", requests=default_agent_definition().max_iterations + 1),
    # -- final answers the harness must not pass on as they are --------------------------
    Fault("envelope-of-50k-characters", (ok(BIG_ENVELOPE),), "prepared", requests=1),
    Fault("two-envelopes", (ok(ENVELOPE + "\n\n" + ENVELOPE),), reason="2 opening tags", requests=1),
    Fault("prose-only", (ok("Sure! The budget looks fine to me."),), reason="no [context_bundle] opening tag", requests=1),
    Fault("empty-answer", (ok(""),), reason="no [context_bundle] opening tag", requests=1),
    Fault("unterminated-envelope", (ok("[context_bundle]\nhas_enough_context: true\nsummary: x"),), reason="no closing", requests=1),
    Fault("closing-tag-quoted-inside", (ok(ENVELOPE.replace("summary:", f"summary: the tag {CLOSE_TAG} is here;")),), reason="closing tags", requests=1),
    Fault("envelope-only-inside-tool-arguments", (calls(("memory_recall", {"query": ENVELOPE})), ok("Done.")), reason="no [context_bundle] opening tag", requests=2),
]
# fmt: on

CASES_NOTE = "Faults: " + ", ".join(f"`{fault.id}`" for fault in FAULTS) + "."
"""Listed under the table by ``count_cases.py``."""


@contextmanager
def model_server(fault: Fault) -> Iterator[tuple[str, Callable[[], list[str | None]]]]:
    """The server a fault needs: its base URL and a way to read the Authorization
    headers of the requests it received (``None`` where there was none)."""
    if fault.server == "closed":
        with nothing_listening() as url:
            yield url, list
    elif fault.server in ("drip_sse", "drip_json", "slam"):
        with MisbehavingServer(fault.server) as bad:
            yield bad.base_url, lambda: list(bad.authorizations)
    else:
        endless = None
        if fault.server == "endless":
            step = tool_call_message(("memory_recall", {"query": "grant budget"}))
            endless = ScriptedModel(itertools.repeat(step), name="endless")
        with OpenAITestServer(fault.responses, model=endless) as server:

            def auth() -> list[str | None]:
                return [dict(r.headers).get("Authorization") for r in server.requests]

            yield server.base_url, auth


@pytest.mark.parametrize("fault", FAULTS, ids=[fault.id for fault in FAULTS])
def test_turn_survives_model_fault(
    fault: Fault,
    sandbox: Sandbox,
    canary_key: str,
    executed_tools: list[str],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    http_client: httpx.Client,
) -> None:
    """A full first turn against a misbehaving model server (one case per fault below)."""
    caplog.set_level(logging.DEBUG)
    before = sandbox.fingerprint()
    sleeps: list[float] = []
    with model_server(fault) as (base_url, authorizations):
        scout = OpenAICompatibleModel(
            base_url=base_url,
            model="m",
            api_key_env=KEY_ENV,
            timeout_s=fault.timeout_s,
            stream=fault.stream,
            native_tool_calling=fault.native,
            sleep=sleeps.append,
            client=http_client,
        )
        with scout:
            turn = run_turn(
                sandbox.root,
                scout,
                scout_timeout_s=fault.scout_timeout_s,
            )
        seen = authorizations()
    result = turn.result

    # The turn completed, in bounded time, with the orchestrator's reply.
    assert turn.elapsed_s < fault.bound_s, f"took {turn.elapsed_s:.2f} s"
    assert result.reply == ORCHESTRATOR_REPLY
    assert result.orchestrator_error is None
    assert len(turn.orchestrator.calls) == 1
    assert result.preparation == fault.expect, result.reason
    if fault.expect == "prepared":
        assert result.reason is None
        assert result.envelope is not None
        assert len(result.envelope) <= MAX_RESULT_CHARS
        assert extract_context_bundle(result.envelope) == result.envelope
        assert turn.sent == build_prepared_message(result.envelope, MESSAGE)
        assert turn.sent.count(OPEN_TAG) == turn.sent.count(CLOSE_TAG) == 1
    else:
        assert result.reason is not None, "a cold turn must say why"
        assert fault.reason in (result.reason_detail or "")
        assert result.envelope is None
        assert result.bundle is None
        assert turn.sent == MESSAGE

    # Retries, requests and refusals are exactly as the contract says.
    if fault.sleeps is not None:
        assert sleeps == pytest.approx(list(fault.sleeps), abs=0.05)
    if fault.requests is not None:
        assert len(seen) == fault.requests
    assert all(header == f"Bearer {CANARY_KEY}" for header in seen)
    refused = [step.tool for step in result.trace if step.kind == "tool" and step.refused]
    assert refused == list(fault.refused)
    assert set(executed_tools) <= set(ALLOWLIST)

    # Nothing changed on disk, and the key is nowhere but in the request headers.
    assert sandbox.fingerprint() == before
    out, err = capsys.readouterr()
    assert_no_canary([*shown_texts(turn), caplog.text, out, err])


def test_fault_table_covers_every_named_fault() -> None:
    """The fault table keeps a case for every fault the issue names.

    The table keeps one case per fault the reliability contract names."""
    named = {
        "connection-refused", "429-retry-after-2s", "429-without-retry-after",
        "5xx-burst-then-success", "5xx-beyond-the-retry-budget", "slow-past-the-route-timeout",
        "html-instead-of-json", "json-without-choices", "stream-cut-mid-way",
        "unknown-tool-name", "memory-tree-in-write-mode", "shell", "file-write",
        "agent-prepare-context-recursion", "invalid-json-arguments", "never-stops-calling-tools",
        "envelope-of-50k-characters", "two-envelopes", "prose-only",
    }  # fmt: skip
    ids = [fault.id for fault in FAULTS]
    assert len(ids) == len(set(ids))
    assert named <= set(ids)


def _explode(messages: object, tools: object) -> str:
    raise KeyError("choices")


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("route-table-invalid", "invalid [models.burst] table"),
        ("route-points-at-a-closed-port", "Cannot reach the model server"),
        ("chat-model-raises-its-own-exception", "KeyError"),
    ],
)
def test_turn_survives_a_broken_scout_route(
    case: str,
    reason: str,
    sandbox: Sandbox,
    lab_home: Path,
    canary_key: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broken route in config.toml, a route to a closed port, a model raising its own error.

    The scout's model comes from the lab's config; a broken route is a cold start too."""
    scout: ChatModel | None = None
    if case == "route-table-invalid":
        (lab_home / "config.toml").write_text(
            '[models.burst]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n',
            encoding="utf-8",
        )
    elif case == "route-points-at-a-closed-port":
        set_model_route(
            "burst",
            ModelRoute(
                kind="openai",
                base_url=f"http://127.0.0.1:{closed_port()}/v1",
                model="m",
                api_key_env=KEY_ENV,
                timeout_s=0.5,
            ),
        )
    else:
        scout = ScriptedModel([_explode])
    sleeps: list[float] = []

    class RecordingSleeps(OpenAICompatibleModel):
        @classmethod
        def from_route(cls, route: object, **options: Any) -> OpenAICompatibleModel:
            return OpenAICompatibleModel.from_route(route, sleep=sleeps.append)

    monkeypatch.setattr(routing, "OpenAICompatibleModel", RecordingSleeps)
    before = sandbox.fingerprint()
    turn = run_turn(sandbox.root, scout)
    if case == "route-points-at-a-closed-port":
        assert sleeps == list(RETRIES)
    assert turn.elapsed_s < 4.0
    assert turn.result.reply == ORCHESTRATOR_REPLY
    assert turn.result.preparation == "failed"
    assert reason in (turn.result.reason_detail or "")
    assert turn.sent == MESSAGE
    assert sandbox.fingerprint() == before
    assert_no_canary([*shown_texts(turn), caplog.text])
    if case == "chat-model-raises-its-own-exception":
        assert "The context scout failed unexpectedly" in caplog.text


# ------------------------------------------- secrets and unencodable text in 200 replies

ECHOED = envelope(
    has_enough_context=True,
    proposed_goal=f"Check the grant renewal budget {CANARY_KEY}",
    summary=f"The request carried the key {CANARY_KEY} (memory).",
    recommended_tool_calls=[("file_read", {"path": CANARY_KEY}, f"it names {CANARY_KEY}")],
    recommended_skills=[("grant-budget-check", True, f"the key {CANARY_KEY} works")],
)
OTHER_KEY_ENV = "SC_RELIABILITY_OTHER_KEY"
OTHER_KEY = "sk-other-route-RELIABILITY-9d2e"
"""The key of another route config.toml names: a reply repeating it loses it too."""


def _sse(deltas: list[dict[str, Any]], finish: str = "stop") -> list[str]:
    """Event-stream lines, one chunk per delta; JSON escapes keep surrogates as ``\\uXXXX``."""
    lines = []
    for delta in [*deltas, {}]:
        choice = {"index": 0, "delta": delta, "finish_reason": None if delta else finish}
        lines.append("data: " + json.dumps({"model": "m", "choices": [choice]}))
    return [*lines, "data: [DONE]"]


def _split_secrets(text: str, *secrets: str) -> list[str]:
    """``text`` in pieces that cut every secret in it in two."""
    cuts = sorted(
        start + len(secret) // 2
        for secret in secrets
        for start in range(len(text))
        if text.startswith(secret, start)
    )
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _split_call(name: str, arguments: str) -> list[dict[str, Any]]:
    head = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name}}
    pieces = [
        {"index": 0, "function": {"arguments": part}}
        for part in _split_secrets(arguments, CANARY_KEY)
    ]
    return [{"tool_calls": [head]}, *({"tool_calls": [piece]} for piece in pieces)]


ECHO_CASES = {
    "plain": (False, (ok(ECHOED),)),
    "streamed": (True, (ScriptedResponse.stream(ECHOED),)),
    "split-across-chunks": (
        True,
        (ScriptedResponse(sse=_sse([{"content": p} for p in _split_secrets(ECHOED, CANARY_KEY)])),),
    ),
    "in-tool-call-arguments": (
        True,
        (
            ScriptedResponse(
                sse=_sse(
                    _split_call("memory_recall", json.dumps({"query": f"budget {CANARY_KEY}"})),
                    finish="tool_calls",
                )
            ),
            ok(ENVELOPE),
        ),
    ),
}


@pytest.mark.parametrize("case", list(ECHO_CASES))
def test_a_key_repeated_in_a_200_reply_is_removed_at_the_model_boundary(
    case: str, sandbox: Sandbox, canary_key: str, executed_tools: list[str]
) -> None:
    """A server repeating the request's key in its reply: plain, streamed, split, in tool-call arguments.

    The key is replaced by a marker before the scout, the trace or the turn hold it, and
    the run's problems say so."""
    stream, responses = ECHO_CASES[case]
    with OpenAITestServer(responses) as server:
        scout = OpenAICompatibleModel(
            base_url=server.base_url, model="m", api_key_env=KEY_ENV, stream=stream
        )
        with scout:
            turn = run_turn(sandbox.root, scout)
        assert all(r.headers["Authorization"] == f"Bearer {CANARY_KEY}" for r in server.requests)
    result = turn.result
    assert result.preparation == "prepared", result.reason
    assert result.scout is not None
    if case == "in-tool-call-arguments":
        recall = next(step for step in result.trace if step.tool == "memory_recall")
        assert SECRET_MARKER in recall.arguments
        assert executed_tools == ["memory_recall"]
    else:
        assert result.envelope is not None and SECRET_MARKER in result.envelope
        assert result.goal == f"Check the grant renewal budget {SECRET_MARKER}"
    assert any("secret value" in problem for problem in result.scout.problems)
    assert_no_canary(shown_texts(turn))


def _file_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_echoed_key_is_in_nothing_a_turn_a_save_or_an_evaluation_keeps(
    sandbox: Sandbox,
    canary_key: str,
    lab_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An echoing server behind the scout, the orchestrator and an evaluation: the key nowhere.

    Both keys in use (the route's and another route's from config.toml) are checked in the
    envelope, the orchestrator's message and reply (streamed deltas too), the thread goal,
    the trace, the saved thread, the panel, the evaluation report and the SQLite files."""
    from supercontext_lab.eval import EvalCase, Variant, evaluate
    from supercontext_lab.lab.widgets.panel import BundlePanel

    monkeypatch.setenv(OTHER_KEY_ENV, OTHER_KEY)
    set_model_route(
        "agentic",
        ModelRoute(
            kind="openai", base_url="http://127.0.0.1:9/v1", model="o", api_key_env=OTHER_KEY_ENV
        ),
    )
    echoed = ECHOED.replace("(memory).", f"(memory). Also {OTHER_KEY}.")
    reply = f"Done; your keys {CANARY_KEY} and {OTHER_KEY} work."
    scout_replies = [
        ScriptedResponse(
            sse=_sse([{"content": p} for p in _split_secrets(echoed, CANARY_KEY, OTHER_KEY)])
        )
    ]
    orchestrator_reply = ScriptedResponse(
        sse=_sse([{"content": p} for p in _split_secrets(reply, CANARY_KEY, OTHER_KEY)])
    )
    deltas: list[str] = []
    with (
        OpenAITestServer([*scout_replies, ok(echoed)]) as scout_server,
        OpenAITestServer([orchestrator_reply]) as orchestrator_server,
    ):

        def model(server: OpenAITestServer) -> OpenAICompatibleModel:
            return OpenAICompatibleModel(
                base_url=server.base_url, model="m", api_key_env=KEY_ENV, stream=True
            )

        thread = Thread(
            sandbox.root,
            scout_model=model(scout_server),
            orchestrator_model=model(orchestrator_server),
            super_context_enabled=True,
        )
        result = thread.send(MESSAGE, on_text=deltas.append)
        saved = thread.save(tmp_path / "thread.json")
        route = ModelRoute(
            kind="openai", base_url=scout_server.base_url, model="m", api_key_env=KEY_ENV
        )
        report = evaluate(
            [EvalCase(id="echo", message=MESSAGE)],
            Variant.baseline(route=route),
            workspace=sandbox.root,
            cache_path=tmp_path / "cache" / "responses.sqlite3",
            progress=False,
        )
    assert result.preparation == "prepared", result.reason
    assert result.reply == f"Done; your keys {SECRET_MARKER} and {SECRET_MARKER} work."
    assert "".join(deltas) == result.reply
    assert thread.goal is not None and SECRET_MARKER in thread.goal
    assert report.results[0].envelope is not None and not report.results[0].from_cache
    panel = BundlePanel(turn=result)
    places = {
        "the envelope": result.envelope or "",
        "the bundle": json.dumps(result.bundle.to_dict() if result.bundle else None),
        "the orchestrator's message": result.sent_message,
        "the orchestrator's reply": result.reply,
        "the streamed deltas": "".join(deltas),
        "the thread goal": thread.goal,
        "the trace": json.dumps([step.to_dict() for step in result.trace]),
        "the turn": json.dumps(result.to_dict(), ensure_ascii=False) + result.describe(),
        "the scout's conversation": json.dumps(
            [m.to_openai() for m in result.scout.messages] if result.scout else []
        ),
        "the orchestrator's conversation": json.dumps(
            [m.to_openai() for m in result.orchestrator_messages]
        ),
        "the panel": "".join(_html_values(panel)),
        "the evaluation report": report.to_json()
        + report.to_csv()
        + report.to_html()
        + report.to_text(),
    }
    stored = {"the saved thread": saved.read_bytes(), **_file_bytes(tmp_path / "cache")}
    assert SECRET_MARKER in saved.read_text("utf-8")
    assert any(name.endswith("responses.sqlite3") for name in stored)
    for secret in (CANARY_KEY, OTHER_KEY):
        for place, text in places.items():
            assert secret not in text, f"a key reached {place}"
        for place, data in stored.items():
            assert secret.encode() not in data, f"a key reached {place}"


def _html_values(widget: Any) -> list[str]:
    import ipywidgets

    values = [widget.value] if isinstance(widget, ipywidgets.HTML) else []
    for child in widget.children if isinstance(widget, ipywidgets.Box) else ():
        values.extend(_html_values(child))
    return values


HIGH, LOW = json.loads('"\\ud83d"'), json.loads('"\\ude00"')
"""The two halves of 😀 (U+1F600) as the JSON escapes a server may send on their own."""


def _with(goal_tail: str) -> str:
    return envelope(
        has_enough_context=True,
        proposed_goal=f"Check the grant renewal budget {goal_tail}",
        # Grounded in MEMORY.md, which every run reads.
        summary=f"The grant renewal budget must be approved by the department head {goal_tail} "
        "(memory).",
    )


def _halves(text: str) -> list[dict[str, Any]]:
    """``text`` in two deltas, the first ending with the high half of its surrogate pair."""
    cut = text.index(HIGH) + 1
    return [{"content": text[:cut]}, {"content": text[cut:]}]


SURROGATE_CASES = {
    "lone-in-json": (False, ok(_with(f"now{HIGH}")), "now\ufffd"),
    "lone-in-stream": (
        True,
        ScriptedResponse(sse=_sse([{"content": _with(f"now{HIGH}")}])),
        "now\ufffd",
    ),
    "pair-split-across-chunks": (
        True,
        ScriptedResponse(sse=_sse(_halves(_with(f"now{HIGH}{LOW}")))),
        "now😀",
    ),
}


@pytest.mark.parametrize("case", list(SURROGATE_CASES))
def test_unencodable_text_in_a_reply_is_repaired_so_save_and_evaluate_work(
    case: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    """A lone surrogate (a JSON escape), in a plain or a streamed reply, or a pair split across chunks.

    The pair is joined and what is left becomes U+FFFD, so the turn, Thread.save and
    evaluate() (its SQLite stores) all work."""
    from supercontext_lab.eval import EvalCase, Variant, evaluate

    stream, response, expected = SURROGATE_CASES[case]
    with OpenAITestServer([response, response]) as server:
        scout = OpenAICompatibleModel(base_url=server.base_url, model="m", stream=stream)
        with scout:
            turn = run_turn(sandbox.root, scout)
        saved = turn.thread.save(tmp_path / "thread.json")
        route = ModelRoute(kind="openai", base_url=server.base_url, model="m", stream=stream)
        report = evaluate(
            [EvalCase(id="surrogate", message=MESSAGE)],
            Variant.baseline(route=route),
            workspace=sandbox.root,
            cache_path=tmp_path / "cache.sqlite3",
            progress=False,
        )
    result = turn.result
    assert result.preparation == "prepared", result.reason
    assert result.goal == f"Check the grant renewal budget {expected}"
    assert expected in saved.read_text("utf-8")
    assert expected in (report.results[0].envelope or "")
    for text in [*shown_texts(turn), report.to_json()]:
        text.encode("utf-8")


def test_the_scout_command_prints_a_reply_holding_a_lone_surrogate(sandbox: Sandbox) -> None:
    """`supercontext-lab scout --json` on a reply with a lone surrogate: JSON out, no traceback."""
    with OpenAITestServer([ok(_with(f"now{HIGH}"))]) as server:
        out = subprocess.run(
            [
                sys.executable, "-m", "supercontext_lab", "scout", "--json",
                "--workspace", str(sandbox.root), "--model", "m", "--base-url", server.base_url,
                MESSAGE,
            ],
            capture_output=True, text=True, timeout=120, env=os.environ.copy(),
        )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    printed = json.loads(out.stdout)
    assert printed["bundle"]["proposed_goal"] == "Check the grant renewal budget now\ufffd"
