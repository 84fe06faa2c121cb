"""Fitting a request into a model's window: tool results cut to passages, history trimmed."""

from __future__ import annotations

import json
import logging

import pytest

from supercontext_lab._json import to_json
from supercontext_lab.errors import ModelError
from supercontext_lab.models.base import Message, ModelInfo, ToolCall
from supercontext_lab.models.choices import BundleChoices
from supercontext_lab.models.fitting import fit_content, fit_request, fit_shares, fit_texts
from supercontext_lab.models.request import ChatRequest, RequestBuilder
from supercontext_lab.models.window import ContextBudget, payload_bytes
from supercontext_lab.reading.relevance import request_terms

from .support import Recorder, make, ok

ANSWER = "The grant renewal budget is capped at 250k EUR; travel stays under 8 percent of it."
FILLER = "The weekly lab meeting covered freezer inventory and pipette calibration. "
NOTE = "\n\n".join([*(f"Meeting {i}: {FILLER}" for i in range(3000)), ANSWER])
ASKED = "What is the grant renewal budget cap?"
REQUEST = request_terms(ASKED)


def _recall(*contents: str) -> str:
    hits = [{"namespace": "global", "key": f"n{i}", "content": c} for i, c in enumerate(contents)]
    return json.dumps({"query": "grant budget", "hits": hits}, ensure_ascii=False)


def test_shares_keep_the_small_whole_and_split_the_rest() -> None:
    assert fit_shares([100, 5000, 9000], 3100) == [100, 1500, 1500]
    assert fit_shares([10, 20], 1000) == [10, 20]
    assert fit_shares([10, 20], -5) == [0, 0]


def test_content_that_fits_is_untouched() -> None:
    text = _recall("short note")
    assert fit_content(text, 10_000, REQUEST) is text


def test_a_recall_stays_json_with_the_answer_and_the_cut_beside_it() -> None:
    text = _recall("The sourdough starter is fed at 8am.", NOTE)
    fitted = fit_content(text, 3_000, REQUEST)
    assert len(fitted.encode()) <= 3_000
    data = json.loads(fitted)
    short, long = data["hits"]
    assert short["content"] == "The sourdough starter is fed at 8am."
    assert "content_cut" not in short
    assert ANSWER in long["content"]
    assert "[cut:" not in long["content"]  # what a model quotes is the note's own words
    assert long["content_cut"].startswith("[cut: ")


def test_multibyte_text_is_held_to_bytes_not_characters() -> None:
    note = "\n\n".join(
        f"会議 {i}: 冷凍庫の在庫とピペットの校正について話した。" for i in range(5000)
    )
    fitted = fit_content(_recall(note), 2_000, request_terms("ピペット"))
    assert len(fitted.encode("utf-8")) <= 2_000
    json.loads(fitted)


def test_plain_text_is_cut_to_passages_with_the_marker_last() -> None:
    fitted = fit_content(NOTE, 1_500, REQUEST)
    assert ANSWER in fitted
    assert fitted.splitlines()[-1].startswith("[cut: ")
    assert len(fitted.encode()) <= 1_500


def test_a_long_listing_keeps_its_first_items_and_says_so() -> None:
    listing = json.dumps({"files": [f"folder/file-{i:04}.md" for i in range(2_000)]})
    fitted = json.loads(fit_content(listing, 1_000, REQUEST))
    assert fitted["files"][0] == "folder/file-0000.md"
    assert fitted["files"][-1].startswith("[cut: ")
    assert fitted["files"][-1].endswith(" of 2000 items kept]")


def _conversation(turns: int, size: int) -> list[Message]:
    messages = [
        Message(role="system", content="You are the orchestrator."),
        Message(role="user", content="First question of the thread."),
    ]
    for i in range(turns):
        messages.append(Message(role="assistant", content=f"Answer {i}: " + "x" * size))
        messages.append(Message(role="user", content=f"Question {i + 1}?"))
    return messages


def _fit(messages: list[Message], window: int, **kw: object) -> tuple[ChatRequest, dict]:
    builder = RequestBuilder(model="m")
    request = ChatRequest(tuple(messages), **kw)  # type: ignore[arg-type]
    return fit_request(request, builder.payload, ModelInfo(context_tokens=window))


def test_a_request_that_fits_is_sent_as_it_is() -> None:
    messages = _conversation(2, 100)
    request, payload = _fit(messages, 8192)
    assert list(request.messages) == messages
    assert payload == RequestBuilder(model="m").payload(ChatRequest(tuple(messages)))


def test_history_is_trimmed_oldest_first_keeping_the_prompt_and_the_newest() -> None:
    messages = _conversation(40, 2_000)
    request, payload = _fit(messages, 4096)
    budget = ContextBudget.of(ModelInfo(context_tokens=4096))
    assert payload_bytes(payload) <= budget.prompt_bytes
    kept = list(request.messages)
    assert kept[0] == messages[0]
    assert kept[1].content is not None
    assert kept[1].content.startswith("First question of the thread.")
    assert "earlier messages" in kept[1].content
    assert "left out to fit the model's context window of 4,096 tokens" in kept[1].content
    assert kept[-1] == messages[-1]
    assert kept[-2] == messages[-2]
    assert "Answer 0:" not in json.dumps(payload)  # the oldest went first


def test_a_call_and_its_tool_results_leave_together() -> None:
    call = ToolCall(id="call_1", name="memory_recall", arguments="{}")
    messages = [
        Message(role="system", content="You are a scout."),
        Message(role="user", content="Task."),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="r" * 20_000, tool_call_id="call_1", name="memory_recall"),
        Message(role="assistant", content="more", tool_calls=(ToolCall("call_2", "x"),)),
        Message(role="tool", content="small", tool_call_id="call_2", name="x"),
    ]
    request, _ = _fit(messages, 4096)
    ids = [m.tool_call_id for m in request.messages if m.role == "tool"]
    calls = [c.id for m in request.messages for c in m.tool_calls]
    assert ids == calls == ["call_2"]


def test_the_newest_tool_result_is_cut_to_the_passages_the_request_asks_for() -> None:
    call = ToolCall(id="call_1", name="memory_recall", arguments="{}")
    messages = [
        Message(role="system", content="You are a scout."),
        Message(role="user", content="[Request]\n" + ASKED),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content=_recall(NOTE), tool_call_id="call_1", name="memory_recall"),
    ]
    request, payload = _fit(messages, 2048, choices=BundleChoices(request=ASKED))
    assert payload_bytes(payload) <= ContextBudget.of(ModelInfo(context_tokens=2048)).prompt_bytes
    hit = json.loads(request.messages[-1].content or "")["hits"][0]
    assert ANSWER in hit["content"]


def test_a_system_prompt_larger_than_a_declared_window_is_refused() -> None:
    messages = [Message(role="system", content="s" * 40_000), Message(role="user", content="hi")]
    with pytest.raises(ModelError, match=r"context window of 4,096 tokens.*context_tokens"):
        _fit(messages, 4096)


def test_an_assumed_window_sends_what_cannot_be_cut_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    messages = [Message(role="system", content="s" * 40_000), Message(role="user", content="hi")]
    builder = RequestBuilder(model="m")
    with caplog.at_level(logging.WARNING):
        request, _ = fit_request(ChatRequest(tuple(messages)), builder.payload, ModelInfo())
    assert list(request.messages) == messages
    assert "context window is not known" in caplog.text


def test_the_client_sends_no_request_larger_than_its_window() -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder, declared=ModelInfo(context_tokens=2048))
    call = ToolCall(id="call_1", name="memory_recall", arguments="{}")
    model.complete(
        [
            Message(role="system", content="You are a scout."),
            Message(role="user", content=ASKED),
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", content=_recall(NOTE), tool_call_id="call_1"),
        ]
    )
    sent = recorder.requests[0].content
    assert len(sent) / 4 <= 2048
    assert ANSWER in json.loads(sent)["messages"][-1]["content"]


def test_texts_share_a_room_weighed_as_json_strings() -> None:
    small = _recall("The sourdough starter is fed at 8am.")
    texts = [small, _recall(NOTE), _recall(NOTE.replace("Meeting", "Sitzung"))]
    fitted = fit_texts(texts, 6_000, REQUEST)
    assert fitted[0] == small
    assert all(ANSWER in text for text in fitted[1:])
    assert sum(len(to_json(text).encode()) for text in fitted) <= 6_000


def test_the_request_itself_is_not_ranked_against_itself() -> None:
    asked = NOTE
    kept = fit_texts([asked], 1_000, REQUEST, asked=asked)[0]
    assert kept.startswith("Meeting 0: ")  # its opening, not the passage on the request
