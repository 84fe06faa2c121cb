"""``supercontext-lab eval``: run a dataset under the baseline and other scout variants.

    supercontext-lab eval --dataset cases.jsonl --agent v2=variants/v2/agent.toml --json

The dataset may also be LongMemEval's official JSON (a list of questions with their chat
sessions): each question is then the first message of a new thread on a workspace that
holds its sessions (built in the lab home; with ``--workspace DIR``, every session is
imported into DIR and every question runs there), and the report adds
``evidence_recall`` and ``answer_in_bundle`` per question type (``"longmemeval"`` in the
JSON). The shipped definition always runs as ``baseline``; each ``--agent NAME=PATH`` (or
``PATH``, named after its folder) adds a variant, and each ``--model ID`` (``local:smollm2``,
``ollama:qwen2.5``, ``baseline:rank``) adds the shipped definition on that model, named
after the id. Whenever a variant runs a model, the no-model baselines ``rank`` and
``random`` (SPEC §14) run beside it (``--no-baselines`` leaves them out).

Pre-flight designs (SPEC §16): each ``--design NAME`` (``scout``, ``pack``, ``cached``,
``prefetch``, ``cold``) runs as a variant named after it, instead of ``baseline``; the one ``--model``
is then the scout design's. ``--end-to-end`` sends each case as the first message of a
new thread and scores the orchestrator's reply, cold and prepared, at temperature 0;
``--model`` sets the orchestrator too; a case's ``follow_ups`` are sent after it in the
same thread, and the reply metrics are also given per turn (the first turn and the later
ones, over cold, on the same cases). ``--deadline-ms`` is the scout design's pre-turn
deadline. ``--placement system-tail`` sends each design's block as a system message at the
tail of the orchestrator's request, never stored in the thread, instead of prepending it
to the message; given with ``--placement prepend`` too, every design runs both ways
(``pack`` and ``pack-system-tail``).

Prints a metrics table, every rate with its 95 % interval, the end-to-end metrics, the
paired comparison of every two variants, the latency of one run per variant (p50 and
p95) and what ran and what came from the cache, or with ``--json`` one object
``{"variants": [{"name", "design", "metrics", "intervals"}], "cases": [{"id", "variant",
"envelope", "problems", "scores", "turn"}], "paired": [...]}``. Exit status: 0 when the
evaluation ran, 1 when no run produced a valid envelope (and, end to end, no reply came),
2 for bad input.

Only argparse and the standard library are imported here; the evaluation machinery loads
when the command runs.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .common import PROG, UsageProblem, emit, emit_json, whole_number
from .preflight import DESIGN_CHOICES, PLACEMENT_CHOICES, deadline_argument

if TYPE_CHECKING:
    from ..eval.variants import Variant

__all__ = ["add_eval_parser", "parse_agent_option", "run_eval_command"]


_positive_int = whole_number(1)


def add_eval_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``eval`` subcommand to the CLI's subparsers."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "eval",
        help="evaluate scout variants on a JSONL dataset",
        description="Run every case of a dataset under the shipped scout (baseline) and "
        "each --agent variant, then print per-variant metrics.",
    )
    parser.add_argument(
        "--dataset",
        required=True,
        help="a JSONL dataset, one case a line, or LongMemEval's official JSON",
    )
    parser.add_argument(
        "--workspace",
        action="append",
        default=[],
        help="a workspace the dataset's lines may name (repeatable; besides folders below "
        "the dataset's own and the shipped demo); the first is used for cases that name "
        "none (default: the shipped demo)",
    )
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="add a variant from an agent.toml (repeatable; NAME defaults to its folder)",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="ID",
        help="add the shipped scout on a model (repeatable): local:smollm2, ollama:qwen2.5, "
        "baseline:rank, ...; the variant is named after the id",
    )
    parser.add_argument(
        "--no-baselines",
        action="store_true",
        help="do not add the no-model baselines rank and random beside model variants",
    )
    parser.add_argument(
        "--design",
        action="append",
        default=[],
        choices=DESIGN_CHOICES,
        help="run a pre-flight design as a variant named after it (repeatable), instead of "
        "the shipped scout alone; with --model, the scout design runs on that model",
    )
    parser.add_argument(
        "--placement",
        action="append",
        default=[],
        choices=PLACEMENT_CHOICES,
        help="where each design's block sits in the orchestrator's request (repeatable: "
        "each placement runs as its own variant, <design>-system-tail); default prepend",
    )
    parser.add_argument(
        "--end-to-end",
        action="store_true",
        help="send each case as the first message of a new thread and score the "
        "orchestrator's reply (cold and prepared, temperature 0); --model sets the "
        "orchestrator too",
    )
    parser.add_argument(
        "--deadline-ms",
        type=deadline_argument,
        default=None,
        metavar="MS",
        help="the scout design's pre-turn deadline: a scout not done by then is abandoned "
        "and the pack prepares the case",
    )
    parser.add_argument(
        "--executor",
        choices=["sequential", "local", "dask"],
        default="sequential",
        help="how to run the cases (default: sequential)",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=8,
        help="runs at once for the local executor; workers of a local Dask cluster",
    )
    parser.add_argument(
        "--repeats", type=_positive_int, default=1, help="runs per case and variant"
    )
    parser.add_argument("--dask-address", help="a Dask scheduler address such as tcp://host:8786")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", action="store_true", help="do not use the response cache")
    cache.add_argument(
        "--replay",
        action="store_true",
        help="serve recorded responses only; fail on any response not in the cache",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run_eval_command)
    return parser


def parse_agent_option(option: str) -> tuple[str, Path]:
    """``NAME=PATH`` or ``PATH`` (named after the agent.toml's folder, or the file's stem)."""
    from ..eval.variants import split_agent_option

    try:
        return split_agent_option(option)
    except ValueError as exc:
        raise UsageProblem(f"{PROG}: {exc}") from None


def _model_variants(ids: list[str]) -> list[Variant]:
    """One variant of the shipped definition per ``--model`` id, named after the id."""
    from ..errors import ConfigError
    from ..eval.variants import Variant, check_variant_name
    from ..routes import parse_model_id

    variants = []
    for model_id in ids:
        try:
            route = parse_model_id(model_id)
        except ConfigError as exc:
            raise UsageProblem(f"{PROG}: --model {model_id!r}: {exc}") from None
        name = re.sub(r"[^A-Za-z0-9_.+-]+", "-", model_id.strip()).strip("-.+_")[:64]
        try:
            check_variant_name(name)
        except ValueError as exc:
            raise UsageProblem(f"{PROG}: --model {model_id!r}: {exc}") from None
        variants.append(Variant.baseline(route).renamed(name))
    return variants


def _variants(
    options: list[str],
    models: list[str],
    *,
    baselines: bool,
    designs: Sequence[str] = (),
    placements: Sequence[str] = (),
) -> list[Variant]:
    """The variants of the command line: the shipped scout (``baseline``), or one variant
    per ``--design`` and ``--placement``; each ``--agent``; each ``--model`` (without
    ``--design``: with it, the one model is the scout design's); and the no-model
    baselines."""
    from ..agents.definition import load_agent_definition
    from ..eval.variants import (
        BASELINE,
        Variant,
        baseline,
        check_variant_name,
        design_variants,
        pick_baselines,
        uses_a_model,
    )

    if designs:
        route = _model_variants(models)[0].route if models else None
        variants = design_variants(designs, route, placements)
        models = []
    else:
        variants = [baseline()]
    for option in options:
        name, path = parse_agent_option(option)
        try:
            check_variant_name(name)
        except ValueError as exc:
            raise UsageProblem(f"{PROG}: --agent {option!r}: {exc}") from None
        if name in {variant.name for variant in variants}:
            reason = "is the shipped definition's" if name == BASELINE else "is used twice"
            raise UsageProblem(f"{PROG}: variant name {name!r} {reason}; choose another name")
        if not path.is_file():
            raise UsageProblem(f"{PROG}: agent definition not found: {path}")
        variants.append(Variant(name, load_agent_definition(path)))
    for variant in _model_variants(models):
        if variant.name in {known.name for known in variants}:
            raise UsageProblem(f"{PROG}: variant name {variant.name!r} is used twice")
        variants.append(variant)
    if baselines and any(uses_a_model(variant) for variant in variants):
        taken = {variant.name for variant in variants}
        variants.extend(v for v in pick_baselines() if v.name not in taken)
    return variants


def _json_output(report: Any) -> dict[str, Any]:
    return {
        "variants": [
            {
                "name": variant.name,
                "design": variant.design,
                "model": variant.model,
                "metrics": variant.metrics,
                "intervals": {name: list(pair) for name, pair in variant.intervals.items()},
                # The counts behind each rate: 0 of 0 is SPEC's value, but not applicable.
                "counts": {name: list(pair) for name, pair in variant.counts.items()},
                **({"spread": variant.spread} if variant.spread else {}),
                **({"lift": variant.lift.to_dict()} if variant.lift is not None else {}),
                "cache": {
                    "hits": variant.cache_hits,
                    "misses": variant.cache_misses,
                    "reused_runs": variant.reused_runs,
                },
            }
            for variant in report.variants
        ],
        "cases": [
            {
                "id": result.id,
                "variant": result.variant,
                "repeat": result.repeat,
                "envelope": result.envelope,
                "problems": list(result.problems),
                "scores": result.scores.to_dict(),
                "model_calls": result.model_calls,
                "tokens": result.tokens,
                "elapsed_ms": round(result.elapsed_ms, 3),
                "from_cache": result.from_cache,
                **({"turn": result.turn} if result.turn is not None else {}),
                **({"later_turns": result.later_turns} if result.later_turns else {}),
            }
            for result in report.results
        ],
        **({"per_turn": [row.to_dict() for row in rows]} if (rows := report.per_turn()) else {}),
        "paired": [pair.to_dict() for pair in report.paired],
        "statistics": report.statistics(),
        "few_cases_note": report.few_cases_note(),
        "settings": dict(report.settings),
        "wall_s": round(report.wall_s, 3),
    }


def run_eval_command(args: argparse.Namespace) -> int:
    """The ``eval`` handler: returns the exit status."""
    from ..eval.dataset import load_dataset
    from ..eval.longmemeval import (
        is_longmemeval,
        load_longmemeval,
        longmemeval_metrics,
        longmemeval_text,
        question_scores,
    )
    from ..eval.runner import evaluate

    dataset = Path(args.dataset)
    if not dataset.is_file():
        # A FIFO or a device is never opened: it could block or never end.
        found = "is not a regular file" if dataset.exists() else "not found"
        raise UsageProblem(f"{PROG}: dataset file {found}: {args.dataset}")
    for folder in args.workspace:
        if not Path(folder).is_dir():
            raise UsageProblem(f"{PROG}: workspace folder not found: {folder}")
    if args.dask_address is not None and args.executor != "dask":
        raise UsageProblem(f"{PROG}: --dask-address needs --executor dask")
    if args.placement and not args.design:
        raise UsageProblem(f"{PROG}: --placement needs --design (it places a design's block)")
    if (args.design or args.end_to_end) and len(args.model) > 1:
        what = "--design" if args.design else "--end-to-end"
        raise UsageProblem(
            f"{PROG}: {what} takes at most one --model (it runs the scout design and the "
            "orchestrator)"
        )
    longmemeval = None
    if is_longmemeval(dataset):
        longmemeval = load_longmemeval(
            dataset, workspace=args.workspace[0] if args.workspace else None
        )
        cases = longmemeval.cases
    else:
        cases = load_dataset(dataset, allowed_workspaces=args.workspace)
    variants = _variants(
        args.agent,
        args.model,
        baselines=not args.no_baselines,
        designs=args.design,
        placements=args.placement,
    )
    orchestrator = _model_variants(args.model)[0].route if args.model else None
    cache: bool | Literal["replay"] = "replay" if args.replay else not args.no_cache
    report = evaluate(
        cases,
        variants,
        executor=args.executor,
        concurrency=args.concurrency,
        repeats=args.repeats,
        cache=cache,
        dask_address=args.dask_address,
        progress=sys.stderr.isatty(),
        workspace=args.workspace[0] if args.workspace else None,
        end_to_end=args.end_to_end,
        orchestrator=orchestrator,
        deadline_ms=args.deadline_ms,
    )
    by_type = longmemeval_metrics(longmemeval, report.results) if longmemeval else None
    if args.json:
        output = _json_output(report)
        if longmemeval is not None:
            output["longmemeval"] = {
                "variants": by_type,
                "cases": [
                    question_scores(longmemeval.questions[result.id], result)
                    for result in report.results
                ],
            }
        emit_json(output)
    else:
        emit(report.to_text())
        parts = (
            report.intervals_text(),
            report.replies_text(),
            report.per_turn_text(),
            report.paired_text(),
        )
        for part in parts:
            if part:
                emit("")
                emit(part)
        emit("")
        if by_type is not None:
            emit(longmemeval_text(by_type))
            if report.few_cases_note():
                emit(report.few_cases_note())
            emit("")
        emit(report.latency_text())
        emit("")
        emit(report.footer())
    replied = any(r.turn and r.turn.get("orchestrator_error") is None for r in report.results)
    return 0 if any(result.ok for result in report.results) or replied else 1
