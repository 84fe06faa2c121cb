"""The budget of a request: the model's window, less the reply's room, at four bytes a token."""

from __future__ import annotations

import httpx
import pytest

from supercontext_lab.models.base import CHARS_PER_TOKEN, Message, ModelInfo, ToolSpec
from supercontext_lab.models.window import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_REPLY_TOKENS,
    ROUND_SHARE,
    ContextBudget,
    conversation_bytes,
    payload_bytes,
    tokens_in,
)


def test_a_declared_window_is_the_budgets() -> None:
    budget = ContextBudget.of(ModelInfo(context_tokens=32_768))
    assert (budget.window, budget.reply, budget.declared) == (32_768, DEFAULT_REPLY_TOKENS, True)
    assert budget.prompt_tokens == 32_768 - DEFAULT_REPLY_TOKENS
    assert budget.prompt_bytes == budget.prompt_tokens * CHARS_PER_TOKEN


@pytest.mark.parametrize("declared", [None, 0, -5])
def test_an_unknown_window_is_the_conservative_default(declared: int | None) -> None:
    budget = ContextBudget.of(ModelInfo(context_tokens=declared))
    assert (budget.window, budget.declared) == (DEFAULT_CONTEXT_TOKENS, False)
    assert DEFAULT_CONTEXT_TOKENS == 8192


def test_the_reply_keeps_the_requests_max_tokens_up_to_a_quarter_of_the_window() -> None:
    assert ContextBudget.of(ModelInfo(context_tokens=8192), 96).reply == 96
    assert ContextBudget.of(ModelInfo(context_tokens=8192), 6000).reply == 2048
    assert ContextBudget.of(ModelInfo(context_tokens=2048)).reply == 512
    assert ContextBudget.of(ModelInfo(context_tokens=8192), 0).reply == DEFAULT_REPLY_TOKENS


def test_payload_bytes_are_the_bytes_httpx_sends() -> None:
    payload = {"model": "m", "messages": [{"role": "user", "content": 'Grüße, 東京 "quoted"\n'}]}
    sent = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions", json=payload)
    assert payload_bytes(payload) == len(sent.content)


def test_tokens_are_four_bytes_rounded_up() -> None:
    assert [tokens_in(size) for size in (0, 1, 4, 5, 4000)] == [0, 1, 1, 2, 1000]


def test_a_round_may_take_a_share_of_the_room_left() -> None:
    budget = ContextBudget.of(ModelInfo(context_tokens=4096))
    messages = [Message(role="system", content="s" * 2000), Message(role="user", content="hi")]
    tools = [ToolSpec("memory_recall", "Search the memory tree.")]
    left = budget.prompt_bytes - conversation_bytes(messages, tools)
    assert budget.round_room(messages, tools) == int(left * ROUND_SHARE)
    full = [Message(role="system", content="s" * budget.prompt_bytes)]
    assert budget.round_room(full) == 0


def test_the_reliability_suite_holds_routes_to_the_same_default() -> None:
    from tests.reliability.test_model_request_bounds import ASSUMED_TOKENS

    assert ASSUMED_TOKENS == DEFAULT_CONTEXT_TOKENS
