"""``supercontext-lab scout``: run the context scout alone on one message.

    supercontext-lab scout "MESSAGE" [--workspace DIR] [--focus TEXT] [--agent agent.toml]
        [--model ID [--base-url URL] [--api-key-env NAME]] [--timeout S] [--json]

The explicit path: no gate, no flag. Prints one line on the run (status, workspace, model
as the user named it, duration, model calls, tokens), the trace step by step, the
envelope and the run's problems; ``--json`` prints the run's object instead. ``--design``
and ``--deadline-ms`` prepare the message in a pre-flight design (:mod:`.preflight`).
Exit status: 0 when the run gave a valid envelope, 1 when it did not, 2 for bad input.

The trace and the count of model calls are printed by :func:`print_trace` and
:func:`describe_calls`, which the ``demo`` command shares.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import (
    NO_PROGRESS_HELP,
    PROG,
    UsageProblem,
    emit,
    emit_json,
    plural,
    progress_on_stderr,
    read_text_input,
    text_argument,
    workspace_argument,
)
from .preflight import add_preflight_arguments

if TYPE_CHECKING:
    from ..agents.definition import AgentDefinition
    from ..harness.progress import RunProgress
    from ..models.base import ChatModel
    from ..routes import ModelRoute
    from ..scout import TraceStep
    from ..sources.workspace import Workspace

__all__ = ["add_scout_parser", "describe_calls", "print_trace"]


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


def add_scout_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``scout`` command to the CLI's subparsers."""
    scout: argparse.ArgumentParser = sub.add_parser(
        "scout", help="run the context scout alone on one message"
    )
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
    scout.add_argument("--no-progress", action="store_true", help=NO_PROGRESS_HELP)
    add_preflight_arguments(scout)
    scout.set_defaults(handler=_cmd_scout)
    return scout


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


def print_trace(trace: Sequence[TraceStep]) -> None:
    """A scout run's trace, one numbered line a step: model calls, tool calls, the
    grounding check and a missed deadline."""
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


def describe_calls(trace: Sequence[TraceStep], count: int) -> str:
    """``3 model calls (1 failed)``: a run's model calls, and how many of them failed."""
    failed = sum(1 for step in trace if step.kind == "model" and not step.ok)
    return plural(count, "model call") + (f" ({failed} failed)" if failed else "")


def _cmd_scout(args: argparse.Namespace) -> int:
    from ..scout import run_scout

    message = (
        read_text_input("-") if args.message == "-" else text_argument(args.message, "the message")
    )
    if args.focus is not None:
        text_argument(args.focus, "--focus")
    if not message.strip():
        raise UsageProblem(f"{PROG}: the message is empty")
    workspace = workspace_argument(args.workspace)
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
            f"{describe_calls(run.trace, run.model_calls)}, "
            f"{plural(run.usage.total_tokens, 'token')}"
        )
        print_trace(run.trace)
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
            print_trace(run.trace)
        emit(done.envelope if done.envelope is not None else "(no envelope)")
        for problem in run.problems if run is not None else []:
            emit(f"problem: {problem}")
    return 0 if done.envelope is not None else 1
