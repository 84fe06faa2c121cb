"""How recall latency, build time and index size grow with the corpus (10k, 50k, 200k).

Sizes above the corpus are reached by repeating it (:func:`benchmarks.corpus.resize_docs`).
Each size is built once per engine; the slower peers answer a prefix of the queries
(rank-bm25 needs tens to hundreds of milliseconds per query). A size already measured by the recall comparison
in the same run is reused rather than rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .corpus import resize_docs
from .memory_recall import EngineRun, measure_engine
from .report import Section, markdown_table
from .stats import fmt_bytes, fmt_ms, summarize

__all__ = ["plot", "run"]

ENGINE_ORDER = ("memorytree", "bm25s", "rank-bm25")
#: Every search mode measured (bm25s has two over one index), in table and plot order.
MODES = ("memorytree", "bm25s", "bm25s-scores", "rank-bm25")
_COLOURS = {
    "memorytree": "#1f77b4",
    "bm25s": "#2ca02c",
    "bm25s-scores": "#9467bd",
    "rank-bm25": "#d62728",
}
_LABELS = {
    "memorytree": "MemoryTree",
    "bm25s": "bm25s retrieve",
    "bm25s-scores": "bm25s get_scores",
    "rank-bm25": "rank-bm25",
}


def run(
    docs: Sequence[str],
    queries: Sequence[str],
    workdir: Path,
    sizes: Sequence[int],
    *,
    reuse: Mapping[str, EngineRun] | None = None,
    query_counts: Mapping[str, int] | None = None,
    warmup: int = 5,
    log: Callable[[str], None] = print,
) -> tuple[Section, dict[int, dict[str, EngineRun]]]:
    """Measure every engine at every size; return the section and the raw runs."""
    points: dict[int, dict[str, EngineRun]] = {}
    for size in sizes:
        points[size] = {}
        sized: Sequence[str] | None = None
        for name in ENGINE_ORDER:
            reused = [
                r
                for r in (reuse or {}).values()
                if r.docs == size and name in (r.name, r.extra.get("same_index_as"))
            ]
            if reused:
                points[size].update((r.name, r) for r in reused)
                continue
            if sized is None:
                sized = resize_docs(docs, size)
            subset = queries[: (query_counts or {}).get(name, len(queries))]
            log(f"scaling: {name} at {size} documents")
            for measured in measure_engine(
                name,
                sized,
                subset,
                workdir / f"{name}-{size}",
                build_repeats=1,
                passes=1,
                memory=False,
                warmup=min(warmup, len(subset) - 1),
            ):
                points[size][measured.name] = measured
        sized = None
    rows = []
    data: dict[str, Any] = {"sizes": list(sizes), "points": []}
    for size, by_engine in points.items():
        for name in MODES:
            r = by_engine.get(name)
            if r is None:
                continue
            lat = r.latency
            disk = r.disk.get("index_with_texts")
            rows.append(
                (
                    f"{size:,}",
                    _LABELS[name],
                    "same index"
                    if "same_index_as" in r.extra
                    else f"{summarize(r.build_s).median:.2f} s",
                    fmt_bytes(disk) if disk is not None else "in memory only",
                    fmt_ms(lat.median),
                    fmt_ms(lat.p95),
                    str(len(r.per_query_s)),
                )
            )
            data["points"].append(
                {
                    "documents": size,
                    "engine": name,
                    "build_s": summarize(r.build_s).to_dict(),
                    "disk_bytes": r.disk,
                    "query_ms": lat.scaled(1000.0).to_dict(),
                    "queries": len(r.per_query_s),
                }
            )
    section = Section("scaling", "Scaling", data)
    section.details.append(
        "Each size built once per engine (sizes already measured above are reused); "
        "sizes beyond the corpus repeat it. On disk includes the texts."
    )
    section.details.append(
        markdown_table(
            ("Documents", "Engine", "Build", "On disk", "Query p50", "Query p95", "Queries"),
            rows,
        )
    )
    return section, points


def plot(points: Mapping[int, Mapping[str, EngineRun]], path: Path) -> Path:
    """Draw latency (p50 with p95 dashed) and on-disk size against documents; save PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(points)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), dpi=110)
    for name in MODES:
        xs = [s for s in sizes if name in points[s]]
        p50 = [points[s][name].latency.median * 1000.0 for s in xs]
        p95 = [points[s][name].latency.p95 * 1000.0 for s in xs]
        colour = _COLOURS[name]
        left.plot(xs, p50, "o-", color=colour, label=f"{_LABELS[name]} p50")
        left.plot(xs, p95, "s--", color=colour, alpha=0.6, label=f"{_LABELS[name]} p95")
        if name == "bm25s-scores":
            continue  # the same index as bm25s: its size is already drawn
        disk_xs = [s for s in xs if points[s][name].disk.get("index_with_texts") is not None]
        if disk_xs:
            right.plot(
                disk_xs,
                [points[s][name].disk["index_with_texts"] or 0 for s in disk_xs],
                "o-",
                color=colour,
                label=f"{_LABELS[name].split()[0]} (with texts)",
            )
            only = [s for s in disk_xs if points[s][name].disk.get("index_only") is not None]
            if only:
                right.plot(
                    only,
                    [points[s][name].disk["index_only"] or 0 for s in only],
                    "s--",
                    color=colour,
                    alpha=0.6,
                    label=f"{_LABELS[name].split()[0]} (index only)",
                )
    left.set(xscale="log", yscale="log", xlabel="documents", ylabel="query latency (ms)")
    left.set_title("Recall latency, top 8")
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=7)
    right.set(xscale="log", yscale="log", xlabel="documents", ylabel="bytes on disk")
    right.set_title("Index size")
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
