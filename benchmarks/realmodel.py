"""Datasets on a real model: SmolLM2-135M behind llama.cpp's server, beside no model.

``python -m benchmarks realmodel`` evaluates the shipped scout with
``supercontext_lab.eval.evaluate`` on the shipped demo dataset and on the public set
(``--dataset demo`` or ``--dataset public`` for one): the offline scout (the reference),
the no-model baselines of SPEC §14 (``rank``: the first offered facts and names as the
run ranked them; ``random``: seeded picks from the same offers), and SmolLM2 in the
variants of SPEC §13: picking gathered facts and names by number after the harness
gathered (grammar + prefetch + extractive, the local default), the envelope grammar with
and without the gathered results in its first request, and free text. Each variant
reports the valid-envelope rate, the mention rate and the gathered-mention rate, tool and
skill precision, grounded bullets, invented names, prompt+completion tokens per bundle,
and mean and median seconds per run, and the table is written into
``docs/performance.md`` between markers, so the other benchmarks' table is left as it is
(and a full ``all`` run keeps this section). Needs the ``local`` extra; nothing is
downloaded.

Beside the table: the server's start, the time to the first bundle of a session (server
start included) and of the same request again in that session (the server keeps the
prompt prefix), and llama.cpp's own prompt and generation speed for SmolLM2 on this
machine, measured in-process with the server's thread counts, so the table shows how
close a run comes to that limit.

Options: ``--limit N`` runs the first N cases; ``--slow-limit N`` runs the slow variants
(free text and the free grammar, which take minutes a case on two cores) on the first N
of those only, and the table says how many cases each row covers; ``--variant NAME`` runs
only the named ones.

The cases run one after another on one server (a CPU model serves one request at a time)
with the scout's local run budget, without caches: every figure is a fresh run. The table
is rewritten after every case, marked partial until the last one, so a long run that is
stopped early still leaves what it measured.
"""

from __future__ import annotations

import math
import os
import statistics
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
_DATA = Path(__file__).resolve().parents[1] / "supercontext_lab/eval/data"
DATASET = _DATA / "demo_dataset.jsonl"
DATASETS = {
    "demo": (DATASET, "the shipped 40-case demo dataset"),
    "public": (
        _DATA / "public/dataset.jsonl",
        "the public set: 42 cases on three workspaces of public notes (eval/data/public)",
    ),
}
"""The datasets ``--dataset`` names; a run covers both by default."""

VARIANTS = (
    ("offline", "the embedded offline scout (reference)"),
    ("rank", "no model: the first offered facts, tool and skill, as the run ranked them"),
    ("random", "no model: as many facts, a tool and a skill picked at random (seeded)"),
    (
        "smollm2-extractive",
        "SmolLM2-135M, grammar + prefetch + extractive: picks the gathered passage that "
        "answers best, the ranking completes the bundle (the local default)",
    ),
    ("smollm2-grammar-prefetch", "SmolLM2-135M, GBNF grammar of the envelope + prefetch"),
    ("smollm2-grammar", "SmolLM2-135M, GBNF grammar of the envelope"),
    ("smollm2-text", "SmolLM2-135M, free text"),
)

SLOW = frozenset({"smollm2-grammar-prefetch", "smollm2-grammar", "smollm2-text"})
"""Variants that take minutes a case on two cores: ``--slow-limit`` bounds their cases."""

_COLUMNS = (
    ("valid_rate", "valid envelopes", "{:.0%}"),
    ("mention_rate", "mention rate", "{:.0%}"),
    ("gathered_mention_rate", "gathered mention rate", "{:.0%}"),
    ("tool_precision", "tool precision", "{:.2f}"),
    ("skill_precision", "skill precision", "{:.2f}"),
    ("grounded_rate", "grounded bullets", "{:.0%}"),
    ("invented_names", "invented names", "{:.0f}"),
    ("tokens_mean", "tokens per bundle", "{:,.0f}"),
    ("model_calls_mean", "model calls", "{:.2f}"),
)


def _variants() -> list[Any]:
    from supercontext_lab.agents import default_agent_toml, edit_agent_toml, load_agent_definition
    from supercontext_lab.eval import Variant
    from supercontext_lab.routes import EmissionFormat, ModelRoute

    gathering = load_agent_definition(default_agent_toml())
    alone = load_agent_definition(edit_agent_toml(default_agent_toml(), {"prefetch": "never"}))

    def local(bundle_format: EmissionFormat) -> ModelRoute:
        return ModelRoute(kind="local", bundle_format=bundle_format)

    return [
        Variant("offline", gathering, route=ModelRoute()),
        Variant("rank", gathering, route=ModelRoute(kind="baseline", model="rank")),
        Variant("random", gathering, route=ModelRoute(kind="baseline", model="random")),
        Variant("smollm2-extractive", gathering, route=local("extractive")),
        Variant("smollm2-grammar-prefetch", gathering, route=local("grammar")),
        Variant("smollm2-grammar", alone, route=local("grammar")),
        Variant("smollm2-text", alone, route=local("text")),
    ]


def _rows(results: dict[str, list[Any]]) -> dict[str, dict[str, float]]:
    from supercontext_lab.eval.metrics import aggregate, applicable, rate_counts

    rows: dict[str, dict[str, float]] = {}
    for name, done in results.items():
        metrics = aggregate([r.measure() for r in done])
        counts = rate_counts([r.measure() for r in done])
        runs = int(metrics["runs"])
        valid = int(metrics["valid_runs"])
        seconds = sum(r.elapsed_ms for r in done) / 1000.0
        rows[name] = {
            # A rate of 0 of 0 keeps SPEC's 1.0 as data but is no measurement: NaN,
            # shown as "—".
            **{
                key: float(metrics[key]) if applicable(counts.get(key)) else math.nan
                for key, _, _ in _COLUMNS
            },
            "seconds_per_run": seconds / runs if runs else 0.0,
            "median_seconds": statistics.median(r.elapsed_ms for r in done) / 1000.0
            if done
            else math.nan,
            "seconds_per_bundle": seconds / valid if valid else float("nan"),
            "runs": runs,
            "valid_runs": valid,
        }
    return rows


def llama_speed(gguf: Path) -> dict[str, float]:
    """llama.cpp's own speed for ``gguf`` on this machine, in tokens per second: a
    512-token prompt read at once, then 64 tokens decoded one at a time, with the thread
    counts and micro-batch the local server uses."""
    from llama_cpp import Llama

    from supercontext_lab.models.local_server import cpu_has_amx

    cores = max(os.cpu_count() or 1, 1)
    llm = Llama(
        model_path=str(gguf),
        n_ctx=1024,
        n_threads=max(cores // 2, 1),
        n_threads_batch=cores,
        # As the server does on a CPU with AMX (see local_server).
        n_ubatch=1 if cpu_has_amx() else 512,
        verbose=False,
    )
    try:
        text = "The scout reads the notes of the project and picks the facts that help. " * 60
        prompt = llm.tokenize(text.encode("utf-8"))[:512]
        started = time.perf_counter()
        llm.eval(prompt)
        prompt_s = time.perf_counter() - started
        started = time.perf_counter()
        for token in prompt[:64]:
            llm.eval([token])
        generation_s = time.perf_counter() - started
    finally:
        llm.close()
    return {"prompt_tps": len(prompt) / prompt_s, "generation_tps": 64 / generation_s}


def _session(gguf: Path, variant: Any, case: Any, log: Callable[[str], None]) -> dict[str, float]:
    """A new session's first bundle (server start included) and the same request again."""
    from supercontext_lab.eval import evaluate
    from supercontext_lab.models.local import local_server, stop_local_servers

    stop_local_servers()
    started = time.perf_counter()
    local_server(gguf)
    start_s = time.perf_counter() - started
    seconds = []
    for _ in range(2):
        report = evaluate(
            [case],
            [variant],
            executor="sequential",
            cache=False,
            progress=False,
            timeout_s=LOCAL_RUN_TIMEOUT_S,
        )
        seconds.append(report.results[0].elapsed_ms / 1000.0)
    log(
        f"realmodel: server start {start_s:.1f} s, first bundle {seconds[0]:.1f} s, "
        f"the same request again {seconds[1]:.1f} s"
    )
    return {"server_start_s": start_s, "cold_s": start_s + seconds[0], "second_s": seconds[1]}


def run(
    *,
    dataset: str = "demo",
    limit: int | None = None,
    slow_limit: int | None = None,
    only: Sequence[str] = (),
    log: Callable[[str], None] = print,
    on_case: Callable[[Section, int], None] | None = None,
    session: bool = True,
    speed: bool = True,
) -> Section:
    """Evaluate the variants (all of :data:`VARIANTS`, or those named in ``only``) on the
    first ``limit`` cases (all 40 by default), the :data:`SLOW` ones on the first
    ``slow_limit`` of those.

    The cases go one at a time through every variant, so ``on_case`` (called with the
    section so far and the number of cases done) can publish results as they come: a run
    of an hour on a busy machine is never all or nothing. With the extractive variant, a
    new session's first bundle and a second run of it are timed first, and llama.cpp's
    own speed is measured last (with the server stopped, so nothing competes).
    """
    from supercontext_lab.eval import evaluate
    from supercontext_lab.eval.dataset import load_dataset
    from supercontext_lab.models.local import local_server, resolve_gguf, stop_local_servers

    path, label = DATASETS[dataset]
    cases = load_dataset(path)
    if limit is not None:
        cases = cases[:limit]
    gguf = resolve_gguf("smollm2")  # the missing extra is one clear line, before any work
    variants = [v for v in _variants() if not only or v.name in only]
    results: dict[str, list[Any]] = {v.name: [] for v in variants}
    extra: dict[str, Any] = {}
    section = _section({}, cases=0, total=len(cases), dataset=label)
    try:
        default = next((v for v in variants if v.name == "smollm2-extractive"), None)
        if session and default is not None and cases:
            extra["session"] = _session(gguf, default, cases[0], log)
        started = time.perf_counter()
        local_server(gguf)
        log(f"realmodel: SmolLM2 server ready in {time.perf_counter() - started:.1f} s")
        for number, case in enumerate(cases, start=1):
            due = [
                v
                for v in variants
                if v.name not in SLOW or slow_limit is None or number <= slow_limit
            ]
            report = evaluate(
                [case],
                due,
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
            section = _section(
                _rows(results), cases=number, total=len(cases), extra=extra, dataset=label
            )
            if on_case is not None:
                on_case(section, number)
    finally:
        stop_local_servers()
    if speed and any(v.name.startswith("smollm2") for v in variants):
        extra["speed"] = llama_speed(gguf)
        log(
            "realmodel: llama.cpp {prompt_tps:.0f} prompt, {generation_tps:.0f} generated "
            "tokens/s".format(**extra["speed"])
        )
        section = _section(
            _rows(results), cases=len(cases), total=len(cases), extra=extra, dataset=label
        )
    return section


def _cell(data: dict[str, float], key: str, fmt: str) -> str:
    # A table written before a column existed (or a rate with nothing to count) shows a dash.
    value = data.get(key, math.nan)
    return "—" if math.isnan(value) else fmt.format(value)


def _section(
    rows: dict[str, dict[str, float]],
    *,
    cases: int,
    total: int | None = None,
    extra: dict[str, Any] | None = None,
    dataset: str = DATASETS["demo"][1],
) -> Section:
    table_rows = []
    for name, label in VARIANTS:
        data = rows.get(name)
        if data is None:
            continue
        cells = [f"`{name}`", label, f"{data['runs']:.0f}"]
        cells += [_cell(data, key, fmt) for key, _, fmt in _COLUMNS]
        cells += [
            _cell(data, "seconds_per_run", "{:.1f}"),
            _cell(data, "median_seconds", "{:.1f}"),
            _cell(data, "seconds_per_bundle", "{:.1f}"),
        ]
        table_rows.append(cells)
    headers = [
        "variant",
        "model",
        "cases",
        *[title for _, title, _ in _COLUMNS],
        "s per run",
        "median s per run",
        "s per valid bundle",
    ]
    total = cases if total is None else total
    section = Section(
        name="realmodel",
        title=f"SmolLM2-135M on {dataset}",
        data={"cases": cases, "total": total, "variants": rows, **(extra or {})},
    )
    section.details.append(markdown_table(headers, table_rows))
    section.details.append("\n".join(_notes(rows, extra or {})))
    return section


def _notes(rows: dict[str, dict[str, float]], extra: dict[str, Any]) -> list[str]:
    """The session's times, llama.cpp's speed and the targets of SPEC §13 beside the
    local default's figures, as Markdown lines."""
    lines = []
    session = extra.get("session")
    if session:
        lines.append(
            f"- A new session (`smollm2-extractive`, first case): the server starts in "
            f"{session['server_start_s']:.1f} s, the first bundle is ready "
            f"{session['cold_s']:.1f} s after the start (server start included), and the "
            f"same request again in that session takes {session['second_s']:.1f} s."
        )
    speed = extra.get("speed")
    if speed:
        lines.append(
            f"- llama.cpp's own speed for SmolLM2 here: {speed['prompt_tps']:.0f} prompt "
            f"tokens/s and {speed['generation_tps']:.0f} generated tokens/s (a 512-token "
            "prompt, then 64 tokens one at a time, the server's thread counts)."
        )
    ours, rank = rows.get("smollm2-extractive"), rows.get("rank")
    if ours is None:
        return lines
    reference = rank or {}
    targets = [
        ("valid rate", _cell(ours, "valid_rate", "{:.0%}"), "100%"),
        ("invented names", _cell(ours, "invented_names", "{:.0f}"), "0"),
        ("grounded rate", _cell(ours, "grounded_rate", "{:.2f}"), "≥ 0.95"),
        ("gathered mention rate", _cell(ours, "gathered_mention_rate", "{:.2f}"), "≥ 0.85"),
        (
            "mention rate",
            _cell(ours, "mention_rate", "{:.2f}"),
            f"≥ rank's {_cell(reference, 'mention_rate', '{:.2f}')} (goal 0.80)",
        ),
        (
            "tool precision",
            _cell(ours, "tool_precision", "{:.2f}"),
            f"≥ rank's {_cell(reference, 'tool_precision', '{:.2f}')}",
        ),
        (
            "skill precision",
            _cell(ours, "skill_precision", "{:.2f}"),
            f"≥ rank's {_cell(reference, 'skill_precision', '{:.2f}')}",
        ),
    ]
    if session:
        targets += [
            ("time to the first bundle of a session", f"{session['cold_s']:.1f} s", "≤ 8 s"),
            ("a second run in the session", f"{session['second_s']:.1f} s", "≤ 4 s"),
        ]
    targets.append(
        ("median time per run, warm server", _cell(ours, "median_seconds", "{:.1f} s"), "—")
    )
    lines += ["", "Targets of SPEC §14 for the local default (`smollm2-extractive`):", ""]
    lines.append(markdown_table(["", "measured", "target"], [list(row) for row in targets]))
    return lines


def write_section(path: Path, section: Section, *, seconds: float, command: str) -> None:
    """Put the section's table into ``path`` between :data:`BEGIN` and :data:`END`."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    block = "\n".join(
        [
            BEGIN,
            "## A real model: SmolLM2-135M beside the offline scout and the no-model baselines",
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
            "divided by the runs that produced one). `cases` is how many of the dataset's "
            "cases a row covers: the slow variants run on the first few only. Tool and skill "
            "precision count the cases whose expectation lists tools (skills); a variant "
            "that recommends none there scores 1.00.",
            "",
            *(part for detail in section.details if detail for part in (detail, "")),
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


def combine(sections: Sequence[Section]) -> Section:
    """One section of several datasets' sections: each under its own heading."""
    details = []
    for part in sections:
        details.append(f"### {part.title}")
        details.extend(detail for detail in part.details if detail)
    cases = sum(int(part.data.get("cases", 0)) for part in sections)
    total = sum(int(part.data.get("total", 0)) for part in sections)
    return Section(
        name="realmodel",
        title="A real model",
        data={"cases": cases, "total": total, "datasets": [part.data for part in sections]},
        details=details,
    )


def main(argv: Sequence[str], *, docs: Path | None, log: Callable[[str], None]) -> int:
    """``python -m benchmarks realmodel [--limit N] [--slow-limit N] [--variant NAME ...]``:
    run, print, and write the docs."""
    limit = slow_limit = None
    only: list[str] = []
    datasets: list[str] = []
    args = list(argv)
    usage = (
        "usage: python -m benchmarks realmodel [--dataset demo|public ...] [--limit N] "
        "[--slow-limit N] [--variant NAME ...]"
    )
    names = [name for name, _ in VARIANTS]
    while args:
        flag, value = args[0], args[1] if len(args) > 1 else ""
        if flag == "--limit" and value.isdigit() and int(value) > 0:
            limit = int(value)
        elif flag == "--slow-limit" and value.isdigit() and int(value) > 0:
            slow_limit = int(value)
        elif flag == "--variant" and value in names:
            only.append(value)
        elif flag == "--dataset" and value in DATASETS:
            datasets.append(value)
        else:
            log(f"{usage} (variants: {', '.join(names)})")
            return 2
        args = args[2:]
    started = time.perf_counter()
    command = " ".join(["python -m benchmarks realmodel", *argv])

    done: list[Section] = []

    def publish(section: Section, _: int) -> None:
        if docs is not None:
            seconds = time.perf_counter() - started
            combined = combine([*done, section])
            write_section(docs / "performance.md", combined, seconds=seconds, command=command)

    for number, name in enumerate(datasets or list(DATASETS)):
        first = number == 0
        section = run(
            dataset=name,
            limit=limit,
            slow_limit=slow_limit,
            only=only,
            log=log,
            on_case=publish,
            session=first,
            speed=first,
        )
        done.append(section)
    section = combine(done)
    if docs is not None:
        seconds = time.perf_counter() - started
        write_section(docs / "performance.md", section, seconds=seconds, command=command)
    print("\n\n".join(section.details))
    if docs is not None:
        log(f"Wrote {docs / 'performance.md'}")
    return 0
