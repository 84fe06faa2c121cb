"""Pre-flight designs and the pre-turn deadline (SPEC §16), with the offline models.

* **pack**: a fresh ``Thread(design="pack")`` per repeat sends one of the harness
  benchmark's messages on the demo workspace (copied and indexed by a warm-up turn);
  ``TurnResult.timings_ms["preparation_ms"]`` is the pre-flight: the gathering round,
  the ranking, the fitting, the writing and the grounding check, no model call.
* **cached**: the same with ``design="cached"`` once the cached envelope is built: the
  first turn checks the workspace's fingerprint and serves the stored envelope. A
  rebuild (a note changed) is measured apart.
* **prefetch**: what the ``prefetch`` design adds to a live turn, against ``cold`` in the
  same run. For each repeat a ``prefetch`` thread and a ``cold`` thread (alternating which
  goes first) send a first message, then a second one; on the second turn the harness's
  own time is the turn's wall time less the orchestrator's (the pre-flight, the prepared
  block, the bookkeeping and, for ``prefetch``, starting the next turn's lookup). Measured
  once with the first turn's lookup given the time a user takes to type ("settled", the
  target) and once sent back to back while it still runs on the same cores.
* **deadline**: an OpenAI-compatible server on 127.0.0.1 serves the offline scout with a
  five-second delay per answer, so every scout misses its deadline. For each deadline,
  ``preparation_ms`` minus the deadline is how late the pre-flight ended (the pack is
  written while the scout runs), and the time until the abandoned scout's worker thread
  ended says what it left behind after the deadline.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from .harness_overhead import MESSAGES
from .report import MISS, Section, Target, judge, markdown_table
from .stats import Summary, fmt_ms, summarize

__all__ = ["DEADLINES_MS", "run"]

TARGET_PACK_P95_MS = 50.0
TARGET_CACHED_MS = 10.0
TARGET_OVERSHOOT_MS = 100.0
TARGET_PREFETCH_ADDED_MS = 5.0
DEADLINES_MS = (300.0, 1000.0)
_SLOW_S = 5.0


def _turns(design: str, repeats: int, warmup: int) -> tuple[list[float], dict[str, int]]:
    from supercontext_lab import Thread

    for i in range(warmup):
        Thread(design=design, super_context_enabled=True, record_recalls=False, archive=False).send(
            MESSAGES[i % len(MESSAGES)]
        )
    samples: list[float] = []
    prepared_by: dict[str, int] = {}
    for i in range(repeats):
        thread = Thread(
            design=design, super_context_enabled=True, record_recalls=False, archive=False
        )
        result = thread.send(MESSAGES[i % len(MESSAGES)])
        samples.append(float(result.timings_ms["preparation_ms"]) / 1000.0)
        key = result.prepared_by or str(result.reason)
        prepared_by[key] = prepared_by.get(key, 0) + 1
    return samples, prepared_by


def _live_turns(repeats: int, warmup: int, *, settle: bool) -> dict[str, Any]:
    """The second turn of ``prefetch`` and ``cold`` threads: the harness's time on it (the
    wall time less the orchestrator's), its part before the orchestrator (the pre-flight)
    and its part after the reply (the bookkeeping, starting the next lookup), in seconds."""
    from supercontext_lab import Thread
    from supercontext_lab.harness.prefetch import shared_cache

    out: dict[str, Any] = {"prepared_by": {}}
    for design in ("prefetch", "cold"):
        out[design], out[f"{design}_preparation"], out[f"{design}_after"] = [], [], []
    for i in range(warmup + repeats):
        for design in ("prefetch", "cold") if i % 2 == 0 else ("cold", "prefetch"):
            # Nothing left from another thread runs beside the turn measured.
            shared_cache().wait(10.0)
            thread = Thread(
                design=design, super_context_enabled=True, record_recalls=False, archive=False
            )
            thread.send(MESSAGES[i % len(MESSAGES)])
            if settle:
                thread.wait_for_prefetch(10.0)
            started = time.perf_counter()
            result = thread.send(MESSAGES[(i + 1) % len(MESSAGES)])
            wall = time.perf_counter() - started
            thread.close()
            if i < warmup:
                continue
            before = result.timings_ms["preparation_ms"] / 1000.0
            out[design].append(wall - result.timings_ms["orchestrator_ms"] / 1000.0)
            out[f"{design}_preparation"].append(before)
            out[f"{design}_after"].append(wall - result.timings_ms["total_ms"] / 1000.0)
            if design == "prefetch":
                key = result.prepared_by or str(result.reason)
                out["prepared_by"][key] = out["prepared_by"].get(key, 0) + 1
    shared_cache().wait(10.0)
    out["left_running"] = len(shared_cache().outstanding())
    return out


def _added(turns: dict[str, Any]) -> tuple[Summary, Summary, float, float]:
    """The prefetch and cold summaries, and what prefetch adds at p50 and p95 (ms)."""
    mine, cold = summarize(turns["prefetch"]), summarize(turns["cold"])
    return mine, cold, (mine.median - cold.median) * 1000.0, (mine.p95 - cold.p95) * 1000.0


def _rebuild(repeats: int) -> Summary:
    """The cached envelope served right after a note changed (so it is rebuilt first)."""
    from supercontext_lab.harness.cached import serve_cached
    from supercontext_lab.sources.demo import open_workspace

    workspace = open_workspace(None)
    note = workspace.root / "memory" / "global" / "bench-preflight.md"
    samples = []
    try:
        for i in range(repeats):
            note.write_text(f"A note written by the benchmark, version {i}.\n", encoding="utf-8")
            stamp = time.time() + i + 1
            os.utime(note, (stamp, stamp))
            started = time.perf_counter()
            served = serve_cached(workspace)
            samples.append(time.perf_counter() - started)
            assert served.rebuilt
    finally:
        note.unlink(missing_ok=True)
        serve_cached(workspace)
    return summarize(samples)


def _deadlines(deadlines: Sequence[float], repeats: int) -> list[dict[str, Any]]:
    from supercontext_lab import Thread
    from supercontext_lab.harness.deadline import outstanding
    from supercontext_lab.models.offline import OfflineOrchestratorModel, OfflineScoutModel
    from supercontext_lab.models.openai import OpenAICompatibleModel
    from supercontext_lab.testing import OpenAITestServer

    rows = []
    with OpenAITestServer(model=OfflineScoutModel(), delay_s=_SLOW_S) as server:
        for deadline in deadlines:
            over: list[float] = []
            left: list[float] = []
            fallbacks: dict[str, int] = {}
            for i in range(repeats):
                model = OpenAICompatibleModel(base_url=server.base_url, model="slow", max_retries=0)
                thread = Thread(
                    scout_model=model,
                    orchestrator_model=OfflineOrchestratorModel(),
                    super_context_enabled=True,
                    deadline_ms=deadline,
                    record_recalls=False,
                    archive=False,
                )
                started = time.perf_counter()
                result = thread.send(MESSAGES[i % len(MESSAGES)])
                over.append((result.timings_ms["preparation_ms"] - deadline) / 1000.0)
                key = result.prepared_by or str(result.reason)
                fallbacks[key] = fallbacks.get(key, 0) + 1
                # How long after the deadline the abandoned scout's worker ended.
                for worker in outstanding():
                    worker.join(timeout=_SLOW_S * 2)
                left.append(time.perf_counter() - started - deadline / 1000.0)
                model.close()
            rows.append(
                {
                    "deadline_ms": deadline,
                    "_overshoot": summarize(over),
                    "_worker_end": summarize(left),
                    "prepared_by": fallbacks,
                    "left_running": len(outstanding()),
                }
            )
    return rows


def run(
    *,
    repeats: int = 30,
    warmup: int = 3,
    deadline_repeats: int = 5,
    deadlines: Sequence[float] = DEADLINES_MS,
    log: Callable[[str], None] = print,
) -> Section:
    """Measure the pack, the cached first turn, prefetch's live turn and missed deadlines."""
    from supercontext_lab.harness.cached import serve_cached
    from supercontext_lab.sources.demo import open_workspace

    log(f"preflight: {repeats} pack turns on the demo workspace")
    pack, pack_by = _turns("pack", repeats, warmup)
    log("preflight: cached first turns (the envelope built once ahead)")
    serve_cached(open_workspace(None))
    cached, cached_by = _turns("cached", repeats, warmup)
    rebuild = _rebuild(max(3, repeats // 6))
    log(f"preflight: {repeats} second turns of prefetch and cold threads, settled and back to back")
    settled = _live_turns(repeats, warmup, settle=True)
    rushed = _live_turns(repeats, warmup, settle=False)
    mine, cold, added_p50, added_p95 = _added(settled)
    served = set(settled["prepared_by"]) == {"prefetch"} and settled["left_running"] == 0
    log(f"preflight: deadlines {', '.join(f'{d:g} ms' for d in deadlines)} against a slow server")
    rows = _deadlines(deadlines, deadline_repeats)
    pack_s, cached_s = summarize(pack), summarize(cached)
    worst = max(row["_overshoot"].max for row in rows) * 1000.0
    shown = ", ".join(f"{row['deadline_ms']:g} ms" for row in rows)
    all_pack = all(set(row["prepared_by"]) == {"pack"} for row in rows)
    area = "Pre-flight designs"
    targets = [
        Target(
            area,
            f"`pack` pre-flight p95 ≤ {TARGET_PACK_P95_MS:g} ms (demo, no model call)",
            f"p95 {fmt_ms(pack_s.p95)} (p50 {fmt_ms(pack_s.median)}, n={pack_s.n})",
            status=judge(pack_s.p95 * 1000.0, TARGET_PACK_P95_MS, at_most=True)
            if set(pack_by) == {"pack"}
            else MISS,
            value=round(pack_s.p95 * 1000.0, 3),
            limit=TARGET_PACK_P95_MS,
        ),
        Target(
            area,
            f"`cached` first turn ≤ {TARGET_CACHED_MS:g} ms (envelope up to date)",
            f"p50 {fmt_ms(cached_s.median)} (p95 {fmt_ms(cached_s.p95)}, n={cached_s.n}); "
            f"a rebuild after a note changed {fmt_ms(rebuild.median)}",
            status=judge(cached_s.median * 1000.0, TARGET_CACHED_MS, at_most=True)
            if set(cached_by) == {"cached"}
            else MISS,
            value=round(cached_s.median * 1000.0, 3),
            limit=TARGET_CACHED_MS,
        ),
        Target(
            area,
            f"a missed deadline ends the pre-flight within {TARGET_OVERSHOOT_MS:g} ms of it "
            "(scout server answering after 5 s)",
            f"at most +{worst:.1f} ms over {len(rows) * deadline_repeats} turns "
            f"({shown}); every turn "
            "prepared by the pack"
            if all_pack
            else f"at most +{worst:.1f} ms; not every turn fell back to the pack",
            status=judge(worst, TARGET_OVERSHOOT_MS, at_most=True) if all_pack else MISS,
            value=round(worst, 3),
            limit=TARGET_OVERSHOOT_MS,
        ),
        Target(
            area,
            f"`prefetch` adds ≤ {TARGET_PREFETCH_ADDED_MS:g} ms to a live turn at p95 (the "
            "harness's time on a second turn, against `cold` in the same run)",
            f"+{added_p50:.2f} ms at p50, +{added_p95:.2f} ms at p95 "
            f"(prefetch p50 {fmt_ms(mine.median)}, p95 {fmt_ms(mine.p95)}, n={mine.n}; "
            f"every turn sent the pack of the turn before)"
            if served
            else f"+{added_p95:.2f} ms at p95; not every second turn was sent a pack",
            peer=f"cold p50 {fmt_ms(cold.median)}, p95 {fmt_ms(cold.p95)}",
            ratio=f"×{mine.median / cold.median:.2f} (p50)" if cold.median > 0 else "—",
            status=judge(added_p95, TARGET_PREFETCH_ADDED_MS, at_most=True) if served else MISS,
            value=round(added_p95, 3),
            limit=TARGET_PREFETCH_ADDED_MS,
        ),
    ]
    data = {
        "messages": list(MESSAGES),
        "pack_preparation_ms": pack_s.scaled(1000.0).to_dict(),
        "pack_prepared_by": pack_by,
        "cached_preparation_ms": cached_s.scaled(1000.0).to_dict(),
        "cached_prepared_by": cached_by,
        "cached_rebuild_ms": rebuild.scaled(1000.0).to_dict(),
        "prefetch_live_turn": {
            name: {
                "harness_ms": {
                    design: summarize(turns[design]).scaled(1000.0).to_dict()
                    for design in ("prefetch", "cold")
                },
                "before_the_reply_ms": {
                    design: summarize(turns[f"{design}_preparation"]).scaled(1000.0).to_dict()
                    for design in ("prefetch", "cold")
                },
                "after_the_reply_ms": {
                    design: summarize(turns[f"{design}_after"]).scaled(1000.0).to_dict()
                    for design in ("prefetch", "cold")
                },
                "added_p50_ms": round(_added(turns)[2], 3),
                "added_p95_ms": round(_added(turns)[3], 3),
                "prefetch_prepared_by": turns["prepared_by"],
                "left_running": turns["left_running"],
            }
            for name, turns in (("settled", settled), ("back_to_back", rushed))
        },
        "deadlines": [
            {
                "deadline_ms": row["deadline_ms"],
                "overshoot_ms": row["_overshoot"].scaled(1000.0).to_dict(),
                "worker_ended_after_deadline_ms": row["_worker_end"].scaled(1000.0).to_dict(),
                "prepared_by": row["prepared_by"],
                "left_running": row["left_running"],
            }
            for row in rows
        ],
    }
    section = Section("preflight", "Pre-flight designs and the deadline", data, targets)
    table_rows = [
        (
            "`pack` pre-flight",
            fmt_ms(pack_s.median),
            f"{fmt_ms(pack_s.p5)}–{fmt_ms(pack_s.p95)}",
            str(pack_s.n),
        ),
        (
            "`cached` first turn, envelope up to date",
            fmt_ms(cached_s.median),
            f"{fmt_ms(cached_s.p5)}–{fmt_ms(cached_s.p95)}",
            str(cached_s.n),
        ),
        (
            "`cached`, rebuilt after a note changed",
            fmt_ms(rebuild.median),
            f"{fmt_ms(rebuild.p5)}–{fmt_ms(rebuild.p95)}",
            str(rebuild.n),
        ),
    ]
    parts = (
        ("", "the harness's time"),
        ("_preparation", "before the reply"),
        ("_after", "after it"),
    )
    for name, turns in (("lookup settled", settled), ("sent back to back", rushed)):
        for design in ("prefetch", "cold"):
            for suffix, what in parts:
                shown = summarize(turns[design + suffix])
                table_rows.append(
                    (
                        f"second `{design}` turn, {name}: {what}",
                        fmt_ms(shown.median),
                        f"{fmt_ms(shown.p5)}–{fmt_ms(shown.p95)}",
                        str(shown.n),
                    )
                )
    for row in rows:
        over, end = row["_overshoot"], row["_worker_end"]
        table_rows.append(
            (
                f"deadline {row['deadline_ms']:g} ms missed: pre-flight ends after it by",
                fmt_ms(over.median),
                f"{fmt_ms(over.p5)}–{fmt_ms(over.p95)}",
                str(over.n),
            )
        )
        table_rows.append(
            (
                f"deadline {row['deadline_ms']:g} ms: the abandoned scout's worker had ended, "
                "checked after the turn, by",
                fmt_ms(end.median),
                f"{fmt_ms(end.p5)}–{fmt_ms(end.p95)}",
                str(end.n),
            )
        )
    section.details.append(markdown_table(("Step", "Median", "p5–p95", "n"), table_rows))
    return section
