"""Harness overhead with the offline models on the demo workspace.

* First-turn preparation: a fresh ``Thread(super_context_enabled=True)`` per repeat sends
  one message on the demo workspace (already copied and indexed by a warm-up turn);
  ``TurnResult.timings_ms["preparation_ms"]`` covers the gate, the scout loop, parsing,
  fitting and prepending. The whole turn and the ``Thread(...)`` construction are
  reported beside it.
* ``parse_context_bundle`` on a realistic 5,000-character bundle, with :mod:`timeit`; and
  ``fit_bundle`` cutting a 12,000-character bundle down to 5,000 for context.
"""

from __future__ import annotations

import json
import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

from .report import MISS, Section, Target, judge, markdown_table
from .stats import Summary, fmt_ms, summarize

__all__ = ["BUNDLE_CHARS", "MESSAGES", "make_bundle", "run"]

TARGET_PREPARATION_MS = 50.0
TARGET_PARSE_US = 200.0
BUNDLE_CHARS = 5000

#: First messages of new threads that all warrant preparation (none is a greeting).
MESSAGES = (
    "Help me plan the grant renewal budget before the deadline.",
    "What did we decide about the dispersal kernel?",
    "Draft a reply to the reviewer who asked about the sensitivity analysis.",
    "Turn yesterday's lab meeting notes into tasks for the team.",
    "I need to polish the figures for the GR-7731 renewal.",
    "Can you find the papers we discussed about seed dispersal last time?",
)

_SUMMARY_FACTS = (
    "The grant renewal GR-7731 is due on 2026-12-15 and the budget justification is the "
    "open item (memory).",
    "Maya prefers short bullet summaries with sources and dislikes long preambles (profile).",
    "The dispersal kernel was switched from Gaussian to a fat-tailed 2Dt kernel after the "
    "March review because long-distance events were under-predicted (memory).",
    "Gmail, Google Calendar, Slack, GitHub and Zotero are connected; Notion and Google "
    "Drive are not (integrations).",
    "The sensitivity analysis plan covers kernel width, fecundity and survival, with "
    "Sobol indices as the main output (transcript: thread-0412).",
)


def make_bundle(chars: int = BUNDLE_CHARS) -> str:
    """A well-formed bundle of exactly ``chars`` characters, shaped like a real one.

    Five JSON tool calls and four skills; the summary repeats attributed facts until the
    envelope reaches the size.
    """
    tools = [
        ("file_read", {"path": "files/budget/GR-7731-budget.xlsx"}, "Check the current budget."),
        ("web_search", {"query": "fat-tailed 2Dt dispersal kernel"}, "Recent kernel papers."),
        ("delegate_gmail", {"query": "from:reviewer sensitivity"}, "Find the reviewer email."),
        ("delegate_google_calendar", {"days": 14}, "See meetings before the deadline."),
        ("run_workflow", {"workflow": "grant-budget-check"}, "Validate the budget lines."),
    ]
    skills = [
        ("grant-budget-check", True, "Checks budget lines against the call's rules."),
        ("lit-review-digest", True, "Digests the kernel literature."),
        ("figure-polish", True, "Makes the renewal figures consistent."),
        ("sensitivity-analysis-planner", False, "Plans the Sobol analysis (registry)."),
    ]
    head = "\n".join(
        [
            "[context_bundle]",
            "has_enough_context: true",
            "proposed_goal: Submit the GR-7731 grant renewal with a checked budget by 2026-12-15",
            "summary:",
        ]
    )
    lines = ["recommended_tool_calls:"]
    for tool, args, why in tools:
        lines += [f"  - tool: {tool}", f"    args: {json.dumps(args)}", f"    why: {why}"]
    lines.append("recommended_skills:")
    for skill, installed, why in skills:
        lines += [
            f"  - skill: {skill}",
            f"    installed: {str(installed).lower()}",
            f"    why: {why}",
        ]
    lines.append("[/context_bundle]")
    tail = "\n".join(lines)
    room = chars - len(head) - len(tail) - 2  # the space after "summary:" and one newline
    if room < 100:
        raise ValueError(f"a bundle needs at least {chars - room + 100} characters")
    facts: list[str] = []
    used = 0
    while True:
        fact = _SUMMARY_FACTS[len(facts) % len(_SUMMARY_FACTS)]
        extra = len(fact) + (1 if facts else 0)
        if used + extra > room:
            break
        facts.append(fact)
        used += extra
    # A closing clause on the last summary line makes the length exact.
    padding = (" and more" * (room // 9 + 1))[: room - used]
    text = f"{head} {chr(10).join(facts)}{padding}\n{tail}"
    assert len(text) == chars
    return text


def _turns(repeats: int, warmup: int) -> dict[str, Any]:
    from supercontext_lab import Thread

    # The threads measure the first turn's preparation: they keep no past conversation,
    # which would make each repeat's scout read the ones before it.
    for i in range(warmup):
        Thread(super_context_enabled=True, archive=False).send(MESSAGES[i % len(MESSAGES)])
    preparation: list[float] = []
    total: list[float] = []
    construct: list[float] = []
    statuses: dict[str, int] = {}
    calls: list[int] = []
    for i in range(repeats):
        started = time.perf_counter()
        thread = Thread(super_context_enabled=True, archive=False)
        built = time.perf_counter()
        result = thread.send(MESSAGES[i % len(MESSAGES)])
        construct.append(built - started)
        preparation.append(float(result.timings_ms["preparation_ms"]) / 1000.0)
        total.append(float(result.timings_ms["total_ms"]) / 1000.0)
        statuses[result.preparation] = statuses.get(result.preparation, 0) + 1
        if result.scout is not None:
            calls.append(result.scout.model_calls)
    return {
        "_preparation": summarize(preparation),
        "_total": summarize(total),
        "_construct": summarize(construct),
        "statuses": statuses,
        "scout_model_calls": summarize(calls).to_dict() if calls else None,
    }


def _parse_timing(text: str, repeat: int) -> tuple[Summary, Any]:
    from supercontext_lab import parse_context_bundle

    parsed = parse_context_bundle(text)
    timer = timeit.Timer(lambda: parse_context_bundle(text))
    number, _ = timer.autorange()
    samples = [t / number for t in timer.repeat(repeat=repeat, number=number)]
    return summarize(samples), parsed


def _fit_timing(repeat: int) -> Summary:
    from supercontext_lab import fit_bundle

    long = make_bundle(12_000)
    timer = timeit.Timer(lambda: fit_bundle(long, BUNDLE_CHARS))
    number, _ = timer.autorange()
    return summarize(t / number for t in timer.repeat(repeat=repeat, number=number))


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


def run(
    *,
    repeats: int = 30,
    warmup: int = 3,
    timeit_repeat: int = 7,
    messages: Sequence[str] = MESSAGES,
    log: Callable[[str], None] = print,
) -> Section:
    """Measure first-turn preparation and bundle parsing."""
    log(f"harness: {repeats} first turns on the demo workspace")
    turns = _turns(repeats, warmup)
    prep: Summary = turns["_preparation"]
    total: Summary = turns["_total"]
    construct: Summary = turns["_construct"]
    prepared = turns["statuses"].get("prepared", 0)
    log("harness: parse_context_bundle and fit_bundle")
    text = make_bundle(BUNDLE_CHARS)
    parse, parsed = _parse_timing(text, timeit_repeat)
    fit = _fit_timing(timeit_repeat)
    parsed_ok = (
        parsed is not None
        and len(parsed.recommended_tool_calls) == 5
        and len(parsed.recommended_skills) == 4
    )
    area = "Harness overhead"
    prep_ms = prep.median * 1000.0
    targets = [
        Target(
            area,
            f"first-turn preparation p50 ≤ {TARGET_PREPARATION_MS:g} ms (offline models, demo)",
            f"p50 {fmt_ms(prep.median)} (p5–p95 {fmt_ms(prep.p5)}–{fmt_ms(prep.p95)}, "
            f"n={prep.n}); whole turn {fmt_ms(total.median)}",
            "—",
            "—",
            judge(prep_ms, TARGET_PREPARATION_MS, at_most=True) if prepared == prep.n else MISS,
            round(prep_ms, 3),
            TARGET_PREPARATION_MS,
        ),
        Target(
            area,
            f"parse_context_bundle, {len(text):,}-char bundle ≤ {TARGET_PARSE_US:g} µs",
            f"{_us(parse.median)} (p5–p95 {_us(parse.p5)}–{_us(parse.p95)}, "
            f"{parse.n} timeit repeats)",
            "—",
            "—",
            judge(parse.median * 1e6, TARGET_PARSE_US, at_most=True) if parsed_ok else MISS,
            round(parse.median * 1e6, 3),
            TARGET_PARSE_US,
        ),
    ]
    data = {
        "messages": list(messages),
        "preparation_ms": prep.scaled(1000.0).to_dict(),
        "turn_total_ms": total.scaled(1000.0).to_dict(),
        "thread_construct_ms": construct.scaled(1000.0).to_dict(),
        "preparation_statuses": turns["statuses"],
        "scout_model_calls": turns["scout_model_calls"],
        "bundle_chars": len(text),
        "parse_us": parse.scaled(1e6).to_dict(),
        "parse_ok": parsed_ok,
        "fit_12000_to_5000_us": fit.scaled(1e6).to_dict(),
    }
    section = Section("harness_overhead", "Harness overhead", data, targets)
    section.details.append(
        markdown_table(
            ("Step", "Median", "p5–p95", "n"),
            [
                (
                    "Thread(...) construction",
                    fmt_ms(construct.median),
                    f"{fmt_ms(construct.p5)}–{fmt_ms(construct.p95)}",
                    str(construct.n),
                ),
                (
                    "first-turn preparation",
                    fmt_ms(prep.median),
                    f"{fmt_ms(prep.p5)}–{fmt_ms(prep.p95)}",
                    str(prep.n),
                ),
                (
                    "whole first turn",
                    fmt_ms(total.median),
                    f"{fmt_ms(total.p5)}–{fmt_ms(total.p95)}",
                    str(total.n),
                ),
                (
                    f"parse_context_bundle ({len(text):,} chars)",
                    _us(parse.median),
                    f"{_us(parse.p5)}–{_us(parse.p95)}",
                    str(parse.n),
                ),
                (
                    "fit_bundle (12,000 → 5,000 chars)",
                    _us(fit.median),
                    f"{_us(fit.p5)}–{_us(fit.p95)}",
                    str(fit.n),
                ),
            ],
        )
    )
    return section
