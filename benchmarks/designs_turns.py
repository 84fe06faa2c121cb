"""The later turns of ``python -m benchmarks designs``: the reply's lift per turn and the
prompt each turn repeats from the turn before (:mod:`.designs` writes them under its
table)."""

from __future__ import annotations

from typing import Any

from .report import markdown_table

__all__ = ["few_cases", "reuse_table", "turns_table"]


def _pct(value: float) -> str:
    return f"{value:.0%}"


def few_cases(report: Any, cases: int | None) -> list[str]:
    """The report's warning under a table of fewer than 20 cases (its cases, or
    ``cases``), after a blank line; nothing at 20 or more."""
    note = report.few_cases_note(cases)
    return ["", note] if note else []


def turns_table(report: Any, *, offline: bool = False) -> list[str]:
    """The reply's lift over cold per turn of the threads with follow-ups (empty lines
    when there are none), and what a stale pack costs where the topic changed; with
    ``offline``, what the stand-in orchestrator's rule makes of the later turns."""
    rows = report.per_turn()
    if not rows:
        return []
    designs = [d for d in report.variant_names if d != "cold"]
    by = {(row.group, row.variant): row for row in rows}
    groups = list(dict.fromkeys(row.group for row in rows))
    body = []
    for group in groups:
        cases = by[(group, "cold")].cases
        cells = []
        for design in designs:
            row = by[(group, design)]
            low, high = row.lift_interval
            cells.append(f"{row.lift:+.2f} [{low:+.2f}, {high:+.2f}]")
        body.append([group, str(cases), *cells])
    changed = [
        by[(g, d)] for g in groups if g.endswith("topic changed") for d in (*designs, "cold")
    ]
    stale = "; ".join(
        f"`{row.variant}` {_pct(row.forbidden_rate)} ({row.forbidden[0]} of {row.forbidden[1]})"
        for row in changed
        if row.forbidden[1]
    )
    return [
        "",
        "Turn by turn (the cases with follow-ups; the reply's lift over cold on the same "
        "cases, with its paired bootstrap interval over cases):",
        "",
        markdown_table(["turns", "cases", *(f"`{d}`" for d in designs)], body),
        *few_cases(report, min(int(row[1]) for row in body)),
        *(
            [
                "",
                "Where the topic changed, the share of the earlier topic's facts (the "
                f"follow-up's forbidden mentions) found in the reply: {stale}.",
            ]
            if stale
            else []
        ),
        *(
            [
                "",
                "Read the later turns with the stand-in's rule in mind: the offline "
                "orchestrator restates a bundle only when it came with the message it "
                "answers. On a later turn it says it still has the first turn's bundle but "
                "restates none of it, so `scout`, `pack`, `cached` and `full-context` get a "
                "later-turn lift of 0 by construction here (`pack-system-tail` leaves no "
                "bundle in the thread at all), whatever a model would make of the context "
                "already in the thread; it restates a `prefetch` pack whatever the new "
                "message asks, so where the topic changed every stale fact the pack holds "
                "reaches the reply; and with `tool-only` it recalls again for each message. "
                "On a first turn it restates the first four bullets of a bundle: a ranked "
                "pack's are the request's facts, `full-context`'s are the first notes in "
                "path order, whatever the request, so its reply lift here says nothing of "
                "what a model reading every note would do. What a model does with either "
                "needs `--model`.",
            ]
            if offline
            else []
        ),
    ]


def reuse_table(report: Any) -> list[str]:
    """The prompt of the later turns, per variant: its tokens per turn and how much of it
    repeats, from the start, what the turn before ended with (what a prompt cache such as
    llama.cpp's ``cache_prompt`` keeps instead of reading again)."""
    rows = []
    for name in report.variant_names:
        later = [
            turn
            for result in report.results
            if result.variant == name
            for turn in (result.later_turns or [])
        ]
        if not later:
            continue
        prompt = sum(int(turn.get("prompt_tokens") or 0) for turn in later)
        reused = sum(int(turn.get("reusable_prefix_tokens") or 0) for turn in later)
        rows.append(
            [
                f"`{name}`",
                str(len(later)),
                f"{prompt / len(later):,.0f}",
                f"{reused / len(later):,.0f}",
                _pct(reused / prompt) if prompt else "—",
            ]
        )
    if not rows:
        return []
    header = ["variant", "later turns", "prompt tokens", "reusable prefix", "share reusable"]
    return [
        "",
        "Prompt reuse on the later turns (per turn: the orchestrator's prompt tokens, all "
        "rounds, and the tokens of the whole messages its first request repeats, from the "
        "start, of what the turn before read and wrote; estimated at four characters a "
        "token, the low side of what a prefix cache keeps):",
        "",
        markdown_table(header, rows),
    ]
