"""Memory recall against named peers: the same corpus and queries for every engine.

For each engine (:mod:`benchmarks.engines`) this measures index build time (repeated),
on-disk size, resident memory, the first query after the build, and per-query latency
over every query (several passes for the fast engines); the top-8 results are compared
with rank-bm25's. The memory tree is also timed updating one existing document, answering
the first query after that update, and reopening a workspace whose index is up to date
(which must re-index nothing).
"""

from __future__ import annotations

import gc
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .build_probe import probe_build
from .engines import ENGINES, TOP_K, MemoryTreeEngine
from .report import MISS, PASS, Section, Target, judge, markdown_table
from .stats import Summary, fmt_bytes, fmt_ms, summarize

__all__ = ["EngineRun", "measure_engine", "measure_reopen", "measure_updates", "run"]

#: Query passes per engine: the peers need tens of milliseconds a query, so fewer passes.
DEFAULT_PASSES = {"memorytree": 3, "bm25s": 2, "rank-bm25": 1}
TARGET_P95_MS = 5.0
TARGET_VS_RANK_BM25 = 20.0
TARGET_VS_BM25S = 2.0
TARGET_UPDATE_MS = 10.0
SANITY_RECALL = 0.8


@dataclass
class EngineRun:
    """Everything measured for one engine at one corpus size."""

    name: str
    label: str
    docs: int
    build_s: list[float]
    peak_bytes: int | None
    retained_bytes: int | None
    disk: dict[str, int | None]
    first_query_s: float
    latencies_s: list[float]
    per_query_s: list[float]
    results: list[list[int]]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def latency(self) -> Summary:
        return summarize(self.latencies_s)

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "label": self.label,
            "documents": self.docs,
            "build_s": summarize(self.build_s).to_dict(),
            "peak_rss_growth_bytes": self.peak_bytes,
            "retained_rss_bytes": self.retained_bytes,
            "disk_bytes": self.disk,
            "first_query_ms": round(self.first_query_s * 1000.0, 3),
            "query_ms": self.latency.scaled(1000.0).to_dict(),
            "queries": len(self.per_query_s),
            "query_passes": len(self.latencies_s) // max(1, len(self.per_query_s)),
            **self.extra,
        }


def _collect() -> None:
    gc.collect()
    gc.collect()


def measure_engine(
    name: str,
    docs: Sequence[str],
    queries: Sequence[str],
    workdir: Path,
    *,
    build_repeats: int = 3,
    passes: int = 1,
    warmup: int = 10,
    memory: bool = True,
    keep: Callable[[Any], None] | None = None,
) -> list[EngineRun]:
    """Build ``name`` over ``docs`` ``build_repeats`` times and time every query.

    With ``memory`` one of the builds runs in a child process that measures resident
    memory (:mod:`benchmarks.build_probe`); its build time is one of the samples. The
    first in-process build is the one searched; the others only add timing samples.
    ``keep`` receives the searched engine before it is closed. Returns one run per search
    mode: the engine's own, then its alternates over the same index (same build figures).
    """
    factory = ENGINES[name]
    workdir.mkdir(parents=True, exist_ok=True)
    build_s: list[float] = []
    peak_bytes: int | None = None
    retained_bytes: int | None = None
    if memory:
        probed = probe_build(name, docs, workdir / "child")
        shutil.rmtree(workdir / "child", ignore_errors=True)
        build_s.append(float(probed["build_s"]))
        peak_bytes, retained_bytes = probed["peak_bytes"], probed["retained_bytes"]
    _collect()
    engine = factory()
    started = time.perf_counter()
    engine.build(docs, workdir / "build-0")
    build_s.append(time.perf_counter() - started)
    for repeat in range(1, build_repeats - (1 if memory else 0)):
        other = factory()
        started = time.perf_counter()
        other.build(docs, workdir / f"build-{repeat}")
        build_s.append(time.perf_counter() - started)
        other.close()
        del other
        shutil.rmtree(workdir / f"build-{repeat}", ignore_errors=True)
        _collect()
    extra: dict[str, Any] = {}
    if isinstance(engine, MemoryTreeEngine):
        reopen = []
        for _ in range(3):
            started = time.perf_counter()
            engine.reopen()
            reopen.append(time.perf_counter() - started)
        extra["reopen_ms"] = summarize(reopen).scaled(1000.0).to_dict()
    disk = engine.disk()
    modes: list[tuple[str, str, Callable[[str], list[int]]]] = [
        (name, factory.label, engine.search)
    ]
    modes += [(n, label, fn) for n, (label, fn) in engine.alternates().items()]
    runs: list[EngineRun] = []
    for mode_name, label, search in modes:
        first_s, latencies, results = _time_queries(search, queries, warmup, passes)
        runs.append(
            EngineRun(
                name=mode_name,
                label=label,
                docs=len(docs),
                build_s=build_s,
                peak_bytes=peak_bytes,
                retained_bytes=retained_bytes,
                disk=disk,
                first_query_s=first_s,
                latencies_s=[t for per in latencies for t in per],
                per_query_s=[summarize(t).median for t in latencies],
                results=results,
                extra=extra if mode_name == name else {"same_index_as": name},
            )
        )
    if keep is not None:
        keep(engine)
    engine.close()
    del engine
    shutil.rmtree(workdir / "build-0", ignore_errors=True)
    _collect()
    return runs


def _time_queries(
    search: Callable[[str], list[int]], queries: Sequence[str], warmup: int, passes: int
) -> tuple[float, list[list[float]], list[list[int]]]:
    """The first (cold) query's time, then every query's times over ``passes`` passes."""
    clock = time.perf_counter
    started = clock()
    first = search(queries[0])
    first_s = clock() - started
    for query in queries[1 : 1 + warmup]:
        search(query)
    timings: list[list[float]] = [[] for _ in queries]
    results: list[list[int]] = [[] for _ in queries]
    results[0] = first
    for pass_no in range(passes):
        for index, query in enumerate(queries):
            started = clock()
            found = search(query)
            timings[index].append(clock() - started)
            if pass_no == 0:
                results[index] = found
    return first_s, timings, results


def overlap(results: Sequence[list[int]], reference: Sequence[list[int]]) -> dict[str, float]:
    """Mean recall@8 and mean Jaccard of ``results`` against ``reference``, per query.

    A query where both found nothing counts as full agreement.
    """
    recalls: list[float] = []
    jaccards: list[float] = []
    for mine, theirs in zip(results, reference, strict=True):
        a, b = set(mine), set(theirs)
        union = a | b
        recalls.append(len(a & b) / len(b) if b else (1.0 if not a else 0.0))
        jaccards.append(len(a & b) / len(union) if union else 1.0)
    return {
        "recall_at_8": round(sum(recalls) / len(recalls), 4),
        "jaccard": round(sum(jaccards) / len(jaccards), 4),
    }


def measure_updates(
    engine: MemoryTreeEngine, docs: Sequence[str], queries: Sequence[str], *, repeats: int = 30
) -> dict[str, Any]:
    """Replace existing documents one at a time; time ``add`` and the next ``recall``."""
    rng = random.Random(5)
    tree = engine.tree
    before = tree.count()
    updates: list[float] = []
    recalls: list[float] = []
    clock = time.perf_counter
    for i in range(repeats):
        index = rng.randrange(len(docs))
        content = f"{docs[index]} (revised {i})"
        started = clock()
        tree.add(engine.namespace, engine.key(index), content)
        updates.append(clock() - started)
        query = queries[i % len(queries)]
        started = clock()
        tree.recall("*", query, limit=TOP_K)
        recalls.append(clock() - started)
    return {
        "update_ms": summarize(updates).scaled(1000.0).to_dict(),
        "recall_after_update_ms": summarize(recalls).scaled(1000.0).to_dict(),
        "count_unchanged": tree.count() == before,
        "_update": summarize(updates),
        "_recall": summarize(recalls),
    }


def _sync_changes(report: Any) -> int:
    return sum(int(getattr(report, name, 0)) for name in ("added", "updated", "removed"))


def measure_reopen(
    docs: Sequence[str], workdir: Path, *, files: int = 2000, repeats: int = 5
) -> dict[str, Any]:
    """Open a workspace with ``memory/`` files cold, then reopen and re-sync it warm.

    A cold open indexes every file; a warm reopen and a ``sync()`` of an unchanged folder
    must report no change.
    """
    from supercontext_lab import MemoryTree

    folder = workdir / "workspace"
    if folder.exists():
        shutil.rmtree(folder)
    notes = folder / "memory" / "notes"
    notes.mkdir(parents=True)
    for index in range(files):
        (notes / f"note-{index:05d}.md").write_text(
            f"---\ncategory: note\n---\n{docs[index % len(docs)]}\n", encoding="utf-8"
        )
    cold: list[float] = []
    cold_added = 0
    for _ in range(3):
        shutil.rmtree(folder / ".supercontext", ignore_errors=True)
        started = time.perf_counter()
        tree = MemoryTree(folder)
        cold.append(time.perf_counter() - started)
        cold_added = int(getattr(tree.last_sync, "added", 0))
        tree.close()
    warm: list[float] = []
    warm_changes: list[int] = []
    syncs: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        tree = MemoryTree(folder)
        warm.append(time.perf_counter() - started)
        warm_changes.append(_sync_changes(tree.last_sync))
        started = time.perf_counter()
        report = tree.sync()
        syncs.append(time.perf_counter() - started)
        warm_changes.append(_sync_changes(report))
        tree.close()
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "files": files,
        "cold_open_ms": summarize(cold).scaled(1000.0).to_dict(),
        "cold_added": cold_added,
        "warm_open_ms": summarize(warm).scaled(1000.0).to_dict(),
        "warm_sync_ms": summarize(syncs).scaled(1000.0).to_dict(),
        "warm_changes": warm_changes,
        "_cold": summarize(cold),
        "_warm": summarize(warm),
        "_sync": summarize(syncs),
    }


def _public(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if not k.startswith("_")}


def _spread(s: Summary) -> str:
    return f"p5–p95 {fmt_ms(s.p5)}–{fmt_ms(s.p95)}"


def _ratio_spread(numerator: Sequence[float], denominator: Sequence[float]) -> Summary:
    return summarize(n / d for n, d in zip(numerator, denominator, strict=True) if d > 0)


def _short(run: EngineRun) -> str:
    return "bm25s get_scores" if run.name == "bm25s-scores" else run.name


def engine_table(runs: Sequence[EngineRun], overlaps: dict[str, dict[str, float]]) -> str:
    """Detail table: one row per engine."""
    rows = []
    for run in runs:
        lat = run.latency
        build = summarize(run.build_s)
        disk = run.disk
        if disk.get("index_with_texts") is None:
            disk_text = "in memory only"
        elif disk.get("index_only") is None:
            disk_text = f"{fmt_bytes(disk['index_with_texts'])} (with texts)"
        else:
            disk_text = (
                f"{fmt_bytes(disk['index_only'])} "
                f"({fmt_bytes(disk['index_with_texts'])} with texts)"
            )
        ov = overlaps.get(run.name)
        shared = run.extra.get("same_index_as")
        rows.append(
            (
                run.label,
                f"same index as {shared}"
                if shared
                else f"{build.median:.2f} s ({build.min:.2f}–{build.max:.2f}, n={build.n})",
                "—" if shared else disk_text,
                "—" if shared else f"{fmt_bytes(run.peak_bytes)} / {fmt_bytes(run.retained_bytes)}",
                fmt_ms(run.first_query_s),
                fmt_ms(lat.median),
                fmt_ms(lat.p95),
                f"{lat.n}",
                "reference" if ov is None else f"{ov['recall_at_8']:.3f} / {ov['jaccard']:.3f}",
            )
        )
    return markdown_table(
        (
            "Engine",
            "Build",
            "On disk",
            "RSS peak / kept",
            "1st query",
            "Query p50",
            "Query p95",
            "Timed queries",
            "Top-8 recall / Jaccard vs rank-bm25",
        ),
        rows,
    )


def run(
    docs: Sequence[str],
    queries: Sequence[str],
    workdir: Path,
    *,
    build_repeats: int = 3,
    passes: dict[str, int] | None = None,
    warmup: int = 10,
    update_repeats: int = 30,
    reopen_files: int = 2000,
    reopen_repeats: int = 5,
    log: Callable[[str], None] = print,
) -> tuple[Section, dict[str, EngineRun]]:
    """Run the comparison; return the section and each engine's run (for scaling)."""
    passes = {**DEFAULT_PASSES, **(passes or {})}
    runs: dict[str, EngineRun] = {}
    updates: dict[str, Any] = {}

    def keep_updates(engine: Any) -> None:
        updates.update(measure_updates(engine, docs, queries, repeats=update_repeats))

    for name in ("memorytree", "bm25s", "rank-bm25"):
        log(f"memory: {name} on {len(docs)} documents, {len(queries)} queries")
        for measured in measure_engine(
            name,
            docs,
            queries,
            workdir / name,
            build_repeats=build_repeats,
            passes=passes[name],
            warmup=warmup,
            keep=keep_updates if name == "memorytree" else None,
        ):
            runs[measured.name] = measured
    log("memory: reopening an up-to-date workspace")
    reopen = measure_reopen(docs, workdir, files=reopen_files, repeats=reopen_repeats)
    reference = runs["rank-bm25"].results
    overlaps = {
        name: overlap(run.results, reference) for name, run in runs.items() if name != "rank-bm25"
    }

    mt, rb = runs["memorytree"], runs["rank-bm25"]
    # bm25s is compared at its best: whichever of its two search modes is faster here.
    bs = min((runs["bm25s"], runs["bm25s-scores"]), key=lambda r: r.latency.median)
    mt_lat, rb_lat, bs_lat = mt.latency, rb.latency, bs.latency
    bs_modes = (
        f"bm25s retrieve p50 {fmt_ms(runs['bm25s'].latency.median)}, get_scores p50 "
        f"{fmt_ms(runs['bm25s-scores'].latency.median)}"
    )
    n = len(docs)
    size = f"{n / 1000:.0f}k docs" if n >= 1000 else f"{n} docs"
    area = "Memory recall"
    targets: list[Target] = []
    p95_ms = mt_lat.p95 * 1000.0
    targets.append(
        Target(
            area,
            f"MemoryTree query p95 ≤ {TARGET_P95_MS:g} ms ({size}, 3-word queries)",
            f"p95 {fmt_ms(mt_lat.p95)} (p50 {fmt_ms(mt_lat.median)}, n={mt_lat.n})",
            f"{_short(bs)} p95 {fmt_ms(bs_lat.p95)}",
            f"{mt_lat.p95 / bs_lat.p95:.2f}× bm25s' p95",
            judge(p95_ms, TARGET_P95_MS, at_most=True),
            round(p95_ms, 3),
            TARGET_P95_MS,
        )
    )
    vs_rank = rb_lat.median / mt_lat.median
    per_query_rank = _ratio_spread(rb.per_query_s, mt.per_query_s)
    targets.append(
        Target(
            area,
            f"≥ {TARGET_VS_RANK_BM25:g}× faster per query than rank-bm25",
            f"p50 {fmt_ms(mt_lat.median)} ({_spread(mt_lat)})",
            f"rank-bm25 p50 {fmt_ms(rb_lat.median)} ({_spread(rb_lat)})",
            f"{vs_rank:.1f}× faster (per query p5–p95 {per_query_rank.p5:.1f}–"
            f"{per_query_rank.p95:.1f}×)",
            judge(vs_rank, TARGET_VS_RANK_BM25, at_most=False),
            round(vs_rank, 3),
            TARGET_VS_RANK_BM25,
        )
    )
    vs_bm25s = mt_lat.median / bs_lat.median
    per_query_bs = _ratio_spread(mt.per_query_s, bs.per_query_s)
    targets.append(
        Target(
            area,
            f"no slower than {TARGET_VS_BM25S:g}× bm25s per query (its faster mode)",
            f"p50 {fmt_ms(mt_lat.median)} ({_spread(mt_lat)})",
            f"{bs_modes} ({_spread(bs_lat)})",
            f"{vs_bm25s:.2f}× bm25s' time (per query p5–p95 {per_query_bs.p5:.2f}–"
            f"{per_query_bs.p95:.2f}×)",
            judge(vs_bm25s, TARGET_VS_BM25S, at_most=True),
            round(vs_bm25s, 3),
            TARGET_VS_BM25S,
        )
    )
    upd: Summary = updates["_update"]
    after: Summary = updates["_recall"]
    update_ms = upd.median * 1000.0
    targets.append(
        Target(
            area,
            f"update one changed document ≤ {TARGET_UPDATE_MS:g} ms ({size})",
            f"{fmt_ms(upd.median)} ({_spread(upd)}, n={upd.n}); next recall "
            f"{fmt_ms(after.median)} (p95 {fmt_ms(after.p95)})",
            "—",
            "—",
            judge(update_ms, TARGET_UPDATE_MS, at_most=True)
            if updates["count_unchanged"]
            else MISS,
            round(update_ms, 3),
            TARGET_UPDATE_MS,
        )
    )
    changes = sum(reopen["warm_changes"])
    warm: Summary = reopen["_warm"]
    cold: Summary = reopen["_cold"]
    sync: Summary = reopen["_sync"]
    targets.append(
        Target(
            area,
            f"reopening an up-to-date workspace re-indexes nothing ({reopen['files']} files)",
            f"{changes} changes in {len(reopen['warm_changes'])} reopens/syncs; reopen "
            f"{fmt_ms(warm.median)}, sync {fmt_ms(sync.median)}",
            f"cold open {fmt_ms(cold.median)} ({reopen['cold_added']} files indexed)",
            f"{cold.median / warm.median:.0f}× faster than cold",
            PASS if changes == 0 and reopen["cold_added"] == reopen["files"] else MISS,
            float(changes),
            0.0,
        )
    )
    worst = min(overlaps.values(), key=lambda o: o["recall_at_8"])
    targets.append(
        Target(
            area,
            f"sanity: top-8 agrees with rank-bm25 (mean recall@8 ≥ {SANITY_RECALL:g})",
            f"MemoryTree {overlaps['memorytree']['recall_at_8']:.3f} "
            f"(Jaccard {overlaps['memorytree']['jaccard']:.3f})",
            f"bm25s {overlaps['bm25s']['recall_at_8']:.3f} "
            f"(Jaccard {overlaps['bm25s']['jaccard']:.3f}), get_scores mode "
            f"{overlaps['bm25s-scores']['recall_at_8']:.3f}",
            "—",
            judge(worst["recall_at_8"], SANITY_RECALL, at_most=False),
            worst["recall_at_8"],
            SANITY_RECALL,
        )
    )
    data = {
        "documents": n,
        "queries": len(queries),
        "top_k": TOP_K,
        "engines": {name: r.to_dict() for name, r in runs.items()},
        "overlap_vs_rank_bm25": overlaps,
        "bm25s_mode_compared": bs.name,
        "ratios": {
            "rank_bm25_over_memorytree_p50": round(vs_rank, 3),
            "memorytree_over_bm25s_p50": round(vs_bm25s, 3),
            "rank_bm25_over_memorytree_p95": round(rb_lat.p95 / mt_lat.p95, 3),
            "memorytree_over_bm25s_p95": round(mt_lat.p95 / bs_lat.p95, 3),
            "per_query_rank_bm25_over_memorytree": per_query_rank.to_dict(),
            "per_query_memorytree_over_bm25s": per_query_bs.to_dict(),
        },
        "updates": _public(updates),
        "reopen": _public(reopen),
    }
    section = Section("memory_recall", "Memory recall vs peers", data, targets)
    section.details.append(
        f"{n} documents, {len(queries)} queries of 3 content words, top {TOP_K}. "
        "Build time includes tokenising (one of the builds runs in a fresh process, which "
        "measures resident memory growth during the build, peak, and after it with the "
        "index alive, kept). On disk: the memory tree's SQLite file holds the texts too; "
        "bm25s is shown as its index alone and with its saved corpus."
    )
    section.details.append(engine_table(list(runs.values()), overlaps))
    return section, runs
