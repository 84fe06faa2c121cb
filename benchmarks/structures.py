"""The shipped datasets, and the structures set by layout, on the offline scout.

``python -m benchmarks structures`` runs ``supercontext_lab.eval.evaluate`` with the
shipped scout on the offline route (the default of a fresh lab home) over:

* the demo dataset (``eval/data/demo_dataset.jsonl``, 40 cases);
* the public set (``eval/data/public/dataset.jsonl``, 42 cases on public notes);
* the structures set (``eval/data/public/structures.jsonl``: questions of published
  benchmarks over tables, emails, chats and prose), whole and per ``structure``;
* the unseen workspaces (``eval/data/unseen/dataset.jsonl``: fourteen users' workspaces
  and their questions, five of them with an imported ChatGPT export), whole and per workspace;
* the LongMemEval sample (``eval/data/public/longmemeval_sample.json``), scored with
  ``longmemeval_metrics``: ``answer_in_bundle``, ``answer_turn_in_bundle`` and
  ``evidence_recall``.

One table, a row per dataset (and per layout of the structures set): cases, the mention
rate (expected mentions found in the envelope), bullet precision (the summary's bullets
holding an expected mention), has-enough accuracy, the valid-envelope rate, the p50 and
p95 of one pre-flight run (request to bundle), and for LongMemEval the answers found in
the bundle and the evidence sessions cited, each rate with the counts it is the ratio of.
Every figure is a fresh run (no cache) in the lab home ``python -m benchmarks`` isolates,
after one unmeasured run per workspace and route (the first opens the workspace and builds
its index, and a local route starts its server).

Options: ``--model ID`` (repeatable) runs the shipped scout on another route beside the
offline one (``local:smollm2``, ``baseline:rank``, …); ``--dataset NAME`` (repeatable)
runs only some datasets; ``--limit N`` the first N cases of each (of each layout in the
structures set); ``--semantic NAME`` sets ``[memory] semantic`` in that lab home
(``minilm``: the scout is handed the passages closest in meaning too; the warm-up run
embeds the workspaces) and only prints; ``--no-write`` only prints. Otherwise the table
goes into
``docs/performance.md`` between ``<!-- structures:begin -->`` and
``<!-- structures:end -->`` (added at the end when absent; a full ``all`` run keeps it)
and the figures into ``benchmarks/results/structures.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from supercontext_lab._atomic import write_atomic

from .report import STRUCTURES_BEGIN as BEGIN
from .report import STRUCTURES_BLOCK as BLOCK
from .report import STRUCTURES_END as END
from .report import markdown_table

__all__ = ["BEGIN", "DATASETS", "END", "Row", "main", "run", "table", "write_block"]

_DATA = Path(__file__).resolve().parents[1] / "supercontext_lab/eval/data"
DATASETS: dict[str, tuple[Path, str]] = {
    "demo": (_DATA / "demo_dataset.jsonl", "demo"),
    "public": (_DATA / "public/dataset.jsonl", "public set"),
    "structures": (_DATA / "public/structures.jsonl", "structures set"),
    "unseen": (_DATA / "unseen/dataset.jsonl", "unseen workspaces"),
    "longmemeval": (_DATA / "public/longmemeval_sample.json", "LongMemEval sample"),
}
"""What ``--dataset`` names: each dataset's file and its label in the table."""

OFFLINE = "offline"


@dataclass(frozen=True)
class Row:
    """One row of the table: a dataset (or one layout of it) on one route."""

    dataset: str
    part: str
    """``"all"``, or the ``structure`` (or, in the unseen set, the workspace) the row's cases
    share."""
    route: str
    cases: int
    mentions: tuple[int, int] | None
    """Expected mentions found, of those expected (``None``: no case sets mentions)."""
    bullets: tuple[int, int] | None
    """Bullets holding an expected mention, of the bullets of those cases."""
    has_enough: tuple[int, int] | None
    valid: tuple[int, int]
    p50_ms: float
    p95_ms: float
    answer: tuple[int, int] | None = None
    """LongMemEval: questions whose answer is in the bundle, of those scored on it."""
    evidence: tuple[int, int] | None = None
    """LongMemEval: evidence sessions the bundles cite, of the evidence sessions."""
    answer_rate: float | None = None
    evidence_rate: float | None = None
    answer_turn: tuple[int, int] | None = None
    """LongMemEval: questions whose bundle quotes an answer-bearing turn, of those having one."""


def _name(route: str) -> str:
    """The variant name of ``route``: the id, as ``eval --model`` names it."""
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", route.strip()).strip("-.+_")[:64] or OFFLINE


def _variants(routes: Sequence[str]) -> list[Any]:
    from supercontext_lab.eval import Variant
    from supercontext_lab.routes import ModelRoute, parse_model_id

    return [
        Variant.baseline(ModelRoute() if route == OFFLINE else parse_model_id(route)).renamed(
            _name(route)
        )
        for route in routes
    ]


def _first(cases: Sequence[Any], limit: int | None) -> list[Any]:
    """The first ``limit`` cases, of each layout when the cases say theirs."""
    if limit is None:
        return list(cases)
    taken: dict[str | None, int] = {}
    kept = []
    for case in cases:
        if taken.get(case.structure, 0) < limit:
            taken[case.structure] = taken.get(case.structure, 0) + 1
            kept.append(case)
    return kept


def _one_per_workspace(cases: Sequence[Any]) -> list[Any]:
    """The first case on each workspace, for a warm-up run."""
    return list({case.workspace: case for case in reversed(cases)}.values())


def _pair(counts: dict[str, tuple[int, int]], name: str, scored: int) -> tuple[int, int] | None:
    return counts[name] if scored else None


def _row(dataset: str, part: str, route: str, results: Sequence[Any]) -> Row:
    from supercontext_lab.eval.metrics import aggregate, rate_counts

    measures = [result.measure() for result in results]
    metrics = aggregate(measures)
    counts = rate_counts(measures)
    return Row(
        dataset=dataset,
        part=part,
        route=route,
        cases=len({result.id for result in results}),
        mentions=_pair(counts, "mention_rate", int(metrics["mention_cases"])),
        bullets=_pair(counts, "bullet_precision", int(metrics["mention_cases"])),
        has_enough=_pair(counts, "has_enough_accuracy", int(metrics["has_enough_cases"])),
        valid=counts["valid_rate"],
        p50_ms=float(metrics["latency_p50_ms"]),
        p95_ms=float(metrics["latency_p95_ms"]),
    )


def _longmemeval_row(row: Row, questions: Any, variant: str, results: Sequence[Any]) -> Row:
    """``row`` with LongMemEval's two scores: the rates as ``longmemeval_metrics`` gives
    them, the counts they are the ratios of from each question's scores."""
    from dataclasses import replace

    from supercontext_lab.eval.longmemeval import longmemeval_metrics, question_scores

    overall = longmemeval_metrics(questions, results)[variant]["all"]
    scored = [question_scores(questions.questions[result.id], result) for result in results]
    answers = [s["answer_in_bundle"] for s in scored if s["answer_in_bundle"] is not None]
    evidence = [s for s in scored if s["evidence_expected"] is not None]
    turns = [s["answer_turn_in_bundle"] for s in scored if s["answer_turn_in_bundle"] is not None]
    return replace(
        row,
        answer_turn=(sum(1 for found in turns if found), len(turns)),
        answer=(sum(1 for found in answers if found), len(answers)),
        evidence=(
            sum(len(s["evidence_cited"]) for s in evidence),
            sum(int(s["evidence_expected"]) for s in evidence),
        ),
        answer_rate=float(overall["answer_in_bundle"]),
        evidence_rate=float(overall["evidence_recall"]),
    )


def run(
    routes: Sequence[str],
    *,
    datasets: Sequence[str] = tuple(DATASETS),
    limit: int | None = None,
    log: Callable[[str], None],
) -> tuple[list[Row], dict[str, Any]]:
    """Evaluate the shipped scout on every route over ``datasets``; the table's rows and
    what the run was (seconds, load, cases)."""
    from supercontext_lab.eval import evaluate, load_dataset
    from supercontext_lab.eval.longmemeval import load_longmemeval

    variants = _variants(routes)
    load_at_start = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    started = time.perf_counter()
    rows: list[Row] = []
    for name in datasets:
        path, _ = DATASETS[name]
        questions = None
        if name == "longmemeval":
            questions = load_longmemeval(path)
            cases = _first(questions.cases, limit)
        else:
            cases = _first(load_dataset(path), limit)
        log(f"structures: {name}, {len(cases)} cases x {len(variants)} route(s)")
        # Unmeasured: a first run on a workspace opens it and builds its index (and a
        # local route starts its server), which is no pre-flight's cost.
        evaluate(_one_per_workspace(cases), variants, cache=False, progress=False)
        report = evaluate(cases, variants, cache=False, progress=False)
        # Every set with layouts is read layout by layout; the unseen set also workspace by
        # workspace (each its own user's).
        splits = [{case.id: case.structure for case in cases}]
        if name == "unseen":
            splits.insert(0, {c.id: c.workspace.name if c.workspace else None for c in cases})
        for route, variant in zip(routes, variants, strict=True):
            mine = [r for r in report.results if r.variant == variant.name]
            row = _row(name, "all", route, mine)
            if questions is not None:
                row = _longmemeval_row(row, questions, variant.name, mine)
            rows.append(row)
            for split in splits:
                for part in dict.fromkeys(p for p in split.values() if p is not None):
                    rows.append(_row(name, part, route, [r for r in mine if split[r.id] == part]))
    figures = {
        "routes": list(routes),
        "datasets": list(datasets),
        "limit": limit,
        "seconds": time.perf_counter() - started,
        "load_at_start": load_at_start,
        "load": os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0),
    }
    return rows, figures


def _rate(pair: tuple[int, int] | None, rate: float | None = None) -> str:
    from supercontext_lab.eval.scores import applicable

    if pair is None or not applicable(pair):
        return "—"  # no counts, or 0 of 0: the rate's SPEC value (1.0) is no measurement
    found, total = pair
    value = rate if rate is not None else found / total
    return f"{value:.2f} ({found} of {total})"


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"


def _label(row: Row) -> str:
    name = DATASETS[row.dataset][1]
    return name if row.part == "all" else f"{name}: {row.part}"


HEADER = (
    "dataset",
    "route",
    "cases",
    "mention rate",
    "bullet precision",
    "has_enough accuracy",
    "valid",
    "pre-flight p50 / p95",
    "answer_in_bundle",
    "answer turn quoted",
    "evidence_recall",
)


def table(rows: Sequence[Row], figures: dict[str, Any]) -> str:
    """The block's body: its heading, how it was measured, and the table."""
    cells = [
        [
            _label(row),
            f"`{row.route}`",
            str(row.cases),
            _rate(row.mentions),
            _rate(row.bullets),
            _rate(row.has_enough),
            f"{row.valid[0] / row.valid[1]:.0%}" if row.valid[1] else "—",
            f"{_ms(row.p50_ms)} / {_ms(row.p95_ms)}",
            _rate(row.answer, row.answer_rate),
            _rate(row.answer_turn),
            _rate(row.evidence, row.evidence_rate),
        ]
        for row in rows
    ]
    start, load = figures["load_at_start"], figures["load"]
    command = " ".join(
        ["python -m benchmarks structures"]
        + [f"--model {route}" for route in figures["routes"] if route != OFFLINE]
        + (
            [f"--dataset {name}" for name in figures["datasets"]]
            if list(figures["datasets"]) != list(DATASETS)
            else []
        )
        + ([f"--limit {figures['limit']}"] if figures["limit"] is not None else [])
        + ([f"--semantic {figures['semantic']}"] if figures.get("semantic") else [])
    )
    which = (
        f"The first {figures['limit']} cases of each dataset (of each layout in the "
        "structures set) only. "
        if figures["limit"] is not None
        else ""
    )
    return "\n".join(
        [
            "## The datasets by layout",
            "",
            f"{which}Measured with `{command}` in {figures['seconds']:.1f} s on "
            f"{os.cpu_count()} CPU cores (load average {start[0]:.1f} at the start, "
            f"{load[0]:.1f} at the end), no cache: every figure a fresh run of the shipped "
            "scout (`offline`: the embedded offline scout, a deterministic stand-in, not a "
            "language model), after one unmeasured run per workspace and route (the first "
            "opens the workspace and builds its index). Mention rate: the cases' expected mentions found anywhere in "
            "the envelope; bullet precision: the summary's bullets that hold one of them "
            "or cite a document the case names as answering it (`sources`); both over the "
            "cases that set mentions, as found of expected. has_enough "
            "accuracy: `has_enough_context` as the case expects. Pre-flight: one run's "
            "time from the request to the bundle. The structures set asks questions of "
            "published benchmarks (WikiTableQuestions, BIPIA EmailQA, Molweni, SQuAD 2.0) "
            "over their documents kept as notes, a row per layout; the unseen workspaces "
            "are fourteen users' workspaces and questions, written from the README alone, a "
            "row per workspace; on LongMemEval "
            "answer_in_bundle is the normalised answer in the summary (preference and "
            "abstention questions are not scored on it), the answer turn quoted a unit of "
            "a turn the benchmark marks as holding the answer (the abstention question has "
            "none) and evidence_recall the evidence sessions the bundle cites.",
            "",
            markdown_table(HEADER, cells),
        ]
    )


def write_block(path: Path, body: str) -> None:
    """Put ``body`` into ``path`` between :data:`BEGIN` and :data:`END`, replacing what
    was there, or at the end of the file when it has no such block."""
    block = f"{BEGIN}\n{body}\n{END}"
    text = path.read_text("utf-8") if path.exists() else "# Performance\n"
    if BLOCK.search(text):
        text = BLOCK.sub(lambda _: block, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    write_atomic(path, text)


def main(argv: Sequence[str], *, docs: Path, results: Path, log: Callable[[str], None]) -> int:
    """``python -m benchmarks structures [--model ID ...] [--dataset NAME ...] [--limit N]
    [--no-write]``: run, print, and (unless ``--no-write``) write the docs and results."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks structures",
        description="The shipped datasets, and the structures set by layout, on the offline "
        "scout (and any --model).",
    )
    parser.add_argument(
        "--model", action="append", default=[], metavar="ID", help="another route beside offline"
    )
    parser.add_argument(
        "--dataset", action="append", choices=list(DATASETS), help="only these datasets"
    )
    parser.add_argument("--limit", type=int, metavar="N", help="the first N cases of each")
    parser.add_argument(
        "--semantic",
        metavar="NAME",
        help="[memory] semantic for the run (minilm, openai, provider:model); only prints",
    )
    parser.add_argument("--no-write", action="store_true", help="only print the table")
    args = parser.parse_args(list(argv))
    if args.semantic is not None:
        from supercontext_lab.config import set_setting

        set_setting("memory.semantic", args.semantic)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be 1 or more")
    routes = [OFFLINE, *(model for model in args.model if model != OFFLINE)]
    datasets = [name for name in DATASETS if name in (args.dataset or DATASETS)]
    rows, figures = run(routes, datasets=datasets, limit=args.limit, log=log)
    figures["semantic"] = args.semantic
    body = table(rows, figures)
    print(body)
    if not (args.no_write or args.semantic):
        perf = docs / "performance.md"
        write_block(perf, body)
        results.mkdir(parents=True, exist_ok=True)
        data = {**figures, "rows": [asdict(row) for row in rows]}
        write_atomic(results / "structures.json", json.dumps(data, indent=2) + "\n")
        log(f"Wrote {perf} and {results / 'structures.json'}")
    return 0
