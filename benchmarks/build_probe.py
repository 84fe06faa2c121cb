"""Build one engine's index in a fresh process and report its time and memory.

Resident memory cannot be compared between engines built one after another in a single
process: memory freed by one stays mapped and is reused by the next. So each engine is
also built once in a child process (``python -m benchmarks.build_probe``), which imports
everything and loads the documents first, then measures the resident growth during the
build (peak) and after it with the index still alive (kept).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main", "probe_build"]


def _warm_imports(name: str) -> None:
    # Import costs are not index memory: pay them before the baseline is read.
    from .corpus import tokenize

    tokenize("warm up the analyser")
    if name == "memorytree":
        from supercontext_lab import MemoryTree

        del MemoryTree
    elif name == "rank-bm25":
        import numpy
        import rank_bm25  # type: ignore[import-untyped]

        del numpy, rank_bm25
    else:
        import bm25s  # type: ignore[import-untyped]

        del bm25s


def main(argv: list[str] | None = None) -> int:
    """Build ``ENGINE`` over the documents in ``DOCS_JSON``; print one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.build_probe")
    parser.add_argument("engine")
    parser.add_argument("docs_json", type=Path)
    parser.add_argument("workdir", type=Path)
    args = parser.parse_args(argv)

    from .engines import ENGINES
    from .stats import MemoryProbe

    _warm_imports(args.engine)
    docs = json.loads(args.docs_json.read_text(encoding="utf-8"))
    engine = ENGINES[args.engine]()
    probe = MemoryProbe()
    with probe:
        started = time.perf_counter()
        engine.build(docs, args.workdir)
        build_s = time.perf_counter() - started
    engine.close()
    print(
        json.dumps(
            {
                "build_s": build_s,
                "peak_bytes": probe.peak_bytes,
                "retained_bytes": probe.retained_bytes,
                "baseline_bytes": probe.base,
            }
        ),
        flush=True,
    )
    return 0


def probe_build(name: str, docs: Sequence[str], workdir: Path) -> dict[str, Any]:
    """Run :func:`main` for ``name`` in a child process and return what it measured."""
    workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", suffix=".json", dir=workdir, delete=False, encoding="utf-8"
    ) as handle:
        json.dump(list(docs), handle)
        docs_path = Path(handle.name)
    env = dict(os.environ)
    # The child must find this package whatever the working folder.
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.build_probe",
                name,
                str(docs_path),
                str(workdir / "probe"),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        docs_path.unlink(missing_ok=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"building {name} in a child process failed: {last}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    raise SystemExit(main())
