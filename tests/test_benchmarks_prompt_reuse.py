"""The prompt-reuse benchmark reads the server's prefix-match lines per request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.prompt_reuse import _Metered
from supercontext_lab.models.base import Message
from supercontext_lab.testing import ScriptedModel


def test_each_request_counts_the_tokens_its_server_reused(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("loading...\n", encoding="utf-8")
    lines = iter(["", "Llama.generate: 120 prefix-match hit, remaining 30 prompt tokens to eval\n"])

    def step(messages: Any, tools: Any) -> str:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(next(lines))
        return "ok"

    metered = _Metered(ScriptedModel([step, step]), log)
    ask = [Message(role="user", content="x" * 40)]
    metered.complete(ask)
    metered.turn = 2
    metered.complete(ask)
    first, second = metered.requests
    assert (first.turn, first.hit) == (1, 0) and first.prompt > 0
    assert (second.turn, second.hit, second.prompt) == (2, 120, 150)
