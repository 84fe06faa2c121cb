"""Does pre-flight pay? The designs end to end, on the offline pair and on a real model.

``python -m benchmarks designs`` runs ``supercontext_lab.eval.evaluate(...,
end_to_end=True)`` on the shipped demo dataset with the variants of :data:`DESIGNS`: the
pre-flight designs of SPEC §16 (``scout``, ``pack``, ``cached``, ``prefetch``, ``cold``),
``pack`` at the system tail, and the baselines ``full-context`` and ``tool-only``: each case is the first
message of a new thread, its follow-ups are sent after it in the same thread, and the
orchestrator answers every message at temperature 0 once per design. It does so on
the offline pair (the embedded offline scout and orchestrator, every case) and, with
``--model local:smollm2``, on SmolLM2-135M as both scout and orchestrator (``--limit N``:
the first N cases that expect mentions, which the reply is scored on; a CPU model answers
one request at a time).

For each design the table gives the bundle's mention rate and the reply's, with their 95 %
Wilson intervals, the reply's lift over ``cold`` with its paired bootstrap interval, the
exact McNemar test against ``cold`` (on each case's outcome "every expected mention is in
the reply"), the prompt tokens the pre-flight added to the orchestrator's turn, the
pre-flight's time (p50 and p95) and the time to the reply (p50); and how many of the
scout's pre-flights would have met a pre-turn deadline; then the reply's lift over
``cold`` per turn of the threads with follow-ups (:mod:`supercontext_lab.eval.turns`),
where ``prefetch`` sends its packs. The tables are written into
``docs/performance.md`` and ``README.md`` between ``<!-- designs:begin -->`` and
``<!-- designs:end -->``, one sub-block per route, so running one route keeps the other's
table. No cache: every figure is a fresh run.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from supercontext_lab._atomic import write_atomic

from .designs_turns import few_cases, reuse_table, turns_table
from .report import DESIGNS_BEGIN as BEGIN
from .report import DESIGNS_BLOCK as BLOCK
from .report import DESIGNS_END as END
from .report import markdown_table
from .runner import REPO_ROOT

__all__ = ["BEGIN", "END", "main", "run_route", "write_block"]

DESIGNS = (
    "scout",
    "pack",
    "pack-system-tail",
    "cached",
    "prefetch",
    "full-context",
    "tool-only",
    "cold",
)
"""The variants measured, by name: the designs, and ``pack`` with its block as a system
message at the tail of the request (``placement = "system-tail"``)."""
_TAIL = "-system-tail"
_DATASET = Path(__file__).resolve().parents[1] / "supercontext_lab/eval/data/demo_dataset.jsonl"
#: The deadline each route's table counts the scout's pre-flights against.
DEADLINES_MS = {"offline": 250.0, "local:smollm2": 1500.0}
_DEFAULT_DEADLINE_MS = 1500.0

_INTRO = (
    "## Does pre-flight pay? The designs and two baselines end to end\n\n"
    "Each case of the shipped 40-case dataset is sent as the first message of a new "
    "thread, and the orchestrator answers it once per pre-flight design (SPEC §16) with "
    "the same model at temperature 0: `scout` (the context scout), `pack` (the harness's "
    "gathering round, ranked and fitted to 600 tokens, no model), `cached` (an envelope "
    "built ahead from the profile, MEMORY.md and the most recalled or most recent notes, "
    "without reading the request), `prefetch` (nothing on a first turn; each later turn "
    "is sent the pack built in the background from the message before it, as from an "
    "earlier lookup), `cold` (nothing), and two baselines: `full-context` (every note of "
    "the workspace, whole, in a stable order, cut at note boundaries to the "
    "orchestrator's window) and `tool-only` (nothing prepared; the orchestrator is offered "
    "the read-only `memory_recall` and may call it, at most 3 rounds). `pack-system-tail` "
    "is the pack sent as a system message at the tail of the request, never stored in "
    "the thread, where `pack` is prepended to the message. The first table is the first turn; 11 cases "
    "go on with one or two follow-ups in the same thread (6 of them changing topic), "
    "scored per turn in the second. Rates are micro-averaged over "
    "the expected mentions, with 95 % Wilson intervals; the lift is the reply's mention "
    "rate minus `cold`'s on the same cases, with a paired bootstrap interval (2,000 "
    "resamples of cases); p is the exact McNemar test against `cold` on each case's "
    'outcome "every expected mention is in the reply". Added tokens are the '
    "orchestrator's prompt tokens per turn minus `cold`'s. Regenerate with "
    "`python -m benchmarks designs` (offline, every case) and `python -m benchmarks "
    "designs --model local:smollm2 --limit N` (the `local` extra)."
)


def _slug(route: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", route.lower()).strip("-") or "offline"


def _pct(value: float) -> str:
    return f"{value:.0%}"


def _interval(pair: Sequence[float]) -> str:
    return f"[{pair[0]:.0%}, {pair[1]:.0%}]"


def _elapsed(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.1f} s"


def _ms(value: float) -> str:
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def variants(model: Any) -> list[Any]:
    """The variants of :data:`DESIGNS` on ``model`` (a route, or ``None``)."""
    from supercontext_lab.eval.variants import design_variant

    return [
        design_variant(name.removesuffix(_TAIL), model, placement="system-tail")
        if name.endswith(_TAIL)
        else design_variant(name, model)
        for name in DESIGNS
    ]


def run_route(
    route: str, *, limit: int | None, log: Callable[[str], None]
) -> tuple[Any, dict[str, Any]]:
    """The end-to-end evaluation of the four designs on ``route`` (``"offline"`` or a
    model id), and the figures of its table."""
    from supercontext_lab.eval import evaluate, load_dataset
    from supercontext_lab.routes import ModelRoute, parse_model_id

    cases = load_dataset(_DATASET)
    if limit is not None:
        # The reply is scored on the expected mentions: a short run takes the first cases
        # that expect some.
        cases = [case for case in cases if case.expect.mentions][:limit]
    model = ModelRoute() if route == "offline" else parse_model_id(route)
    log(f"designs: {len(cases)} cases x {len(DESIGNS)} designs end to end on {route}")
    load_at_start = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    started = time.perf_counter()
    report = evaluate(
        cases,
        variants(model),
        end_to_end=True,
        orchestrator=model,
        cache=False,
        progress=False,
    )
    seconds = time.perf_counter() - started
    deadline = DEADLINES_MS.get(route, _DEFAULT_DEADLINE_MS)
    scout_prep = [r.elapsed_ms for r in report.results if r.variant == "scout"]
    figures = {
        "route": route,
        "cases": len(cases),
        "which": " (the first that expect mentions)" if limit is not None else "",
        "seconds": seconds,
        "deadline_ms": deadline,
        "scout_met_deadline": sum(1 for ms in scout_prep if ms <= deadline),
        "scout_runs": len(scout_prep),
        "load": os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0),
        "load_at_start": load_at_start,
    }
    return report, figures


def table(report: Any, figures: dict[str, Any]) -> str:
    """The route's sub-block: its heading, the designs table and the deadline line."""
    from supercontext_lab.eval.metrics import percentile

    pairs = {(pair.first, pair.second): pair for pair in report.paired if pair.second == "cold"}
    rows = []
    designs = [design for design in DESIGNS if design in report.variant_names]
    for design in designs:
        variant = report.variant(design)
        metrics, intervals = variant.metrics, variant.intervals
        prep = [r.elapsed_ms for r in report.results if r.variant == design]
        pair = pairs.get((design, "cold"))
        rows.append(
            [
                f"`{design}`",
                f"{_pct(float(metrics['mention_rate']))} {_interval(intervals['mention_rate'])}",
                f"{_pct(float(metrics['reply_mention_rate']))} "
                f"{_interval(intervals['reply_mention_rate'])}",
                f"{float(metrics['reply_lift']):+.2f} [{intervals['reply_lift'][0]:+.2f}, {intervals['reply_lift'][1]:+.2f}]"
                if design != "cold"
                else "—",
                f"{pair.only_first}/{pair.only_second}, p {_p(pair.p_value)}" if pair else "—",
                f"{float(metrics['added_prompt_tokens']):+,.0f}" if design != "cold" else "0",
                f"{_ms(percentile(prep, 50))} / {_ms(percentile(prep, 95))}",
                _ms(float(metrics["time_to_reply_p50_ms"])),
            ]
        )
    header = [
        "design",
        "bundle mention",
        "reply mention",
        "reply lift vs cold",
        "vs cold: discordant, McNemar",
        "added prompt tokens",
        "pre-flight p50 / p95",
        "time to reply p50",
    ]
    route = figures["route"]
    who = (
        "the offline pair (embedded offline scout and orchestrator; deterministic stand-ins, "
        "not language models)"
        if route == "offline"
        else f"`{route}` as scout and orchestrator"
    )
    start, load = figures["load_at_start"], figures["load"]
    lines = [
        f"### {who}",
        "",
        f"{figures['cases']} cases{figures['which']}, measured in "
        f"{_elapsed(figures['seconds'])} on {os.cpu_count()} CPU cores (load average "
        f"{start[0]:.1f} at the start, {load[0]:.1f} at the end: other work on the machine "
        "slows every time here down), no cache.",
        "",
        markdown_table(header, rows),
        *few_cases(report, None),
        "",
        *detectable(report),
        f"Latency against a deadline: the scout's pre-flight met a "
        f"{figures['deadline_ms']:g} ms deadline in {figures['scout_met_deadline']} of "
        f"{figures['scout_runs']} cases; past it, the turn goes on with the pack.",
        "",
        verdict(report, pairs),
        *turns_table(report, offline=route == "offline"),
        *reuse_table(report),
    ]
    return "\n".join(lines)


def detectable(report: Any) -> list[str]:
    """The smallest lift over cold these cases can tell from noise, per design, on the
    cluster-robust standard error (``supercontext_lab.eval.clusters``), as a paragraph."""
    from supercontext_lab.eval.clusters import mdd_line

    lifts = {}
    # A prefetch thread's first turn is cold by design: there is no first-turn lift of
    # its to detect (its later turns are in the turn-by-turn table).
    for design in (d for d in report.variant_names if d not in ("cold", "prefetch")):
        lift = report.variant(design).lift
        if lift is not None and lift.units:
            lifts[f"`{design}`"] = lift
    return [f"Detectable: {mdd_line(lifts)}", ""] if lifts else []


def verdict(report: Any, pairs: dict[tuple[str, str], Any]) -> str:
    """Whether a design pays on this route: its reply lift's 95 % interval lies above
    zero. Said in words, with the figures, whatever they are."""
    lifts = {}
    for design in DESIGNS[:-1]:
        try:
            variant = report.variant(design)
        except KeyError:
            continue  # a route measured before the design existed
        lifts[design] = (float(variant.metrics["reply_lift"]), *variant.intervals["reply_lift"])
    cost = {d: float(report.metrics(d)["added_prompt_tokens"]) for d in lifts}

    def said(design: str) -> str:
        lift, low, high = lifts[design]
        pair = pairs.get((design, "cold"))
        test = f", McNemar p {_p(pair.p_value)}" if pair else ""
        return (
            f"`{design}` {lift:+.2f} [{low:+.2f}, {high:+.2f}]{test}, {cost[design]:+,.0f} tokens"
        )

    paying = [design for design, (_, low, _) in lifts.items() if low > 0]
    if paying:
        others = [design for design in lifts if design not in paying]
        text = "**Pays here** (the reply's lift over cold, its interval above zero): " + "; ".join(
            said(design) for design in paying
        )
        if others:
            text += ". Does not: " + "; ".join(said(design) for design in others)
        # The lift counts expected mentions; McNemar counts cases that got every one. On
        # few cases the two can disagree, and a reader must see when they do.
        unsure = [
            pair
            for design in paying
            if (pair := pairs.get((design, "cold"))) is not None and pair.p_value >= 0.05
        ]
        for pair in unsure:
            text += (
                f". For `{pair.first}` the stricter per-case test is not significant: "
                f"{pair.only_first} of {pair.cases} cases got every expected mention only "
                f"with it, {pair.only_second} only cold (McNemar p {_p(pair.p_value)}), so "
                "more cases are needed before calling it settled"
            )
        return text + "."
    best = max(lifts, key=lambda design: lifts[design][0])
    return (
        "**No design pays here with confidence**: no reply lift's 95 % interval lies above "
        f"zero. The largest is {said(best)}; the others: "
        + "; ".join(said(design) for design in lifts if design != best)
        + "."
    )


def targets_table(log: Callable[[str], None]) -> str:
    """The pre-flight benchmark's targets (:mod:`.preflight`: the pack's p95, a cached
    first turn, how late a missed deadline ends the pre-flight), as a sub-block."""
    from . import preflight
    from .report import targets_table as table_of

    started = time.perf_counter()
    section = preflight.run(log=log)
    section.seconds = time.perf_counter() - started
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return "\n".join(
        [
            "### Targets",
            "",
            f"Measured by `python -m benchmarks preflight` (also part of `all`) in "
            f"{section.seconds:.0f} s on {os.cpu_count()} CPU cores, load average "
            f"{load[0]:.1f} at the end.",
            "",
            table_of([section]),
            "",
            *section.details,
        ]
    )


def write_block(path: Path, route: str, body: str) -> None:
    """Put ``body`` into ``path``'s designs block as the sub-block of ``route``, keeping
    the other routes' sub-blocks."""
    slug = _slug(route)
    begin, end = f"<!-- designs-{slug}:begin -->", f"<!-- designs-{slug}:end -->"
    sub = f"{begin}\n{body}\n{end}"
    text = path.read_text("utf-8") if path.exists() else ""
    match = BLOCK.search(text)
    inner = match.group(0)[len(BEGIN) : -len(END)] if match else ""
    found = re.findall(
        r"(<!-- designs-([a-z0-9-]+):begin -->.*?<!-- designs-\2:end -->)", inner, re.S
    )
    parts = {name: whole for whole, name in found}
    parts[slug] = sub
    ordered = [parts.pop(first) for first in ("targets", "offline") if first in parts]
    ordered += [parts[name] for name in sorted(parts)]
    block = "\n".join([BEGIN, _INTRO, "", "\n\n".join(ordered), END])
    if match:
        text = text[: match.start()] + block + text[match.end() :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    write_atomic(path, text)


def main(argv: Sequence[str], *, targets: Sequence[Path], log: Callable[[str], None]) -> int:
    """``python -m benchmarks designs [--model ID] [--limit N] [--no-offline]``: with the
    offline route (the default), the pre-flight targets too."""
    models: list[str] = []
    limit: int | None = None
    offline = True
    args = list(argv)
    usage = "usage: python -m benchmarks designs [--model ID] [--limit N] [--no-offline]"
    while args:
        flag = args.pop(0)
        if flag == "--model" and args:
            models.append(args.pop(0))
        elif flag == "--limit" and args and args[0].isdigit() and int(args[0]) > 0:
            limit = int(args.pop(0))
        elif flag == "--no-offline":
            offline = False
        else:
            log(usage)
            return 2
    routes = (["offline"] if offline else []) + models
    if not routes:
        log(usage)
        return 2
    if offline:
        body = targets_table(log)
        print(body + "\n")
        for path in targets:
            write_block(path, "targets", body)
    for route in routes:
        report, figures = run_route(route, limit=None if route == "offline" else limit, log=log)
        body = table(report, figures)
        results = REPO_ROOT / "benchmarks" / "results"
        results.mkdir(parents=True, exist_ok=True)
        report.to_json(results / f"designs-{_slug(route)}.json")
        print(body + "\n")
        print(report.paired_text() + "\n")
        for path in targets:
            write_block(path, route, body)
            log(f"Wrote the {route} designs table into {path}")
    return 0
