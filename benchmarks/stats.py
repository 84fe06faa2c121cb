"""Measuring helpers shared by every benchmark: summaries, timers, memory and disk probes.

Every figure the benchmarks report is a :class:`Summary` of repeated samples (median with
p5–p95 and the interquartile range), never a single timing.
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "MemoryProbe",
    "Summary",
    "dir_size",
    "fmt_bytes",
    "fmt_ms",
    "percentile",
    "summarize",
    "time_calls",
]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation, as numpy's default."""
    if not values:
        raise ValueError("percentile of an empty sample")
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (rank - low))


@dataclass(frozen=True)
class Summary:
    """A sample reduced to its median and spread; the unit is the caller's."""

    median: float
    p5: float
    p95: float
    q1: float
    q3: float
    mean: float
    min: float
    max: float
    n: int

    def to_dict(self) -> dict[str, float | int]:
        """Plain numbers for JSON (rounded to keep the file readable)."""
        return {
            "median": _round(self.median),
            "p5": _round(self.p5),
            "p95": _round(self.p95),
            "q1": _round(self.q1),
            "q3": _round(self.q3),
            "mean": _round(self.mean),
            "min": _round(self.min),
            "max": _round(self.max),
            "n": self.n,
        }

    def scaled(self, factor: float) -> Summary:
        """The same summary in another unit (``factor`` multiplies every figure)."""
        return Summary(
            self.median * factor,
            self.p5 * factor,
            self.p95 * factor,
            self.q1 * factor,
            self.q3 * factor,
            self.mean * factor,
            self.min * factor,
            self.max * factor,
            self.n,
        )


def _round(value: float) -> float:
    if value == 0 or not math.isfinite(value):
        return value
    digits = max(0, 4 - math.floor(math.log10(abs(value))))
    return round(value, digits)


def summarize(values: Iterable[float]) -> Summary:
    """Summarise a non-empty sample."""
    sample = [float(v) for v in values]
    if not sample:
        raise ValueError("cannot summarise an empty sample")
    return Summary(
        median=percentile(sample, 50),
        p5=percentile(sample, 5),
        p95=percentile(sample, 95),
        q1=percentile(sample, 25),
        q3=percentile(sample, 75),
        mean=sum(sample) / len(sample),
        min=min(sample),
        max=max(sample),
        n=len(sample),
    )


def time_calls(fn: Callable[[], Any], repeats: int, warmup: int = 1) -> list[float]:
    """Call ``fn`` ``warmup`` times untimed, then ``repeats`` times; seconds per call."""
    for _ in range(warmup):
        fn()
    samples: list[float] = []
    clock = time.perf_counter
    for _ in range(repeats):
        start = clock()
        fn()
        samples.append(clock() - start)
    return samples


def fmt_ms(seconds: float) -> str:
    """``0.0012`` → ``"1.20 ms"``; sub-millisecond figures in µs."""
    ms = seconds * 1000.0
    size = abs(ms)  # differences can be negative; the unit follows the magnitude
    if size < 1.0:
        return f"{ms * 1000.0:.0f} µs"
    if size < 10.0:
        return f"{ms:.2f} ms"
    if size < 1000.0:
        return f"{ms:.1f} ms"
    return f"{ms / 1000.0:.2f} s"


def fmt_bytes(size: float | None) -> str:
    """Binary units, one decimal."""
    if size is None:
        return "n/a"
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024.0 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024.0
    raise AssertionError("unreachable")


def dir_size(path: Path) -> int:
    """Total bytes of the regular files under ``path`` (a file counts itself)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:
                continue
    return total


def _rss() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            pages = int(handle.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def _peak_rss() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def _reset_peak() -> bool:
    # Writing 5 to clear_refs resets the high-water mark (Linux 4.0+), so the peak of one
    # phase can be read without running it in a separate process.
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


class MemoryProbe:
    """Resident memory of this process across a block: peak growth and what stays.

    ``peak_bytes`` is the high-water mark reached inside the block minus the resident size
    at its start (``None`` where the kernel cannot reset the mark); ``retained_bytes`` is
    the resident growth still there after the block and a garbage collection. Resident
    memory counts everything (SQLite's page cache, numpy arrays, Python objects), which
    tracemalloc would not.
    """

    def __init__(self) -> None:
        self.base: int | None = None
        self.peak_bytes: int | None = None
        self.retained_bytes: int | None = None
        self._peak_ok = False

    def __enter__(self) -> MemoryProbe:
        gc.collect()
        self.base = _rss()
        self._peak_ok = _reset_peak()
        return self

    def __exit__(self, *exc: object) -> None:
        peak = _peak_rss() if self._peak_ok else None
        gc.collect()
        after = _rss()
        if self.base is not None:
            if peak is not None:
                self.peak_bytes = max(0, peak - self.base)
            if after is not None:
                self.retained_bytes = after - self.base
