"""The shipped 40-case dataset on a real model: SmolLM2-135M behind llama.cpp's server.

``python -m benchmarks realmodel`` evaluates the shipped scout four ways with
``supercontext_lab.eval.evaluate``: the offline scout (the reference), SmolLM2 picking
gathered facts and names (the extractive format, the local default), SmolLM2 with the
envelope grammar, and SmolLM2 in free text (``--variant NAME`` runs only the named ones).
Each variant reports the valid-envelope rate, the mention rate, tool and skill precision,
grounded bullets, invented names, prompt+completion tokens per bundle and seconds per
bundle, and the table is written into ``docs/performance.md`` between
markers, so the other benchmarks' table is left as it is (and a full ``all`` run keeps
this section). Needs the ``local`` extra; nothing is downloaded.

The cases run one after another on one server (a CPU model serves one request at a time)
with the scout's local run budget, without caches: every figure is a fresh run. The table
is rewritten after every case, marked partial until the last one, so a long run that is
stopped early still leaves what it measured.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from supercontext_lab._atomic import write_atomic
from supercontext_lab.models.local import INSTALL_HINT, LOCAL_RUN_TIMEOUT_S

from .report import REALMODEL_BEGIN as BEGIN
from .report import REALMODEL_BLOCK as _BLOCK
from .report import REALMODEL_END as END
from .report import Section, markdown_table

__all__ = ["BEGIN", "END", "VARIANTS", "run", "write_section"]
DATASET = Path(__file__).resolve().parents[1] / "supercontext_lab/eval/data/demo_dataset.jsonl"

VARIANTS = (
    ("offline", "the embedded offline scout (reference)"),
    ("smollm2-extractive", "SmolLM2-135M, picks gathered facts and names (the local default)"),
    ("smollm2-grammar", "SmolLM2-135M, GBNF grammar of the envelope"),
    ("smollm2-text", "SmolLM2-135M, free text"),
)

_COLUMNS = (
    ("valid_rate", "valid envelopes", "{:.0%}"),
    ("mention_rate", "mention rate", "{:.0%}"),
    ("tool_precision", "tool precision", "{:.2f}"),
    ("skill_precision", "skill precision", "{:.2f}"),
    ("grounded_rate", "grounded bullets", "{:.0%}"),
    ("invented_names", "invented names", "{:.0f}"),
    ("tokens_mean", "tokens per bundle", "{:,.0f}"),
    ("model_calls_mean", "model calls", "{:.2f}"),
)


def _variants() -> list[Any]:
    from supercontext_lab.agents.definition import default_agent_definition
    from supercontext_lab.eval import Variant
    from supercontext_lab.routes import ModelRoute

    definition = default_agent_definition()
    return [
        Variant("offline", definition, route=ModelRoute()),
        Variant(
            "smollm2-extractive",
            definition,
            route=ModelRoute(kind="local", bundle_format="extractive"),
        ),
        Variant(
            "smollm2-grammar", definition, route=ModelRoute(kind="local", bundle_format="grammar")
        ),
        Variant("smollm2-text", definition, route=ModelRoute(kind="local", bundle_format="text")),
    ]


def _rows(results: dict[str, list[Any]]) -> dict[str, dict[str, float]]:
    from supercontext_lab.eval.metrics import aggregate

    rows: dict[str, dict[str, float]] = {}
    for name, done in results.items():
        metrics = aggregate([r.measure() for r in done])
        runs = int(metrics["runs"])
        valid = int(metrics["valid_runs"])
        seconds = sum(r.elapsed_ms for r in done) / 1000.0
        rows[name] = {
            **{key: float(metrics[key]) for key, _, _ in _COLUMNS},
            "seconds_per_run": seconds / runs if runs else 0.0,
            "seconds_per_bundle": seconds / valid if valid else float("nan"),
            "runs": runs,
            "valid_runs": valid,
        }
    return rows


def run(
    *,
    limit: int | None = None,
    only: Sequence[str] = (),
    log: Callable[[str], None] = print,
    on_case: Callable[[Section, int], None] | None = None,
) -> Section:
    """Evaluate the variants (all of :data:`VARIANTS`, or those named in ``only``) on the
    first ``limit`` cases (all 40 by default).

    The cases go one at a time through every variant, so ``on_case`` (called with the
    section so far and the number of cases done) can publish results as they come: a run
    of an hour on a busy machine is never all or nothing.
    """
    from supercontext_lab.eval import evaluate
    from supercontext_lab.eval.dataset import load_dataset
    from supercontext_lab.models.local import local_server, resolve_gguf, stop_local_servers

    cases = load_dataset(DATASET)
    if limit is not None:
        cases = cases[:limit]
    gguf = resolve_gguf("smollm2")  # the missing extra is one clear line, before any work
    started = time.perf_counter()
    local_server(gguf)
    log(f"realmodel: SmolLM2 server ready in {time.perf_counter() - started:.1f} s")
    variants = [v for v in _variants() if not only or v.name in only]
    results: dict[str, list[Any]] = {v.name: [] for v in variants}
    section = _section({}, cases=0, total=len(cases))
    try:
        for number, case in enumerate(cases, start=1):
            report = evaluate(
                [case],
                variants,
                executor="sequential",
                cache=False,
                progress=False,
                timeout_s=LOCAL_RUN_TIMEOUT_S,
            )
            for result in report.results:
                results[result.variant].append(result)
                log(
                    f"realmodel: {number}/{len(cases)} {case.id} {result.variant}: "
                    f"{'valid' if result.scores.valid else 'invalid'}, {result.tokens} tokens, "
                    f"{result.elapsed_ms / 1000:.1f} s"
                )
            section = _section(_rows(results), cases=number, total=len(cases))
            if on_case is not None:
                on_case(section, number)
    finally:
        stop_local_servers()
    return section


def _section(rows: dict[str, dict[str, float]], *, cases: int, total: int | None = None) -> Section:
    table_rows = []
    for name, label in VARIANTS:
        data = rows.get(name)
        if data is None:
            continue
        cells = [f"`{name}`", label]
        # A table written before a column existed (or a rate with nothing to count) shows a dash.
        cells += [
            "—" if math.isnan(value := data.get(key, math.nan)) else fmt.format(value)
            for key, _, fmt in _COLUMNS
        ]
        cells.append(f"{data['seconds_per_run']:.1f}")
        bundle = data["seconds_per_bundle"]
        cells.append("—" if math.isnan(bundle) else f"{bundle:.1f}")
        table_rows.append(cells)
    headers = [
        "variant",
        "model",
        *[title for _, title, _ in _COLUMNS],
        "s per run",
        "s per valid bundle",
    ]
    total = cases if total is None else total
    section = Section(
        name="realmodel",
        title=f"A real model: SmolLM2-135M on the {total}-case dataset",
        data={"cases": cases, "total": total, "variants": rows},
    )
    section.details.append(markdown_table(headers, table_rows))
    return section


def write_section(path: Path, section: Section, *, seconds: float, command: str) -> None:
    """Put the section's table into ``path`` between :data:`BEGIN` and :data:`END`."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    block = "\n".join(
        [
            BEGIN,
            f"## {section.title}",
            "",
            (
                ""
                if section.data.get("cases") == section.data.get("total")
                else f"**Partial: {section.data.get('cases')} of {section.data.get('total')} "
                "cases so far.** "
            )
            + f"Measured with `{command}` in {seconds / 60:.0f} min on {os.cpu_count()} CPU cores "
            f"(load average {load[0]:.1f} at the end; other work on the machine slows the model "
            f"down). Needs the local extra: `{INSTALL_HINT}`. Tokens are prompt plus "
            "completion tokens of every model call of a run, counted by the server's "
            "tokenizer; seconds are wall time per run, and per valid bundle (all runs' time "
            "divided by the runs that produced one).",
            "",
            section.details[0],
            "",
            END,
        ]
    )
    text = path.read_text("utf-8") if path.exists() else "# Performance\n"
    if _BLOCK.search(text):
        text = _BLOCK.sub(lambda _: block, text)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    # Written after every case of an hour-long run that may be stopped at any moment.
    write_atomic(path, text)


def main(argv: Sequence[str], *, docs: Path | None, log: Callable[[str], None]) -> int:
    """``python -m benchmarks realmodel [--limit N] [--variant NAME ...]``: run, print,
    and write the docs."""
    limit = None
    only: list[str] = []
    args = list(argv)
    usage = "usage: python -m benchmarks realmodel [--limit N] [--variant NAME ...]"
    names = [name for name, _ in VARIANTS]
    while args:
        flag, value = args[0], args[1] if len(args) > 1 else ""
        if flag == "--limit" and value.isdigit() and int(value) > 0:
            limit = int(value)
        elif flag == "--variant" and value in names:
            only.append(value)
        else:
            log(f"{usage} (variants: {', '.join(names)})")
            return 2
        args = args[2:]
    started = time.perf_counter()
    command = " ".join(["python -m benchmarks realmodel", *argv])

    def publish(section: Section, done: int) -> None:
        if docs is not None:
            seconds = time.perf_counter() - started
            write_section(docs / "performance.md", section, seconds=seconds, command=command)

    section = run(limit=limit, only=only, log=log, on_case=publish)
    print(section.details[0])
    if docs is not None:
        log(f"Wrote {docs / 'performance.md'}")
    return 0
