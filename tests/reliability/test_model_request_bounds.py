"""What any model is sent fits its context window, however large the notes (round 4, class 10).

One scout request to a real model route was 1.7 MB (about 410k tokens): recall sent whole
notes. Here a workspace holds a note of 1.5 MB (the index reads its first megabyte) with
the answer 700 KB in, and a 100,000-character file with another answer 60 KB in. The
scout runs against a real OpenAI-compatible server on 127.0.0.1 that records every
request body: each must be within the route's window by the lab's own estimate (four
bytes a token: ``len(body) / 4 <= context_tokens``, the whole body counted), and the
request after the reads must still hold the answering passage, with the cut said. The
orchestrator, handed a long thread, is held to its window too: the oldest turns leave
first, with a marker, and its prompt and the message stay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.agents import default_agent_toml, load_agent_definition, set_tool_enabled
from supercontext_lab.harness import Thread
from supercontext_lab.models.base import Message
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.routes import ModelRoute
from supercontext_lab.scout import run_scout
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import OpenAITestServer, ScriptedResponse, build_workspace, envelope

ASSUMED_TOKENS = 8192
"""The window a route that declares none is held to (``models.window``'s default)."""
REQUEST = "What is the grant renewal budget cap?"
ANSWER = "The grant renewal budget is capped at 250k EUR; travel stays under 8 percent of it."
FILE_ANSWER = "The grant renewal budget cap was raised from 200k to 250k EUR by the funder."
NOTE_CHARS = 1_500_000
ANSWER_AT = 700_000
FILE_CHARS = 100_000
FILE_ANSWER_AT = 60_000

_TOPICS = (
    "The freezer inventory was checked and two racks were relabelled.",
    "Pipette calibration is due again in March; Sam books the technician.",
    "The confocal microscope calendar stays on the shared drive.",
    "Ordering of plasticware moves to the new supplier next quarter.",
    "The seminar series invites one outside speaker a month.",
    "Safety training for new students is on the first Monday.",
    "The travel budget for the autumn conference was approved.",
    "Grant reports for the old project went out on time.",
)


def _minutes(chars: int, answer: str, at: int) -> str:
    """Meeting minutes of ``chars`` characters, varied, with ``answer`` at about ``at``."""
    parts: list[str] = []
    size = 0
    meeting = 0
    placed = False
    while size < chars:
        if not placed and size >= at:
            parts.append(answer)
            placed = True
        topic = _TOPICS[meeting % len(_TOPICS)]
        parts.append(f"Meeting {meeting}: {topic} Nothing else was decided that week.")
        size += len(parts[-1]) + 2
        meeting += 1
    return "\n\n".join(parts)


@pytest.fixture
def megabytes(tmp_path: Path) -> Path:
    """The workspace of every scout case here."""
    root = tmp_path / "ws"
    build_workspace(
        root,
        {
            "PROFILE.md": "# Dr. Ada Test\nEcologist, leads the grant renewal.\n",
            "memory/global/lab-minutes.md": _minutes(NOTE_CHARS, ANSWER, ANSWER_AT),
            "files/minutes/funder-calls.md": _minutes(FILE_CHARS, FILE_ANSWER, FILE_ANSWER_AT),
        },
    )
    return root


READS_FILES = load_agent_definition(
    set_tool_enabled(default_agent_toml(), "workspace_read_file", True)
)
"""The shipped scout, allowed to read the workspace's files too."""

ROUTES: dict[str, dict[str, Any]] = {
    "declared 8,192 tokens, native tools": {"context_tokens": 8192},
    "declared 6,144 tokens, text tools, gathered first": {
        "context_tokens": 6144,
        "native_tool_calling": False,
        "small_model": True,
    },
    "no window declared (8,192 assumed)": {},
    "declared 32,768 tokens, streamed": {"context_tokens": 32_768, "stream": True},
}


def _bodies(server: OpenAITestServer) -> list[bytes]:
    return [r.body for r in server.requests if r.path == "/v1/chat/completions"]


def _within(bodies: list[bytes], window: int) -> None:
    assert bodies
    for index, body in enumerate(bodies):
        assert len(body) / 4 <= window, f"request {index}: {len(body):,} bytes"


def test_the_note_is_larger_than_any_window() -> None:
    """The megabyte note and the file: the answers far past what any window holds"""
    note = _minutes(NOTE_CHARS, ANSWER, ANSWER_AT)
    assert len(note) >= NOTE_CHARS
    assert note.index(ANSWER) > 32_768 * 4  # blind truncation to any window here loses it
    assert _minutes(FILE_CHARS, FILE_ANSWER, FILE_ANSWER_AT).index(FILE_ANSWER) > 8192 * 4


@pytest.mark.parametrize("case", list(ROUTES))
def test_every_scout_request_fits_the_window_and_holds_the_answer(
    megabytes: Path, case: str
) -> None:
    """A 1.5 MB note recalled over HTTP: every request within the window, the answer kept"""
    settings = ROUTES[case]
    with OpenAITestServer(model=OfflineScoutModel()) as server:
        route = ModelRoute(kind="openai", base_url=server.base_url, model="m", **settings)
        with OpenAICompatibleModel.from_route(route, bundle_format="text") as model:
            run = run_scout(REQUEST, workspace=Workspace(megabytes), model=model)
        bodies = _bodies(server)
    _within(bodies, settings.get("context_tokens", ASSUMED_TOKENS))
    last = bodies[-1].decode("utf-8")
    assert ANSWER in last
    assert "[cut: " in last and " passages kept]" in last
    if route.native_tool_calling:
        # The offline model behind the server reads tool results from tool messages only.
        assert run.envelope is not None and "250k EUR" in run.envelope, run.problems


def test_a_recall_and_a_file_read_in_one_reply_share_the_window(megabytes: Path) -> None:
    """A recall and a 100,000-character file read in one reply: both cut, both answers kept"""
    reads = [
        ("memory_recall", {"query": "grant renewal budget cap", "namespace": "*"}),
        ("workspace_read_file", {"path": "minutes/funder-calls.md", "max_chars": FILE_CHARS}),
    ]
    done = envelope(
        has_enough_context=True,
        summary=f"- {ANSWER} (memory: global/lab-minutes)",
    )
    scripted = [ScriptedResponse.reply(None, reads), ScriptedResponse.reply(done)]
    with OpenAITestServer(scripted) as server:
        route = ModelRoute(kind="openai", base_url=server.base_url, model="m", context_tokens=8192)
        with OpenAICompatibleModel.from_route(route, bundle_format="text") as model:
            run = run_scout(
                REQUEST, workspace=Workspace(megabytes), model=model, definition=READS_FILES
            )
        bodies = _bodies(server)
    _within(bodies, 8192)
    results = [m for m in json.loads(bodies[-1])["messages"] if m["role"] == "tool"]
    recall, read = (json.loads(m["content"]) for m in results)
    assert ANSWER in recall["hits"][0]["content"]
    assert recall["hits"][0]["content_cut"].startswith("[cut: 1.0 MB text, ")
    assert FILE_ANSWER in read["content"]
    assert read["content_cut"].startswith("[cut: 100 KB text, ")
    assert run.envelope is not None, run.problems


def test_the_orchestrators_history_is_trimmed_oldest_first(tmp_path: Path) -> None:
    """Sixty long turns before the message: the oldest left out, said, prompt and message kept"""
    transcript: list[Message] = []
    for turn in range(60):
        transcript.append(Message(role="user", content=f"Question {turn}: " + "why? " * 300))
        transcript.append(Message(role="assistant", content=f"Answer {turn}: " + "because. " * 200))
    scripted = [ScriptedResponse.reply("Orchestrator reply.")]
    with OpenAITestServer(scripted) as server:
        route = ModelRoute(kind="openai", base_url=server.base_url, model="m", context_tokens=4096)
        thread = Thread(
            Workspace(build_workspace(tmp_path / "ws")),
            scout_model=OfflineScoutModel(),
            orchestrator_model=OpenAICompatibleModel.from_route(route),
            transcript=transcript,
            super_context_enabled=False,
        )
        result = thread.send("And what did we say in question 59?")
        bodies = _bodies(server)
    _within(bodies, 4096)
    messages = json.loads(bodies[0])["messages"]
    assert messages[0]["role"] == "system"
    assert "orchestrator of a supercontext_lab thread" in messages[0]["content"]
    assert messages[-1]["content"] == result.sent_message
    assert "left out to fit the model's context window of 4,096 tokens" in messages[1]["content"]
    said = json.dumps(messages)
    assert "Question 59:" in said and "Answer 58:" in said  # the newest turns stay
    assert "Question 1:" not in said  # the oldest went first
    assert result.reply == "Orchestrator reply."
