"""The pre-flight designs on the command line (SPEC §16).

    supercontext-lab scout --design pack "MESSAGE"             # the pack, no model
    supercontext-lab scout --deadline-ms 1500 --model local:smollm2 "MESSAGE"
    supercontext-lab cache build --workspace DIR [--json]      # the cached envelope, now

``scout --design NAME`` prepares the message in that design instead of running the scout
alone: ``pack``, ``cached`` (served from ``.supercontext/``, rebuilt when the workspace
changed), ``prefetch`` (nothing: a message on its own has no earlier turn whose lookup it
could be sent; exit 1), ``cold`` (nothing; exit 1) or ``scout``; ``--deadline-ms`` abandons a scout not
done by then and prepares with the pack instead. The output says which design prepared
it, with the deadline met or missed and the pre-flight's measured time; ``--json`` adds
``design``, ``prepared_by``, ``deadline_ms``, ``deadline_missed``, ``preflight_note``,
``preflight_ms`` and ``fallback_cut`` to the run's object.

Only argparse and the standard library are imported here; the engine loads when a
command runs.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from .common import PROG, UsageProblem, emit, emit_json

if TYPE_CHECKING:
    from ..harness.designs import PreflightSettings
    from ..harness.preflight import Preflight, ScoutCall
    from ..sources.workspace import Workspace

__all__ = [
    "add_cache_parser",
    "add_preflight_arguments",
    "deadline_argument",
    "preflight_json",
    "preflight_line",
    "prepare",
    "settings_from_args",
]

DESIGN_CHOICES = ("scout", "pack", "cached", "prefetch", "full-context", "tool-only", "cold")
"""The pre-flight designs, as ``harness.designs.DESIGNS`` lists them (a test holds them
equal; the engine is not imported to parse arguments)."""
PLACEMENT_CHOICES = ("prepend", "system-tail")
"""Where a prepared block sits in the orchestrator's request, as
``harness.designs.PLACEMENTS`` lists them (a test holds them equal)."""


def deadline_argument(text: str) -> float:
    """A ``--deadline-ms`` value: a finite number of milliseconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected milliseconds, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, not {text!r}")
    return value


def add_preflight_arguments(parser: argparse.ArgumentParser) -> None:
    """``--design`` and ``--deadline-ms``, for a command that prepares one message."""
    parser.add_argument(
        "--design",
        choices=DESIGN_CHOICES,
        help="prepare the message in this pre-flight design (default: the scout alone, or "
        "[preflight] design in config.toml for a turn)",
    )
    parser.add_argument(
        "--deadline-ms",
        type=deadline_argument,
        default=None,
        metavar="MS",
        help="abandon a scout not done by then and prepare with the pack (or nothing, with "
        '[preflight] fallback = "cold")',
    )


def settings_from_args(args: argparse.Namespace) -> PreflightSettings:
    """The ``[preflight]`` settings with ``--design`` and ``--deadline-ms`` applied."""
    from ..harness.designs import preflight_settings

    return preflight_settings().with_overrides(design=args.design, deadline_ms=args.deadline_ms)


def prepare(
    message: str,
    *,
    settings: PreflightSettings,
    workspace: Workspace,
    definition: Any,
    scout: ScoutCall,
    focus: str | None,
) -> Preflight:
    """The explicit path in a design: no gate, the message prepared as the design says."""
    from ..harness.preflight import run_preflight
    from ..harness.turn import failure_reason

    done = run_preflight(
        message,
        settings=settings,
        workspace=workspace,
        definition=definition,
        scout=scout,
        focus=focus,
    )
    if done.reason is None and done.run is not None and done.envelope is None:
        done.reason = failure_reason(done.run)
    return done


def preflight_line(done: Preflight) -> str:
    """One line saying which design prepared the message, for the text output."""
    if done.prepared_by is None:
        why = f"{done.reason}" if done.reason is not None else "no envelope"
        head = f"pre-flight: design {done.design}, nothing prepared ({why})"
    else:
        head = f"pre-flight: design {done.design}, prepared by {done.prepared_by}"
    if done.deadline_ms is not None and done.design == "scout":
        head += (
            f", deadline {done.deadline_ms:g} ms ({'missed' if done.missed_deadline else 'met'})"
        )
    return head + f", {done.elapsed_ms:.0f} ms"


def preflight_json(done: Preflight) -> dict[str, Any]:
    """The run's JSON object (SPEC §9) with the design's fields."""
    if done.run is not None:
        data = done.run.to_dict()
    else:
        data = {
            "envelope": None,
            "bundle": None,
            "problems": [f"{done.reason}: {done.reason.explanation}"] if done.reason else [],
            "trace": [],
            "elapsed_ms": round(done.elapsed_ms, 3),
        }
    data.update(
        design=done.design,
        prepared_by=done.prepared_by,
        deadline_ms=done.deadline_ms,
        deadline_missed=done.missed_deadline,
        preflight_note=done.note,
        preflight_ms=round(done.elapsed_ms, 3),
        fallback_cut=done.fallback_cut,
        notes=list(done.notes),
    )
    return data


# ----------------------------------------------------------------- cache build


def add_cache_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``cache`` command (``cache build``) to the CLI's subparsers."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "cache", help="the cached design's envelope, built ahead of time"
    )
    inner = parser.add_subparsers(dest="cache_command", required=True, parser_class=type(parser))
    build = inner.add_parser(
        "build",
        help="build the workspace's cached envelope now",
        description="Build the envelope the cached pre-flight design serves (profile, "
        "MEMORY.md, the notes most recalled or most recent) and store it in the "
        "workspace's .supercontext/ folder. It is also rebuilt by itself when the "
        "workspace changes. Exit 0 when built, 1 when the workspace gave nothing to quote, "
        "2 for bad input.",
    )
    build.add_argument(
        "--workspace", help="the workspace folder (default: the shipped demo's copy)"
    )
    build.add_argument(
        "--tokens",
        type=int,
        default=None,
        help="the envelope's budget in tokens (default: [preflight] cached_tokens, 1000)",
    )
    build.add_argument("--json", action="store_true", help="print one JSON object")
    build.set_defaults(handler=_cmd_cache_build)
    return parser


def _cmd_cache_build(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..harness.cached import CACHE_FILE, build_cached
    from ..harness.designs import preflight_settings
    from ..sources.demo import open_workspace
    from ..sources.memory import INDEX_DIR

    if args.workspace is not None and not Path(args.workspace).is_dir():
        raise UsageProblem(f"{PROG}: workspace folder not found: {args.workspace}")
    budget = args.tokens if args.tokens is not None else preflight_settings().cached_tokens
    if not 50 <= budget <= 100_000:
        raise UsageProblem(f"{PROG}: --tokens must be between 50 and 100000, not {budget}")
    workspace = open_workspace(args.workspace)
    try:
        cached = build_cached(workspace, budget=budget)
    except OSError as exc:
        raise UsageProblem(
            f"{PROG}: cannot write the cached envelope in {workspace.root / INDEX_DIR}: "
            f"{exc.strerror or exc}"
        ) from None
    path = workspace.root / INDEX_DIR / CACHE_FILE
    if args.json:
        emit_json({**cached.to_dict(), "path": str(path)})
    else:
        emit(
            f"cached envelope: {len(cached.envelope)} characters from "
            f"{len(cached.sources)} sources, built in {cached.build_ms:.0f} ms"
        )
        emit(f"stored in {path}")
        emit(cached.envelope)
    return 0 if cached.sources else 1
