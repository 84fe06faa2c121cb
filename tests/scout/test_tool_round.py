"""One round of tool calls: refused or run side by side, in order, within the run's time,
and what the model is sent of them fitted to its window."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

from pydantic import BaseModel

from supercontext_lab._json import to_json
from supercontext_lab.models.base import ToolCall
from supercontext_lab.reading.relevance import request_terms
from supercontext_lab.scout.tool_round import fit_answers, run_tool_calls, tool_pool
from supercontext_lab.tools.base import NoArgs, ToolRegistry, ToolResult, make_tool


def _registry(release: threading.Event) -> ToolRegistry:
    def quick(_: BaseModel) -> ToolResult:
        return ToolResult.success({"ok": 1})

    def stuck(_: BaseModel) -> ToolResult:
        release.wait(5)
        return ToolResult.success({"late": 1})

    def writes(_: BaseModel) -> ToolResult:
        raise AssertionError("a tool that is not read-only must never run")

    return ToolRegistry(
        [
            make_tool("quick", "answers at once", NoArgs, quick),
            make_tool("stuck", "answers after the run's time", NoArgs, stuck),
            make_tool("writes", "not read-only", NoArgs, writes, read_only=False),
        ]
    )


def _clock() -> Callable[[], float]:
    """A run's clock: milliseconds since it was made."""
    started = time.perf_counter()
    return lambda: (time.perf_counter() - started) * 1000.0


def test_refused_calls_are_answered_and_never_run() -> None:
    release = threading.Event()
    now_ms = _clock()
    calls = [
        ToolCall("1", "writes"),
        ToolCall("2", "quick"),
        ToolCall("3", "absent"),
        ToolCall("4", "quick"),
    ]
    outcomes = run_tool_calls(
        calls,
        registry=_registry(release),
        allowlist=["quick", "writes", "absent"],
        remaining=lambda: 5.0,
        now_ms=now_ms,
    )
    assert [o.refused for o in outcomes] == [True, False, True, False]
    assert "not read-only" in outcomes[0].result.content
    assert "no such tool" in outcomes[2].result.content
    assert [o.result.ok for o in outcomes] == [False, True, False, True]
    assert all(o.duration_ms >= 0 and o.started_ms >= 0 for o in outcomes)


def test_a_call_outside_the_allowlist_is_refused_by_name() -> None:
    now_ms = _clock()
    (outcome,) = run_tool_calls(
        [ToolCall("1", "quick")],
        registry=_registry(threading.Event()),
        allowlist=["stuck"],
        remaining=lambda: 5.0,
        now_ms=now_ms,
    )
    assert outcome.refused and "allowlist (stuck)" in outcome.result.content


def test_a_read_past_the_time_left_is_abandoned_not_awaited() -> None:
    release = threading.Event()
    now_ms = _clock()
    started = time.perf_counter()
    try:
        outcomes = run_tool_calls(
            [ToolCall("1", "stuck"), ToolCall("2", "quick")],
            registry=_registry(release),
            allowlist=["stuck", "quick"],
            remaining=lambda: 0.2,
            now_ms=now_ms,
        )
        waited = time.perf_counter() - started
    finally:
        release.set()
    assert waited < 3.0, waited
    late, quick = outcomes
    assert not late.result.ok and not late.refused and late.late and not quick.late
    assert "did not finish before the scout's time ran out" in late.result.content
    assert quick.result.ok
    assert tool_pool().submit(lambda: "free").result(timeout=5) == "free"


def test_a_round_fits_its_room_the_short_answers_whole() -> None:
    answer = "The grant renewal budget is capped at 250k EUR."
    minutes = "\n\n".join(
        [*(f"Meeting {i}: the lab talked about freezers." for i in range(5_000)), answer]
    )
    calls = [ToolCall(id="call_1", name="memory_recall"), ToolCall(id="call_2", name="list")]
    contents = [json.dumps({"hits": [{"content": minutes}]}), json.dumps({"skills": []})]
    sent = fit_answers(calls, contents, 6_000, request_terms("What is the grant budget cap?"))
    assert [(m.role, m.tool_call_id, m.name) for m in sent] == [
        ("tool", "call_1", "memory_recall"),
        ("tool", "call_2", "list"),
    ]
    assert sent[1].content == contents[1]
    hit = json.loads(sent[0].content or "")["hits"][0]
    assert answer in hit["content"]
    assert hit["content_cut"].startswith("[cut: ")
    assert sum(len(to_json(m.to_openai())) for m in sent) <= 6_000
