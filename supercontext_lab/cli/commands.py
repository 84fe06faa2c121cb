"""The ``supercontext-lab`` command line.

Exit codes: 0 success, 1 the job ran but produced no valid result (for example a model
output that would be rejected), 2 bad input (one line on stderr, nothing on stdout, no
traceback).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..errors import SupercontextError
from .common import (
    PROG,
    Parser,
    UsageProblem,
    emit,
    emit_json,
    progress_on_stderr,
    read_text_input,
    text_argument,
)
from .preflight import add_preflight_arguments

if TYPE_CHECKING:
    from ..agents.definition import AgentDefinition
    from ..bundle import ContextBundle
    from ..harness.progress import RunProgress
    from ..models.base import ChatModel
    from ..routes import ModelRoute
    from ..scout import Dropped, TraceStep
    from ..sources.workspace import Workspace

__all__ = ["main"]


def _seconds(text: str) -> float:
    """A ``--timeout`` value: a finite number of seconds above zero (``inf`` would
    overflow the socket timeouts and ``nan`` would silently remove the bound)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, not {text!r}")
    return value


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _cmd_bundle_check(args: argparse.Namespace) -> int:
    from ..bundle import bundle_rejection_reason, parse_context_bundle
    from ..bundle.lint import bundle_warnings
    from ..bundle.render import render_plain

    output = read_text_input(args.file)
    bundle = parse_context_bundle(output)
    if bundle is None:
        reason = bundle_rejection_reason(output) or "the output holds no usable envelope"
        if args.json:
            emit_json({"valid": False, "accepted": False, "reason": reason, "warnings": []})
        else:
            emit(f"rejected: {reason}")
        return 1
    # "valid" is the harness's rule (SPEC §2.1); --strict also refuses what it would
    # read only in part.
    warnings = bundle_warnings(output)
    unknown = _name_check(bundle, args.workspace)
    accepted = not (args.strict and warnings) and not unknown
    if args.json:
        report = {"valid": True, "accepted": accepted, "warnings": warnings}
        if args.workspace is not None:
            report["names"] = [item.to_dict() for item in unknown]
        emit_json({**report, "bundle": _checked_bundle_json(bundle)})
        return 0 if accepted else 1
    for item in unknown:
        emit(f"unknown name: {item.kind} {item.item!r}: {item.why}")
    if unknown:
        emit(f"rejected: {_plural(len(unknown), 'name')} not found in the workspace")
    elif not accepted:
        emit(f"rejected (--strict): {_plural(len(warnings), 'warning')}")
    elif warnings:
        emit(f"accepted, with {_plural(len(warnings), 'warning')}: the harness would use it")
    else:
        emit("accepted: the harness would use this envelope")
    for warning in warnings:
        emit(f"warning: {warning}")
    emit(render_plain(bundle))
    return 0 if accepted else 1


def _checked_bundle_json(bundle: ContextBundle) -> dict[str, Any]:
    """The bundle as ``bundle check --json`` prints it: a tool call's ``args`` is the JSON
    object the envelope wrote (a sketch that is not a JSON object stays its text)."""
    data = bundle.to_dict()
    for call, shown in zip(
        bundle.recommended_tool_calls, data["recommended_tool_calls"], strict=True
    ):
        if call.args_json is not None:
            shown["args"] = call.args_json
    return data


def _name_check(bundle: ContextBundle, workspace: str | None) -> list[Dropped]:
    """The grounding check's name checks against ``--workspace`` (none without it)."""
    if workspace is None:
        return []
    from ..scout.grounding import check_names

    return check_names(bundle, _workspace(workspace))


def _cmd_config(args: argparse.Namespace) -> int:
    from ..config import set_super_context_enabled, super_context_status

    if args.action == "set":
        value = {"on": True, "off": False}[args.value]
        set_super_context_enabled(value)
    status = super_context_status()
    state = "on" if status.enabled else "off"
    if args.action == "set" and status.enabled != (args.value == "on"):
        emit(f"super_context_enabled: {state} (saved {args.value}, overridden by {status.detail})")
    else:
        emit(f"super_context_enabled: {status.describe()}")
    return 0


DEMO_MESSAGE = "Help me finish the sensitivity analysis section for the grant renewal"


def _workspace(path: str | None) -> Workspace:
    from ..sources.demo import open_workspace

    if path is not None and not Path(path).is_dir():
        raise UsageProblem(f"{PROG}: workspace folder not found: {path}")
    return open_workspace(path)


def _definition(path: str | None) -> AgentDefinition:
    from ..agents.definition import default_agent_definition, load_agent_definition

    if path is None:
        return default_agent_definition()
    if not Path(path).is_file():
        # A FIFO or a device is never opened: it could block or never end.
        found = "is not a regular file" if Path(path).exists() else "not found"
        raise UsageProblem(f"{PROG}: agent definition {found}: {path}")
    return load_agent_definition(Path(path))


def _scout_route(args: argparse.Namespace, definition: AgentDefinition) -> ModelRoute:
    """The scout's route: ``--model`` (with ``--base-url``), else the configured one."""
    from ..routes import get_model_route, parse_model_id

    if args.model is None:
        if args.base_url is not None or args.api_key_env is not None:
            raise UsageProblem(f"{PROG}: --base-url and --api-key-env need --model")
        return get_model_route(definition.model.hint)
    return parse_model_id(args.model, base_url=args.base_url, api_key_env=args.api_key_env)


def _scout_model(route: ModelRoute, progress: RunProgress | None) -> ChatModel:
    """The model of ``route``; a local one may start its server first, and says so."""
    from ..harness.progress import starts_a_server
    from ..models.routing import model_for_route

    if progress is not None and starts_a_server(route):
        from ..models.gguf import check_gguf
        from ..models.local import resolve_gguf

        # A missing or broken file, or a missing extra, is bad input: one line, before any
        # progress is shown.
        check_gguf(resolve_gguf(route.model))
        progress.starting_model(route.label or f"local:{route.model or 'smollm2'}")
    return model_for_route(route, role="scout")


def _print_trace(trace: Sequence[TraceStep]) -> None:
    for number, step in enumerate(trace, start=1):
        if step.kind == "deadline":
            emit(f"  {number:>2}. deadline at {step.started_ms:g} ms: {step.result_preview}")
            continue
        if step.kind == "model":
            grace = " (final call, no tools)" if step.grace else ""
            if not step.ok:
                emit(
                    f"  {number:>2}. model call {step.iteration}{grace}: FAILED after "
                    f"{step.duration_ms:.1f} ms: {step.text_preview}"
                )
                continue
            asked = f" → calls {', '.join(step.tool_calls)}" if step.tool_calls else " → answer"
            emit(
                f"  {number:>2}. model call {step.iteration}{grace}: {step.tokens} tokens, "
                f"{step.duration_ms:.1f} ms{asked}"
            )
        elif step.kind == "check":
            # The grounding check of the envelope, after the last model call.
            state = "ok" if step.ok else "emptied the bundle"
            emit(
                f"  {number:>2}. grounding check [{state}] {step.duration_ms:.1f} ms: "
                f"{step.result_preview[:100]}"
            )
        else:
            state = "REFUSED" if step.refused else ("ok" if step.ok else "error")
            emit(
                f"  {number:>2}. tool {step.tool}({step.arguments}) [{state}] "
                f"{step.duration_ms:.1f} ms: {step.result_preview[:100]}"
            )


def _model_label(args: argparse.Namespace, model_name: str) -> str:
    """The route as the user named it (``ollama:qwen2.5``), with its server when that was
    given; without --model, the configured model's own name."""
    if args.model is None:
        return model_name
    label = args.model.strip()
    return f"{label} at {args.base_url}" if args.base_url else label


def _calls(trace: Sequence[TraceStep], count: int) -> str:
    failed = sum(1 for step in trace if step.kind == "model" and not step.ok)
    return _plural(count, "model call") + (f" ({failed} failed)" if failed else "")


def _cmd_scout(args: argparse.Namespace) -> int:
    from ..scout import run_scout

    message = (
        read_text_input("-") if args.message == "-" else text_argument(args.message, "the message")
    )
    if args.focus is not None:
        text_argument(args.focus, "--focus")
    if not message.strip():
        raise UsageProblem(f"{PROG}: the message is empty")
    workspace = _workspace(args.workspace)
    definition = _definition(args.agent)
    if args.design is not None or args.deadline_ms is not None:
        return _scout_in_design(args, message, workspace, definition)
    route = _scout_route(args, definition)
    with progress_on_stderr(not args.no_progress) as progress:
        model = _scout_model(route, progress)
        if progress is not None:
            progress.scout(model, definition, label=args.model and args.model.strip())
        run = run_scout(
            message,
            workspace=workspace,
            model=model,
            definition=definition,
            focus=args.focus,
            timeout_s=args.timeout,
            on_step=progress.on_step if progress is not None else None,
        )
    if args.json:
        emit_json(run.to_dict())
    else:
        emit(
            f"scout: {run.status} on workspace {workspace.root.name} with "
            f"{_model_label(args, run.model_name)} in {run.elapsed_ms:.0f} ms, "
            f"{_calls(run.trace, run.model_calls)}, {_plural(run.usage.total_tokens, 'token')}"
        )
        _print_trace(run.trace)
        emit(run.envelope if run.envelope is not None else "(no envelope)")
        for problem in run.problems:
            emit(f"problem: {problem}")
    return 0 if run.ok else 1


def _scout_in_design(
    args: argparse.Namespace, message: str, workspace: Workspace, definition: AgentDefinition
) -> int:
    """``scout --design`` / ``--deadline-ms``: the message prepared in a pre-flight design."""
    from ..scout import run_scout
    from .preflight import preflight_json, preflight_line, prepare, settings_from_args

    settings = settings_from_args(args)

    def scout(timeout_s: float | None, on_step: Any) -> Any:
        # The model is built only when the design runs the scout.
        return run_scout(
            message,
            workspace=workspace,
            model=_scout_model(_scout_route(args, definition), None),
            definition=definition,
            focus=args.focus,
            timeout_s=args.timeout if timeout_s is None else timeout_s,
            on_step=on_step,
        )

    done = prepare(
        message,
        settings=settings,
        workspace=workspace,
        definition=definition,
        scout=scout,
        focus=args.focus,
    )
    if args.json:
        emit_json(preflight_json(done))
    else:
        emit(preflight_line(done))
        if done.note:
            emit(f"  {done.note}")
        run = done.run
        if run is not None:
            _print_trace(run.trace)
        emit(done.envelope if done.envelope is not None else "(no envelope)")
        for problem in run.problems if run is not None else []:
            emit(f"problem: {problem}")
    return 0 if done.envelope is not None else 1


def _cmd_demo(args: argparse.Namespace) -> int:
    """One first turn, printed in the order of the README's diagram: message, gate, scout,
    bundle, what the orchestrator receives, its reply, then the timings."""
    from ..harness import Thread

    message = text_argument(args.message, "--message")
    workspace = _workspace(args.workspace)
    # The demo shows one first turn, the same each time: it keeps no past conversation
    # that a later demo would recall.
    thread = Thread(workspace, archive=False, design=args.design, deadline_ms=args.deadline_ms)
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
        }.get(result.design, "the scout runs")
        emit(f"  first turn of a new thread, flag on, message worth preparing: {does}")
    for line in result.design_lines():
        emit(f"  pre-flight {line}")
    run = result.scout
    if run is not None:
        step = "Scout" if result.prepared_by in (None, "scout") else "Pre-flight"
        emit(
            f"== {step} ({run.model_name}, read-only tools): {_calls(run.trace, run.model_calls)}, "
            f"{_plural(run.usage.total_tokens, 'token')}, {run.elapsed_ms:.1f} ms"
        )
        _print_trace(run.trace)
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
        f"{_plural(len(result.orchestrator_tools), 'tool')} offered, {withheld}"
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


_NO_PROGRESS = (
    "print no progress on stderr (by default: a live line on a terminal, a plain line per "
    "phase otherwise; the result stays alone on stdout)"
)


def _build_parser() -> Parser:
    parser = Parser(prog=PROG, description="Run and inspect the SuperContext context scout.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    bundle = sub.add_parser("bundle", help="work with [context_bundle] envelopes")
    bundle_sub = bundle.add_subparsers(dest="bundle_command", required=True, parser_class=Parser)
    check = bundle_sub.add_parser(
        "check",
        help="parse a model output and say whether its envelope would be accepted",
        description="Parse a model output as the harness does and say whether its envelope "
        "would be accepted. Two verdicts (the --json keys): valid means the output holds "
        "exactly one well-formed [context_bundle] envelope the harness can read; an output "
        "that is not valid is always rejected. accepted means valid and not refused by the "
        "options: --strict refuses an envelope with warnings (unknown keys, unreadable "
        "values, a missing summary), which the harness itself would read in part, and "
        "--workspace refuses recommended tools or skills the workspace lacks. So "
        '"valid": true, "accepted": false says the harness would use the envelope but the '
        "stricter check did not pass. In --json output a tool call's args is the JSON "
        "object the envelope wrote (a sketch that is not JSON stays text). Exit status: 0 "
        "when accepted, 1 otherwise.",
    )
    check.add_argument("file", help="a file holding the model output, or - for stdin")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument(
        "--strict",
        action="store_true",
        help="also fail (exit 1) when there are warnings: unknown keys, unreadable values, "
        "a missing summary",
    )
    check.add_argument(
        "--workspace",
        help="also check that every recommended tool is in this workspace's orchestrator "
        "catalogue and every skill is installed or in its registry (exit 1 otherwise)",
    )
    check.set_defaults(handler=_cmd_bundle_check)

    demo = sub.add_parser("demo", help="run one first turn on the demo workspace, offline")
    demo.add_argument("--message", default=DEMO_MESSAGE, help="the first message to send")
    demo.add_argument("--workspace", help="a workspace folder (default: the shipped demo)")
    demo.add_argument("--no-progress", action="store_true", help=_NO_PROGRESS)
    add_preflight_arguments(demo)
    demo.set_defaults(handler=_cmd_demo)

    scout = sub.add_parser("scout", help="run the context scout alone on one message")
    scout.add_argument("message", help="the user's message (- reads stdin)")
    scout.add_argument("--workspace", help="a workspace folder (default: the shipped demo)")
    scout.add_argument("--focus", help="what the caller wants the scout to focus on")
    scout.add_argument("--agent", help="an agent.toml to use instead of the shipped scout")
    scout.add_argument("--json", action="store_true", help="print one JSON object")
    scout.add_argument(
        "--model", help="a model id such as local:smollm2, ollama:qwen2.5 or gpt-4o-mini"
    )
    scout.add_argument("--base-url", help="an OpenAI-compatible base URL including /v1")
    scout.add_argument("--api-key-env", help="the NAME of the variable holding the API key")
    scout.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        help="wall-clock limit of the run in seconds (default 120; 600 for local: models)",
    )
    scout.add_argument("--no-progress", action="store_true", help=_NO_PROGRESS)
    add_preflight_arguments(scout)
    scout.set_defaults(handler=_cmd_scout)

    config = sub.add_parser("config", help="read or set the Super Context flag")
    config_sub = config.add_subparsers(dest="action", required=True, parser_class=Parser)
    config_sub.add_parser("get", help="print the effective flag and its source").set_defaults(
        handler=_cmd_config
    )
    setter = config_sub.add_parser("set", help="persist the flag in config.toml")
    setter.add_argument("value", choices=["on", "off"])
    setter.set_defaults(handler=_cmd_config)

    # Imported here so that importing this module stays light (the handler imports the rest).
    from .eval import add_eval_parser
    from .memory import add_memory_parser
    from .preflight import add_cache_parser
    from .workspace import add_workspace_parser

    add_eval_parser(sub)
    add_memory_parser(sub)
    add_workspace_parser(sub)
    add_cache_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except UsageProblem as exc:
        emit(str(exc), err=True)
        return 2
    except SupercontextError as exc:
        emit(f"{PROG}: error: {exc}", err=True)
        return 2
    except KeyboardInterrupt:
        emit(f"{PROG}: interrupted", err=True)
        return 130
