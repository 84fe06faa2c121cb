"""``python -m benchmarks [all|memory|scaling|harness|preflight|startup|eval ...] [options]``.

``python -m benchmarks realmodel [--limit N]`` runs apart from ``all``: it needs the
``local`` extra and a CPU model's patience (see benchmarks/README.md). So does
``python -m benchmarks designs [--model local:smollm2 --limit N]``, the pre-flight
designs and the two baselines end to end, ``python -m benchmarks prompt-reuse [--limit N]``,
the prompt llama.cpp's server reuses across turns with each placement of the bundle, and ``python -m benchmarks structures [--model ID] [--no-write]``, the
shipped datasets and the structures set by layout on the offline scout, and ``python -m
benchmarks semantic [--notes N]``, semantic recall's cost on a 3,000-note workspace (the
``semantic`` extra), ``python -m benchmarks mcp [--repeats N]``, the MCP server's
``prepare_context`` over stdio measured by the SDK's client (the ``mcp`` extra), and
``python -m benchmarks persona [--repeats N]``, what the Jupyter AI persona adds before its
reply starts (the ``jupyter-ai`` extra).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .runner import BENCHMARKS, Options, run_all


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"sizes must be integers separated by commas: {text}"
        ) from exc
    if not sizes or min(sizes) < 10:
        raise argparse.ArgumentTypeError("give at least one size of 10 documents or more")
    return sizes


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks, print the table, write the results; exit 0 unless a run broke."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["designs"]:
        from . import designs
        from .runner import REPO_ROOT, isolated_lab_home

        with isolated_lab_home():
            return designs.main(
                given[1:],
                targets=[REPO_ROOT / "docs" / "performance.md", REPO_ROOT / "README.md"],
                log=lambda m: print(m, file=sys.stderr),
            )
    if given[:1] == ["prompt-reuse"]:
        from . import prompt_reuse
        from .runner import isolated_lab_home

        with isolated_lab_home():
            return prompt_reuse.main(given[1:], log=lambda m: print(m, file=sys.stderr))
    if given[:1] == ["structures"]:
        from . import structures
        from .runner import REPO_ROOT, isolated_lab_home

        with isolated_lab_home():
            return structures.main(
                given[1:],
                docs=REPO_ROOT / "docs",
                results=REPO_ROOT / "benchmarks" / "results",
                log=lambda m: print(m, file=sys.stderr),
            )
    if given[:1] == ["semantic"]:
        from . import semantic
        from .runner import isolated_lab_home

        with isolated_lab_home():
            return semantic.main(given[1:], log=lambda m: print(m, file=sys.stderr))
    if given[:1] == ["mcp"]:
        from . import mcp_server
        from .runner import isolated_lab_home

        with isolated_lab_home():
            return mcp_server.main(given[1:], log=lambda m: print(m, file=sys.stderr))
    if given[:1] == ["persona"]:
        from . import persona
        from .runner import isolated_lab_home

        with isolated_lab_home():
            return persona.main(given[1:], log=lambda m: print(m, file=sys.stderr))
    if given[:1] == ["realmodel"]:
        from . import realmodel
        from .runner import REPO_ROOT, isolated_lab_home

        with isolated_lab_home():
            return realmodel.main(
                given[1:], docs=REPO_ROOT / "docs", log=lambda m: print(m, file=sys.stderr)
            )
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmarks of supercontext_lab against named peers (see benchmarks/README.md).",
    )
    parser.add_argument(
        "names",
        nargs="*",
        default=["all"],
        metavar="NAME",
        help=f"'all' (default) or any of: {', '.join(BENCHMARKS)}",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, for trying changes")
    parser.add_argument("--docs", type=int, help="documents in the recall comparison")
    parser.add_argument("--queries", type=int, help="queries drawn from the corpus")
    parser.add_argument("--sizes", type=_sizes, help="scaling sizes, e.g. 10000,50000,200000")
    parser.add_argument("--results", type=Path, help="folder for latest.json and latest.md")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="also write docs/performance.md and docs/scaling.png (default for a full 'all')",
    )
    args = parser.parse_args(argv)
    names = list(BENCHMARKS) if "all" in args.names or not args.names else args.names
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(
            f"unknown benchmark {unknown[0]!r}; choose 'all' or from {', '.join(BENCHMARKS)}"
        )
    options = Options.quick() if args.quick else Options()
    custom = False
    if args.docs is not None:
        options.docs, custom = args.docs, True
    if args.queries is not None:
        options.queries, custom = args.queries, True
    if args.sizes is not None:
        options.sizes, custom = args.sizes, True
    if args.results is not None:
        options.results_dir = args.results
    full = names == list(BENCHMARKS) and not args.quick and not custom
    if not (full or args.write_docs):
        options.docs_dir = None
    elif options.docs_dir is None:
        options.docs_dir = Options().docs_dir
    if not full:
        options.command = "python -m benchmarks " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
    outcome = run_all(options, names)
    print(outcome.markdown)
    print(f"Total: {outcome.total_seconds:.1f} s", file=sys.stderr)
    print(f"Wrote {outcome.json_path} and {outcome.markdown_path}", file=sys.stderr)
    for path in outcome.docs_paths:
        print(f"Wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
