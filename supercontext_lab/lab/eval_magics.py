"""``%scout_eval``: evaluate scout variants on a dataset from a notebook cell.

    %scout_eval cases.jsonl --agent v2=variants/v2/agent.toml --executor local --out report

runs every case under the shipped definition (``baseline``) and each ``--agent`` variant
(or each pre-flight ``--design``, SPEC §16; ``--end-to-end`` also scores the orchestrator's
first reply), stores the :class:`~supercontext_lab.eval.report.EvalReport` in the notebook's namespace
under ``--out`` (default ``eval_report``) and returns an
:class:`~supercontext_lab.lab.eval_widget.EvalComparison` widget showing it. Mistakes
(a missing file, an invalid dataset line or agent.toml, a bad option) become one-line
``UsageError``s.
"""

from __future__ import annotations

from pathlib import Path

from IPython.core import magic
from IPython.core.error import UsageError

from ..eval.dataset import load_dataset
from ..eval.runner import evaluate
from ..eval.variants import (
    BASELINE,
    Variant,
    baseline,
    check_variant_name,
    design_variants,
    split_agent_option,
)
from ..harness.designs import DESIGNS, PLACEMENTS
from ..routes import parse_model_id
from .eval_widget import EvalComparison
from .magic_io import argument, line_magic, magic_arguments, parse_argstring, usage_errors

__all__ = ["EvalMagics"]


def _positive(value: int, option: str) -> int:
    if value < 1:
        raise UsageError(f"{option} must be at least 1, not {value}.")
    return value


def agent_variant(option: str, taken: set[str]) -> Variant:
    """A variant from ``NAME=PATH`` or ``PATH`` (named after the agent.toml's folder)."""
    try:
        name, path = split_agent_option(option)
    except ValueError as exc:
        raise UsageError(f"{exc}.") from None
    try:
        check_variant_name(name)
    except ValueError as exc:
        raise UsageError(f"--agent {option!r}: {exc}.") from None
    if name in taken:
        reason = "is the shipped definition's name" if name == BASELINE else "is used twice"
        raise UsageError(f"variant name {name!r} {reason}; use --agent OTHER_NAME={path}.")
    if not path.is_file():
        raise UsageError(f"agent definition not found: {path}; pass the path of an agent.toml.")
    return Variant.from_path(name, path)


@magic.magics_class
class EvalMagics(magic.Magics):
    """The evaluation magic, ``%scout_eval``."""

    def _current_workspace(self) -> str | None:
        """The workspace the other magics read now (the current thread's, else the
        configured one), so an evaluation follows it too; ``None`` for the demo."""
        lab = self.shell.magics_manager.registry.get("SupercontextMagics") if self.shell else None
        folder = lab.current_workspace() if lab is not None else None
        return str(folder) if folder is not None else None

    @magic_arguments()
    @argument("dataset", help="a JSONL dataset, one case a line")
    @argument(
        "--agent",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="add a variant from an agent.toml (repeatable; NAME defaults to its folder)",
    )
    @argument(
        "--executor",
        choices=["sequential", "local", "dask"],
        default="sequential",
        help="how to run the cases (default: sequential)",
    )
    @argument("--concurrency", type=int, default=8, help="runs at once (local, dask)")
    @argument("--repeats", type=int, default=1, help="runs per case and variant")
    @argument("--no-cache", action="store_true", help="do not use the response cache")
    @argument(
        "--replay", action="store_true", help="recorded responses only; fail on a missing one"
    )
    @argument(
        "--workspace",
        help=(
            "workspace for cases that name none (default: the current thread's, else "
            "SupercontextMagics.workspace, else the demo)"
        ),
    )
    @argument("--dask-address", help="a Dask scheduler address such as tcp://host:8786")
    @argument("--no-progress", action="store_true", help="hide the progress bar")
    @argument(
        "--out", default="eval_report", help="variable that receives the report (eval_report)"
    )
    @argument(
        "--design",
        action="append",
        default=[],
        choices=list(DESIGNS),
        help="run a pre-flight design as a variant named after it (repeatable), instead of "
        "the shipped scout alone",
    )
    @argument(
        "--placement",
        action="append",
        default=[],
        choices=list(PLACEMENTS),
        help="where each design's block sits in the orchestrator's request (repeatable: "
        "each placement runs as its own variant, <design>-system-tail); default prepend",
    )
    @argument(
        "--end-to-end",
        action="store_true",
        help="score the orchestrator's first reply, cold and prepared, at temperature 0",
    )
    @argument(
        "--model",
        default=None,
        help="a model id (local:smollm2, ollama:qwen2.5): the scout design's and, end to "
        "end, the orchestrator's",
    )
    @argument(
        "--deadline-ms", type=float, default=None, help="the scout design's pre-turn deadline"
    )
    @line_magic
    @usage_errors
    def scout_eval(self, line: str) -> EvalComparison:
        """Evaluate the shipped scout (``baseline``) and each ``--agent`` on DATASET, or
        each ``--design``; ``--end-to-end`` scores the orchestrator's reply too."""
        args = parse_argstring(self.scout_eval, line)
        if not args.out.isidentifier():
            raise UsageError(f"--out {args.out!r} is not a Python variable name.")
        if args.no_cache and args.replay:
            raise UsageError("--no-cache and --replay exclude each other; pick one.")
        if args.dask_address and args.executor != "dask":
            raise UsageError("--dask-address needs --executor dask.")
        if args.deadline_ms is not None and not 0 < args.deadline_ms < float("inf"):
            raise UsageError(
                f"--deadline-ms must be a finite number above 0, not {args.deadline_ms}."
            )
        if args.placement and not args.design:
            raise UsageError("--placement needs --design: it places a design's block.")
        concurrency = _positive(args.concurrency, "--concurrency")
        repeats = _positive(args.repeats, "--repeats")
        dataset = Path(args.dataset).expanduser()
        if not dataset.is_file():
            raise UsageError(f"dataset file not found: {args.dataset}; pass a .jsonl file.")
        workspace = args.workspace or self._current_workspace()
        if workspace and not Path(workspace).expanduser().is_dir():
            raise UsageError(f"workspace folder not found: {workspace}.")
        cases = load_dataset(dataset)
        route = parse_model_id(args.model) if args.model else None
        if args.design:
            variants = design_variants(args.design, route, args.placement)
        else:
            variants = [baseline(route)]
        for option in args.agent:
            variants.append(agent_variant(option, {variant.name for variant in variants}))
        report = evaluate(
            cases,
            variants,
            executor=args.executor,
            concurrency=concurrency,
            repeats=repeats,
            cache="replay" if args.replay else not args.no_cache,
            dask_address=args.dask_address,
            progress=not args.no_progress,
            workspace=workspace,
            end_to_end=args.end_to_end,
            orchestrator=route,
            deadline_ms=args.deadline_ms,
        )
        if self.shell is not None:
            self.shell.user_ns[args.out] = report
        return EvalComparison(report)
