"""The scripted test model and its helpers (tool_call_message, envelope)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.bundle.render import write_envelope
from supercontext_lab.errors import ModelError, ModelTimeoutError
from supercontext_lab.models.base import ChatModel, Message, ModelReply, ToolCall, ToolSpec, Usage
from supercontext_lab.testing import ScriptedCall, ScriptedModel, envelope, tool_call_message

RECALL = ToolSpec(name="memory_recall", description="Search the memory tree.")
ASK = [Message(role="system", content="s" * 40), Message(role="user", content="u" * 21)]


def test_text_step_becomes_an_assistant_message_with_estimated_usage() -> None:
    model = ScriptedModel(["x" * 10])
    reply = model.complete(ASK)
    assert reply == ModelReply(
        message=Message(role="assistant", content="x" * 10),
        usage=Usage(
            prompt_tokens=16, completion_tokens=3
        ),  # 61 chars / 4, 10 chars / 4, rounded up
        finish_reason="stop",
        model="scripted",
    )
    assert isinstance(model, ChatModel)
    assert model.name == "scripted"


def test_message_step_with_tool_calls() -> None:
    step = tool_call_message(("memory_recall", {"query": "Rome"}), ("list_workflows", "{}"))
    model = ScriptedModel([step], name="scout-script")
    reply = model.complete(ASK, tools=[RECALL])
    assert reply.message is step
    assert reply.finish_reason == "tool_calls"
    assert reply.model == "scout-script"
    assert reply.usage.completion_tokens == 12  # names and arguments: 13 + 17 + 14 + 2 = 46 chars


def test_model_reply_step_is_returned_as_given() -> None:
    given = ModelReply(Message("assistant", "hi"), Usage(100, 1), "length", "other")
    unnamed = ModelReply(Message("assistant", "hi"))
    model = ScriptedModel([given, unnamed], name="m")
    assert model.complete(ASK) is given
    assert model.complete(ASK) == ModelReply(Message("assistant", "hi"), model="m")


def test_callable_step_sees_messages_and_tools() -> None:
    seen: list[tuple[Sequence[Message], Sequence[ToolSpec] | None]] = []

    def step(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> str:
        seen.append((messages, tools))
        return f"{len(messages)} messages, tools: {[t.name for t in tools or ()]}"

    model = ScriptedModel([step, step])
    assert (
        model.complete(ASK, tools=[RECALL]).message.content
        == "2 messages, tools: ['memory_recall']"
    )
    assert model.complete(ASK[:1]).message.content == "1 messages, tools: []"
    assert seen == [(tuple(ASK), (RECALL,)), (tuple(ASK[:1]), None)]


def test_every_call_is_recorded() -> None:
    model = ScriptedModel(["a", "b"])
    model.complete(ASK, tools=[RECALL], tool_choice="none", temperature=0.3, timeout=12.0)
    model.complete(ASK[:1])
    assert model.calls == [
        ScriptedCall(tuple(ASK), (RECALL,), "none", 0.3, 12.0),
        ScriptedCall(tuple(ASK[:1]), None, None, None, None),
    ]
    with pytest.raises(AttributeError):
        model.calls[0].temperature = 1.0  # type: ignore[misc]


def test_exhausted_script_is_a_model_error() -> None:
    model = ScriptedModel(["only"])
    model.complete(ASK)
    with pytest.raises(ModelError, match=r"has no more steps \(it answered 1 calls\)"):
        model.complete(ASK)
    assert len(model.calls) == 2


@pytest.mark.parametrize(
    ("step", "problem"),
    [
        (Message(role="user", content="hi"), "is a 'user' message"),
        (lambda messages, tools: 42, "produced a int"),
    ],
)
def test_invalid_steps_are_model_errors(step: Any, problem: str) -> None:
    with pytest.raises(ModelError, match=problem):
        ScriptedModel([step]).complete(ASK)


def test_step_callables_may_raise_to_simulate_failures() -> None:
    def failing(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> str:
        raise ModelError("backend exploded")

    model = ScriptedModel([failing, "after"])
    with pytest.raises(ModelError, match="backend exploded"):
        model.complete(ASK)
    assert model.complete(ASK).message.content == "after"


def test_steps_may_come_from_a_generator() -> None:
    model = ScriptedModel(f"reply {i}" for i in range(3))
    assert [model.complete(ASK).message.content for _ in range(3)] == [
        "reply 0",
        "reply 1",
        "reply 2",
    ]


def test_on_text_gets_the_text_once() -> None:
    model = ScriptedModel(["streamed?", tool_call_message(("memory_recall", {}))])
    seen: list[str] = []
    model.complete(ASK, on_text=seen.append)
    model.complete(ASK, on_text=seen.append)
    assert seen == ["streamed?"]


def test_delay_simulates_latency() -> None:
    model = ScriptedModel(["slow"], delay_s=0.1)
    started = time.monotonic()
    assert model.complete(ASK, timeout=5).message.content == "slow"
    assert time.monotonic() - started >= 0.1


def test_delay_longer_than_the_timeout_raises_without_consuming_a_step() -> None:
    model = ScriptedModel(["kept"], delay_s=0.2)
    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match=r"more than the 0\.05 s allowed"):
        model.complete(ASK, timeout=0.05)
    elapsed = time.monotonic() - started
    assert 0.05 <= elapsed < 0.2
    assert model.complete(ASK).message.content == "kept"


def test_negative_delay_is_rejected() -> None:
    with pytest.raises(ValueError, match="delay_s"):
        ScriptedModel([], delay_s=-1)


def test_concurrent_calls_each_get_one_step() -> None:
    model = ScriptedModel([f"step {i}" for i in range(40)])
    results: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            text = model.complete(ASK).message.content or ""
            with lock:
                results.append(text)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results, key=lambda t: int(t.split()[1])) == [f"step {i}" for i in range(40)]
    assert len(model.calls) == 40


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        (
            (("memory_recall", {"query": "Rome"}),),
            (ToolCall("call_1", "memory_recall", '{"query": "Rome"}'),),
        ),
        (
            (("list_workflows", "{}"), ("web_fetch", '{"url": "u"}')),
            (
                ToolCall("call_1", "list_workflows", "{}"),
                ToolCall("call_2", "web_fetch", '{"url": "u"}'),
            ),
        ),
        ((), ()),
    ],
)
def test_tool_call_message_table(calls: tuple[Any, ...], expected: tuple[ToolCall, ...]) -> None:
    message = tool_call_message(*calls)
    assert message == Message(role="assistant", content=None, tool_calls=expected)


def test_tool_call_message_with_content() -> None:
    message = tool_call_message(("memory_recall", {}), content="Looking.")
    assert message.content == "Looking."
    assert message.tool_calls == (ToolCall("call_1", "memory_recall", "{}"),)


def test_envelope_exact_text() -> None:
    text = envelope(
        proposed_goal="Plan a spring trip to Rome",
        summary="Prefers trains (memory).\nMissing: dates",
        recommended_tool_calls=[
            {"tool": "calendar_search", "args": {"month": "April"}, "why": "find free days"}
        ],
        recommended_skills=[("trip-planner", True, "plans itineraries")],
    )
    assert text == (
        "[context_bundle]\n"
        "has_enough_context: true\n"
        "proposed_goal: Plan a spring trip to Rome\n"
        "summary:\n"
        "Prefers trains (memory).\n"
        "Missing: dates\n"
        "recommended_tool_calls:\n"
        "  - tool: calendar_search\n"
        '    args: {"month": "April"}\n'
        "    why: find free days\n"
        "recommended_skills:\n"
        "  - skill: trip-planner\n"
        "    installed: true\n"
        "    why: plans itineraries\n"
        "[/context_bundle]"
    )


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {},
            {
                "has_enough_context": True,
                "proposed_goal": None,
                "summary": "",
                "tools": [],
                "skills": [],
            },
        ),
        (
            {
                "has_enough_context": False,
                "proposed_goal": "Book a table",
                "summary": "Likes sushi (profile)",
            },
            {
                "has_enough_context": False,
                "proposed_goal": "Book a table",
                "summary": "Likes sushi (profile)",
                "tools": [],
                "skills": [],
            },
        ),
        (
            {
                "has_enough_context": None,
                "recommended_tool_calls": [("gmail_search", "from:anna", "find the thread")],
                "recommended_skills": [
                    {"skill": "mail-helper", "installed": False, "why": "drafts"}
                ],
            },
            {
                "has_enough_context": None,
                "proposed_goal": None,
                "summary": "",
                "tools": [("gmail_search", "from:anna", None)],
                "skills": [("mail-helper", False)],
            },
        ),
    ],
)
def test_envelope_parses_with_the_bundle_parser(
    fields: dict[str, Any], expected: dict[str, Any]
) -> None:
    bundle = parse_context_bundle(envelope(**fields))
    assert bundle is not None
    assert bundle.has_enough_context is expected["has_enough_context"]
    assert bundle.proposed_goal == expected["proposed_goal"]
    assert bundle.summary == expected["summary"]
    assert [(t.tool, t.args, t.args_json) for t in bundle.recommended_tool_calls] == expected[
        "tools"
    ]
    assert [(s.skill, s.installed) for s in bundle.recommended_skills] == expected["skills"]


def test_envelope_names_each_list_once() -> None:
    alias: dict[str, Any] = {"tool_calls": [("a", {}, "b")]}
    with pytest.raises(TypeError, match="tool_calls"):
        envelope(**alias)


def test_envelope_is_written_by_the_one_writer() -> None:
    fields: dict[str, Any] = {
        "has_enough_context": False,
        "proposed_goal": "Book a table",
        "summary": "- Likes sushi (profile)",
        "recommended_tool_calls": [("gmail_search", {"q": "anna"}, "find the thread")],
        "recommended_skills": [("mail-helper", False, "drafts")],
    }
    assert envelope(**fields) == write_envelope(
        has_enough_context=False,
        proposed_goal="Book a table",
        summary="- Likes sushi (profile)",
        tool_calls=[("gmail_search", '{"q": "anna"}', "find the thread")],
        skills=[("mail-helper", False, "drafts")],
    )


def test_testing_package_does_not_import_jupyter() -> None:
    code = (
        "import sys, supercontext_lab.testing\n"
        "bad = [m for m in ('IPython', 'ipywidgets', 'jupyter_server', 'ipykernel') if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
