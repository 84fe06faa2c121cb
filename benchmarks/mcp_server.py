"""The MCP server's ``prepare_context`` with the ``pack`` design, measured by the SDK's client.

On the shipped demo workspace (its copy in a private lab home), three ways to the same
pre-flight, measured in one run, one after the other, on the harness benchmark's six
first messages:

* **stdio** (the target): ``python -m supercontext_lab mcp --workspace DEMO --design
  pack`` launched by the SDK's ``stdio_client`` as an MCP host launches it; the time of
  ``ClientSession.call_tool("prepare_context", ...)``, request to parsed result;
* **in-memory MCP**: the same server in this process, through the SDK's in-memory
  streams: what the protocol costs without a pipe or a second process;
* **in-process** (the named peer): the same pack built by
  :meth:`~supercontext_lab.mcp_server.ContextService.prepare`, no MCP at all.

Also over stdio: eight ``prepare_context`` calls at once (wall time) and one 1 MB message
(the pre-flight reads its first 8,000 characters).

``python -m benchmarks mcp [--repeats 60] [--warmup 5]`` prints one Markdown table with
the target's verdict and the stdio / in-process ratio. Needs the ``mcp`` extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .harness_overhead import MESSAGES
from .report import MISS, judge
from .stats import Summary, fmt_ms, summarize

__all__ = ["TARGET_P50_MS", "main"]

TARGET_P50_MS = 50.0
_BIG = MESSAGES[0] + " " + "the travel budget of the grant renewal " * 26_000  # > 1 MB


async def _timed(
    call: Callable[[str], Awaitable[Any]], repeats: int, warmup: int
) -> tuple[list[float], list[Any]]:
    """Seconds per call of ``call`` on the messages in turn, after ``warmup`` calls."""
    for index in range(warmup):
        await call(MESSAGES[index % len(MESSAGES)])
    samples, results = [], []
    for index in range(repeats):
        started = time.perf_counter()
        results.append(await call(MESSAGES[index % len(MESSAGES)]))
        samples.append(time.perf_counter() - started)
    return samples, results


async def _over_stdio(root: Path, repeats: int, warmup: int) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "supercontext_lab", "mcp", "--workspace", str(root), "--design", "pack"],
        env=dict(os.environ),  # the run's private lab home
        cwd=str(Path(__file__).resolve().parents[1]),
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            started = time.perf_counter()
            await session.initialize()
            initialized = time.perf_counter() - started

            async def call(message: str) -> Any:
                return await session.call_tool("prepare_context", {"message": message})

            samples, results = await _timed(call, repeats, warmup)
            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for index in range(8):
                    group.start_soon(call, MESSAGES[index % len(MESSAGES)])
            concurrent = time.perf_counter() - started
            started = time.perf_counter()
            big = await call(_BIG)
            big_s = time.perf_counter() - started
    return {
        "samples": samples,
        "prepared": sum(1 for r in results if _structured(r).get("prepared")),
        "initialize_s": initialized,
        "concurrent_s": concurrent,
        "big_s": big_s,
        "big_read": _structured(big).get("read_chars"),
    }


def _memory_session(server: Any) -> Any:
    """The SDK's in-process client of ``server``: 2.x's ``Client``, 1.x's memory streams."""
    try:
        from mcp import Client  # type: ignore[attr-defined]
    except ImportError:
        from mcp.shared.memory import create_connected_server_and_client_session

        return create_connected_server_and_client_session(server)
    return Client(server)


def _structured(result: Any) -> dict[str, Any]:
    """A tool result's structured content, by its wire name (both SDK lines have it)."""
    data = result.model_dump(by_alias=True).get("structuredContent")
    return data if isinstance(data, dict) else {}


async def _in_memory(root: Path, repeats: int, warmup: int) -> list[float]:
    from supercontext_lab.mcp_server import ContextService, build_server

    server = build_server(ContextService(root, design="pack"))
    async with _memory_session(server) as session:

        async def call(message: str) -> Any:
            return await session.call_tool("prepare_context", {"message": message})

        samples, _ = await _timed(call, repeats, warmup)
    return samples


def _in_process(root: Path, repeats: int, warmup: int) -> list[float]:
    from supercontext_lab.mcp_server import ContextService

    service = ContextService(root, design="pack")
    for index in range(warmup):
        service.prepare(MESSAGES[index % len(MESSAGES)])
    samples = []
    for index in range(repeats):
        started = time.perf_counter()
        service.prepare(MESSAGES[index % len(MESSAGES)])
        samples.append(time.perf_counter() - started)
    return samples


def _row(name: str, summary: Summary) -> str:
    return (
        f"| {name} | {fmt_ms(summary.median)} | {fmt_ms(summary.p95)} | "
        f"{fmt_ms(summary.p5)}–{fmt_ms(summary.p95)} | {summary.n} |"
    )


def main(argv: list[str], log: Callable[[str], None]) -> int:
    """Run the benchmark (see the module docstring); print its table; exit 0 unless it
    could not run."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks mcp")
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError:
        log('the mcp benchmark needs the mcp extra: pip install "supercontext-lab[mcp]"')
        return 2
    from supercontext_lab.sources.demo import demo_workspace_path

    root = demo_workspace_path()
    load_before = os.getloadavg()[0]
    log(f"mcp: {args.repeats} prepare_context calls over stdio on {root}")
    stdio = anyio.run(_over_stdio, root, args.repeats, args.warmup)
    log("mcp: the same through the SDK's in-memory streams, then in-process")
    memory = summarize(anyio.run(_in_memory, root, args.repeats, args.warmup))
    local = summarize(_in_process(root, args.repeats, args.warmup))
    over = summarize(stdio["samples"])
    ratio = over.median / local.median if local.median > 0 else float("inf")
    all_prepared = stdio["prepared"] == over.n
    verdict = judge(over.median * 1000, TARGET_P50_MS, at_most=True) if all_prepared else MISS
    rows = [
        "| `prepare_context`, design pack, demo workspace | p50 | p95 | p5–p95 | n |",
        "| --- | --- | --- | --- | --- |",
        _row("MCP over stdio (SDK client, separate process)", over),
        _row("MCP in-memory (SDK client, same process)", memory),
        _row("in-process `ContextService.prepare` (peer, no MCP)", local),
    ]
    print("\n".join(rows))
    print()
    print(
        f"Target p50 ≤ {TARGET_P50_MS:g} ms over stdio: **{verdict}** "
        f"(p50 {fmt_ms(over.median)}; {stdio['prepared']}/{over.n} prepared). "
        f"stdio / in-process: {ratio:.2f}× the in-process pack's p50, in the same run."
    )
    print(
        f"Also over stdio: initialize {fmt_ms(stdio['initialize_s'])}; eight calls at once "
        f"{fmt_ms(stdio['concurrent_s'])} wall; a {len(_BIG):,}-character message "
        f"{fmt_ms(stdio['big_s'])} (the pre-flight read {stdio['big_read']:,} characters)."
    )
    print(
        f"Load average {load_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
        f"({os.cpu_count()} CPUs)."
    )
    return 0
