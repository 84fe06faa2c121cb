"""Targets, the printed table, and the files a run writes.

Every benchmark returns a :class:`Section`: its raw figures (JSON-ready) plus the
:class:`Target` rows it judged. The report joins them into one Markdown table of targets
(printed, written to ``results/latest.md`` and, for a full run, ``docs/performance.md``)
and one JSON document (``results/latest.json``).
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supercontext_lab._atomic import write_atomic

__all__ = [
    "DESIGNS_BEGIN",
    "DESIGNS_BLOCK",
    "DESIGNS_END",
    "MISS",
    "PASS",
    "PENDING",
    "REALMODEL_BEGIN",
    "REALMODEL_BLOCK",
    "REALMODEL_END",
    "STRUCTURES_BEGIN",
    "STRUCTURES_BLOCK",
    "STRUCTURES_END",
    "Section",
    "Target",
    "judge",
    "keep_section",
    "machine_info",
    "markdown_report",
    "markdown_table",
    "targets_table",
    "write_performance_doc",
    "write_results",
]

PASS = "PASS"
MISS = "MISS"
PENDING = "pending"

REALMODEL_BEGIN = "<!-- realmodel:begin -->"
REALMODEL_END = "<!-- realmodel:end -->"
REALMODEL_BLOCK = re.compile(re.escape(REALMODEL_BEGIN) + r".*?" + re.escape(REALMODEL_END), re.S)
"""The block of docs/performance.md that ``python -m benchmarks realmodel`` owns, markers
included; a full run of the other benchmarks keeps it (:func:`keep_section`)."""


@dataclass(frozen=True)
class Target:
    """One judged target: what was promised, what was measured, against which peer."""

    area: str
    target: str
    measured: str
    peer: str = "—"
    ratio: str = "—"
    status: str = PENDING
    #: The number the status was decided on and its limit (``None`` when pending).
    value: float | None = None
    limit: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "area": self.area,
            "target": self.target,
            "measured": self.measured,
            "peer": self.peer,
            "ratio": self.ratio,
            "status": self.status,
            "value": self.value,
            "limit": self.limit,
        }


def judge(value: float, limit: float, *, at_most: bool) -> str:
    """PASS when ``value`` is within ``limit`` in the promised direction."""
    ok = value <= limit if at_most else value >= limit
    return PASS if ok else MISS


@dataclass
class Section:
    """The outcome of one benchmark: raw figures, targets and extra tables."""

    name: str
    title: str
    data: dict[str, Any] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    #: Extra Markdown (detail tables) shown under the targets table.
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = [
        "| " + " | ".join(_cell(h) for h in headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
    ]
    lines.extend("| " + " | ".join(_cell(str(c)) for c in row) + " |" for row in rows)
    return "\n".join(lines)


def targets_table(sections: Sequence[Section]) -> str:
    """The one table of every target."""
    rows = [
        (t.area, t.target, t.measured, t.peer, t.ratio, f"**{t.status}**")
        for section in sections
        for t in section.targets
    ]
    return markdown_table(("Area", "Target", "Measured", "Peer", "Ratio", "Status"), rows)


def machine_info() -> dict[str, Any]:
    """Where the figures were measured."""
    import sqlite3

    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "sqlite": sqlite3.sqlite_version,
        "load_average": _load_average(),
    }


def _load_average() -> list[float] | None:
    # Other work on the machine slows every figure; the load says how much there was.
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _fmt_loads(loads: Sequence[float] | None) -> str:
    return "/".join(f"{x:.1f}" for x in loads) if loads else "?"


def _loads(info: dict[str, Any]) -> str:
    start = info.get("load_average_at_start")
    end = info.get("load_average")
    if not start and not end:
        return "unknown"
    return f"{_fmt_loads(start)} at the start, {_fmt_loads(end)} at the end (1/5/15 min)"


def markdown_report(
    sections: Sequence[Section], *, total_seconds: float, command: str, info: dict[str, Any]
) -> str:
    """The whole Markdown report: targets, then each section's detail tables."""
    counts: dict[str, int] = {}
    for section in sections:
        for t in section.targets:
            counts[t.status] = counts.get(t.status, 0) + 1
    tally = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    parts = [
        f"Measured with `{command}` in {total_seconds:.0f} s on {info['cpus']} CPUs, "
        f"Python {info['python']}, SQLite {info['sqlite']} ({info['platform']}); "
        f"load average {_loads(info)}. Targets: {tally}.",
        "",
        targets_table(sections),
    ]
    for section in sections:
        if section.details:
            parts.extend(["", f"### {section.title} ({section.seconds:.0f} s)", ""])
            for detail in section.details:
                parts.extend([detail, ""])
    return "\n".join(parts).rstrip() + "\n"


def write_results(
    results_dir: Path,
    sections: Sequence[Section],
    *,
    total_seconds: float,
    command: str,
    info: dict[str, Any],
) -> tuple[Path, Path, str]:
    """Write ``latest.json`` and ``latest.md``; return both paths and the Markdown."""
    results_dir.mkdir(parents=True, exist_ok=True)
    document = {
        "command": command,
        "total_seconds": round(total_seconds, 2),
        "machine": info,
        "targets": [t.to_dict() for s in sections for t in s.targets],
        "sections": {
            s.name: {"title": s.title, "seconds": round(s.seconds, 2), **s.data} for s in sections
        },
    }
    json_path = results_dir / "latest.json"
    md_path = results_dir / "latest.md"
    markdown = markdown_report(sections, total_seconds=total_seconds, command=command, info=info)
    write_atomic(json_path, json.dumps(document, indent=2, sort_keys=False) + "\n")
    write_atomic(md_path, markdown)
    return json_path, md_path, markdown


def write_performance_doc(path: Path, markdown: str, *, command: str, plot_name: str) -> None:
    """``docs/performance.md``: how to regenerate, the latest table and the scaling plot."""
    text = (
        "# Performance\n\n"
        "Every figure below is a median over repeats with its spread, and every comparison "
        "with a peer is a ratio measured in the same run. Regenerate this page (about four "
        "minutes on a two-core machine, nothing downloaded) with:\n\n"
        f'    pip install -e ".[bench]"\n    {command}\n\n'
        "The benchmarks and what each one measures are described in "
        "[`benchmarks/README.md`](../benchmarks/README.md).\n\n"
        "## Latest results\n\n"
        f"{markdown}\n"
        "## Scaling\n\n"
        f"![Recall latency and index size against corpus size]({plot_name})\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        # The real-model section is written by its own command; a full run keeps it.
        text = keep_section(path.read_text("utf-8"), text)
    write_atomic(path, text)


DESIGNS_BEGIN = "<!-- designs:begin -->"
DESIGNS_END = "<!-- designs:end -->"
DESIGNS_BLOCK = re.compile(re.escape(DESIGNS_BEGIN) + r".*?" + re.escape(DESIGNS_END), re.S)
"""The block ``python -m benchmarks designs`` owns (the pre-flight designs' tables)."""


STRUCTURES_BEGIN = "<!-- structures:begin -->"
STRUCTURES_END = "<!-- structures:end -->"
STRUCTURES_BLOCK = re.compile(
    re.escape(STRUCTURES_BEGIN) + r".*?" + re.escape(STRUCTURES_END), re.S
)
"""The block ``python -m benchmarks structures`` owns (the datasets by layout)."""

_OWNED_BLOCKS = (
    (REALMODEL_BLOCK, REALMODEL_BEGIN),
    (DESIGNS_BLOCK, DESIGNS_BEGIN),
    (STRUCTURES_BLOCK, STRUCTURES_BEGIN),
)


def keep_section(old: str, new: str) -> str:
    """``new`` with the blocks other commands own (the real-model block, the designs
    block, the structures block) of ``old`` carried over (for a full ``all`` run)."""
    for pattern, begin in _OWNED_BLOCKS:
        match = pattern.search(old)
        if match is not None and begin not in new:
            new = new.rstrip("\n") + "\n\n" + match.group(0) + "\n"
    return new
