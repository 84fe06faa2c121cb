"""What the Jupyter AI persona adds before the reply starts (the ``jupyter-ai`` extra).

With ``[preflight] design = "pack"`` in the lab's config and the offline models, on the
shipped demo workspace (copied and indexed by warm-up turns), it times, for each of the
harness benchmark's first messages, from the message handed to the persona to the first
piece of the reply it streams into the chat:

* **persona, pack**: a new chat's first message through ``SupercontextPersona``: the
  history read, the pre-flight, the bundle message posted, the reply started;
* **persona, pre-flight off**: the same persona in a chat that said ``/preflight off``;
* **the orchestrator reply alone** (the peer): ``Thread(design="cold").send`` with no
  chat, to the first piece of its reply;
* **the Thread with the pack**: ``Thread(design="pack").send`` with no chat, which splits
  the persona's time into the pre-flight's and the chat's.

The persona's added time is its p50 minus the peer's p50 (target ≤ 100 ms), reported
with the ratio of the two. The chat is jupyterlab-chat's own ``YChat`` in this process
(no server, no WebSocket: those cost the same with or without the persona).

``python -m benchmarks persona [--repeats 30]`` prints one table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from .harness_overhead import MESSAGES

__all__ = ["TARGET_ADDED_MS", "main"]

TARGET_ADDED_MS = 100.0


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _persona_class() -> Any:
    from supercontext_lab.lab.persona import SupercontextPersona

    class Timed(SupercontextPersona):  # type: ignore[misc]
        """The persona, noting when the first piece of its reply reaches the chat."""

        first_piece: float | None = None

        async def stream_message(self, reply_stream: AsyncIterator[Any]) -> None:
            async def timed() -> AsyncIterator[Any]:
                async for piece in reply_stream:
                    if self.first_piece is None and piece:
                        self.first_piece = time.perf_counter()
                    yield piece

            await super().stream_message(timed())

    return Timed


async def _persona_turn(cls: Any, workspace: str, message: str, off: bool) -> float:
    from jupyterlab_chat.models import NewMessage
    from jupyterlab_chat.ychat import YChat

    chat = YChat()
    persona = cls(chat=chat, workspace=workspace)
    if off:
        chat.add_message(NewMessage(body="/preflight off", sender="user"))
    message_id = chat.add_message(NewMessage(body=message, sender="user"))
    current = chat.get_message(message_id)
    started = time.perf_counter()
    await persona.process_message(current)
    assert persona.first_piece is not None, "the persona streamed no reply"
    bodies = [m.body for m in chat.get_messages() if m.sender == persona.id]
    assert off or bodies[0].startswith("**Pre-flight** (pack"), bodies[:1]
    return (persona.first_piece - started) * 1000.0


def _thread_alone(workspace: str, message: str, design: str) -> float:
    from supercontext_lab.harness import Thread

    first: list[float] = []

    def on_text(piece: str) -> None:
        if not first and piece:
            first.append(time.perf_counter())

    started = time.perf_counter()
    Thread(workspace, design=design, archive=False).send(message, on_text=on_text)
    return (first[0] - started) * 1000.0


def main(argv: list[str], log: Callable[[str], None]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks persona")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    from supercontext_lab.config import set_setting
    from supercontext_lab.sources.demo import demo_workspace_path

    set_setting("preflight.design", "pack")
    workspace = str(demo_workspace_path())
    cls = _persona_class()
    load_before = os.getloadavg()[0]
    samples: dict[str, list[float]] = {"pack": [], "off": [], "peer": [], "thread": []}
    for round_ in range(args.repeats + 1):  # round 0 warms up (copy, index, imports)
        message = MESSAGES[round_ % len(MESSAGES)]
        pack = asyncio.run(_persona_turn(cls, workspace, message, off=False))
        off = asyncio.run(_persona_turn(cls, workspace, message, off=True))
        peer = _thread_alone(workspace, message, "cold")
        thread = _thread_alone(workspace, message, "pack")
        if round_:
            samples["pack"].append(pack)
            samples["off"].append(off)
            samples["peer"].append(peer)
            samples["thread"].append(thread)
    log(f"{args.repeats} rounds of {len(MESSAGES)} messages")
    p50 = {name: statistics.median(values) for name, values in samples.items()}
    added = p50["pack"] - p50["peer"]
    verdict = "meets" if added <= TARGET_ADDED_MS else "MISSES"
    rows = [
        ("the orchestrator reply alone (peer), p50 / p95", "peer"),
        ("the Thread with the pack, no chat, p50 / p95", "thread"),
        ("persona, pre-flight off, p50 / p95", "off"),
        ("persona, pack, p50 / p95", "pack"),
    ]
    print("| to the first piece of the reply | value |\n| --- | --- |")
    for label, name in rows:
        values = samples[name]
        print(f"| {label} | {p50[name]:.1f} ms / {_percentile(values, 0.95):.1f} ms |")
    print(
        f"| added by the persona with pack (p50 − peer p50) | {added:.1f} ms, "
        f"{p50['pack'] / p50['peer']:.1f}× the peer ({verdict} the ≤ "
        f"{TARGET_ADDED_MS:.0f} ms target) |"
    )
    print(
        f"| load average (1 min) at the start / end | {load_before:.1f} / "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores |"
    )
    return 0 if added <= TARGET_ADDED_MS else 1
