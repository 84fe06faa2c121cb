"""``supercontext-lab demo``: one first turn on the demo workspace, offline by default.

    supercontext-lab demo [--message TEXT] [--workspace DIR] [--model ID] [--design NAME]
        [--deadline-ms MS]

``--model`` runs the scout and the reply on one model for this run; without it both
follow the lab's config (``supercontext-lab config model ID`` sets them; offline until then).

Prints the turn in the order of the README's diagram: the message, the gate's decision,
the scout's trace, the bundle, what the orchestrator receives, its reply, then the
timings. The demo keeps no past conversation, so it prints the same each time. Exit
status: 0 when the orchestrator replied, 1 when it failed, 2 for bad input.
"""

from __future__ import annotations

import argparse
from typing import Any, Literal

from .common import (
    NO_PROGRESS_HELP,
    emit,
    plural,
    progress_on_stderr,
    text_argument,
    workspace_argument,
)
from .preflight import add_preflight_arguments
from .scout import describe_calls, print_trace

__all__ = ["DEMO_MESSAGE", "add_demo_parser"]

_ROLES: tuple[Literal["scout", "orchestrator"], ...] = ("scout", "orchestrator")

DEMO_MESSAGE = "Help me finish the sensitivity analysis section for the grant renewal"
"""The first message the demo sends unless ``--message`` says otherwise."""


def add_demo_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``demo`` command to the CLI's subparsers."""
    demo: argparse.ArgumentParser = sub.add_parser(
        "demo", help="run one first turn on the demo workspace (offline unless told otherwise)"
    )
    demo.add_argument("--message", default=DEMO_MESSAGE, help="the first message to send")
    demo.add_argument("--workspace", help="a workspace folder (default: the shipped demo)")
    demo.add_argument(
        "--model",
        help="a model id for the scout and the reply, such as local:smollm2 (default: the "
        "config's, offline unless `config model` set one)",
    )
    demo.add_argument("--no-progress", action="store_true", help=NO_PROGRESS_HELP)
    add_preflight_arguments(demo)
    demo.set_defaults(handler=_cmd_demo)
    return demo


def _cmd_demo(args: argparse.Namespace) -> int:
    """One first turn, printed in the order of the README's diagram: message, gate, scout,
    bundle, what the orchestrator receives, its reply, then the timings."""
    from ..harness import Thread

    message = text_argument(args.message, "--message")
    workspace = workspace_argument(args.workspace)
    # The demo shows one first turn, the same each time: it keeps no past conversation
    # that a later demo would recall.
    models: dict[str, Any] = {}
    if args.model is not None:
        from ..models.routing import model_for_route
        from ..routes import parse_model_id

        route = parse_model_id(text_argument(args.model, "--model"))
        models = {role + "_model": model_for_route(route, role=role) for role in _ROLES}
    thread = Thread(
        workspace, archive=False, design=args.design, deadline_ms=args.deadline_ms, **models
    )
    # The demo is a copy in the lab home: say where, so it can be opened (and copied to
    # make one's own; the copy itself is replaced when the shipped demo changes).
    where = " (the shipped demo, copied there)" if args.workspace is None else ""
    emit(
        f"== Message, the first of a new thread (Super Context "
        f"{'on' if thread.enabled else 'off'}, read when the thread started) on workspace "
        f"{workspace.root}{where}"
    )
    emit(f"  {message}")
    with progress_on_stderr(not args.no_progress) as progress:
        if progress is not None:
            progress.turn_of(thread, message)
        result = thread.send(message, on_step=progress.on_step if progress is not None else None)
    emit("== Gate")
    if result.preparation == "skipped" and result.reason is not None:
        emit(f"  no scout: {result.reason} ({result.reason.explanation})")
    else:
        does = {
            "pack": "the pack gathers it (no model)",
            "cached": "the cached envelope is served",
            "prefetch": "the pack of an earlier lookup is sent",
        }.get(result.design, "the scout runs")
        emit(f"  first turn of a new thread, flag on, message worth preparing: {does}")
    for line in result.design_lines():
        emit(f"  pre-flight {line}")
    run = result.scout
    if run is not None:
        step = "Scout" if result.prepared_by in (None, "scout") else "Pre-flight"
        emit(
            f"== {step} ({run.model_name}, read-only tools): "
            f"{describe_calls(run.trace, run.model_calls)}, "
            f"{plural(run.usage.total_tokens, 'token')}, {run.elapsed_ms:.1f} ms"
        )
        print_trace(run.trace)
    envelope = result.envelope
    if envelope is not None:
        emit(
            f"== Bundle: extracted, parsed, fitted to max_result_chars "
            f"({len(envelope)} of {thread.definition.max_result_chars} characters)"
        )
        emit(envelope)
        if result.goal_from_bundle:
            emit(f"  → thread goal (the bundle's proposed_goal): {result.goal}")
    else:
        why = f"{result.reason}: {result.reason_detail}" if result.reason_detail else result.reason
        emit(f"== Bundle: none, the turn starts cold ({why})")
    sent = result.sent_message
    emit(f"== What the orchestrator receives ({len(sent)} characters)")
    if envelope is not None and envelope in sent:
        # The envelope was just printed in full; print it once.
        sent = sent.replace(
            envelope, "[context_bundle] … [/context_bundle]   (the bundle above)", 1
        )
    emit(sent)
    withheld = (
        "agent_prepare_context withheld: the harness has just prepared the context"
        if result.prepared
        else "agent_prepare_context included"
    )
    emit(
        f"== Orchestrator ({result.orchestrator_model}): "
        f"{plural(len(result.orchestrator_tools), 'tool')} offered, {withheld}"
    )
    emit(result.reply or f"(no reply: {result.orchestrator_error})")
    emit(_timing_line(result.timings_ms, run.elapsed_ms if run is not None else None))
    return 0 if result.orchestrator_error is None else 1


def _timing_line(timings: dict[str, float], scout_ms: float | None) -> str:
    preparation = f"preparation {timings['preparation_ms']:.1f} ms"
    if scout_ms is not None:
        # The scout's own clock starts once its tools are open; the rest of the
        # preparation is the gate, the model route and opening those tools.
        other = max(timings["preparation_ms"] - scout_ms, 0.0)
        preparation += (
            f" (the scout's run {scout_ms:.1f} ms, plus {other:.1f} ms for the gate, the "
            "model route and opening the scout's tools)"
        )
    return (
        f"== Timing: {preparation}, orchestrator {timings['orchestrator_ms']:.1f} ms, "
        f"total {timings['total_ms']:.1f} ms"
    )
