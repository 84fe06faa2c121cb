"""The envelope's parsers on hostile text, against a harmless envelope of the same size.

A scout's reply is untrusted: a model (or what it copied from memory or the web) can
send megabytes of quotes, spaces, backticks, brackets, parentheses, lines that look like
keys, deeply nested list items, one endless line or a million short ones. Each parser of
the envelope (``parse_context_bundle``, ``fit_bundle`` to 5,000 characters,
``bundle_warnings`` and ``bundle_rejection_reason``, the last one on the same text with
its closing tag cut off so the near-miss hint is searched) is timed on every hostile
input and on a harmless, realistic envelope of the same size, alternately in the same
run; the target is a median ratio of at most 2.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from supercontext_lab.bundle import (
    CLOSE_TAG,
    OPEN_TAG,
    bundle_rejection_reason,
    fit_bundle,
    parse_context_bundle,
)
from supercontext_lab.bundle.lint import bundle_warnings

from .harness_overhead import make_bundle
from .report import Section, Target, judge, markdown_table
from .stats import summarize

__all__ = ["HOSTILE", "PARSERS", "TARGET_RATIO", "harmless", "hostile", "run"]

TARGET_RATIO = 2.0
FIT_CHARS = 5000


def _fill(unit: str, size: int) -> str:
    """``unit`` repeated to exactly ``size`` characters."""
    return (unit * (size // max(len(unit), 1) + 1))[:size]


def _envelope(size: int, **fields: str) -> str:
    """An envelope of ``size`` characters whose fields hold ``fields`` (the summary is
    filled up to the size)."""
    goal = fields.get("goal", "Check the grant renewal budget")
    hec = fields.get("hec", "true")
    lists = fields.get("lists", "recommended_tool_calls: []\nrecommended_skills: []\n")
    head = f"{OPEN_TAG}\nhas_enough_context: {hec}\nproposed_goal: {goal}\nsummary:\n"
    room = size - len(head) - len(lists) - len(CLOSE_TAG) - 1
    return head + _fill(fields["summary"], max(room, 0)) + "\n" + lists + CLOSE_TAG


def _quotes(size: int) -> str:
    eighth = size // 8
    # A tool name of alternating backticks and spaces: the old unquoting peeled one layer
    # per pass over the whole name (a 2 MB reply took minutes).
    tool, args = _fill("` ", size // 2), _fill("`", size // 16)
    return _envelope(
        size,
        goal=_fill("\"' `", eighth) + "x" + _fill("' \"`", eighth),
        hec=_fill("`' ", eighth),
        lists=f"recommended_tool_calls:\n  - tool: {tool}\n    args: {args}\n"
        "recommended_skills: []\n",
        summary="\"'` ",
    )


def _spaces(size: int) -> str:
    return _envelope(size, summary=_fill(" ", size // 2) + "x\n" + " " * 200 + "x\n")


def _backticks(size: int) -> str:
    args = _fill("`", size // 3)
    return _envelope(
        size,
        lists=f"recommended_tool_calls:\n  - tool: t\n    args: ```{args}\n"
        "recommended_skills: []\n",
        summary="`",
    )


def _brackets(size: int) -> str:
    return _envelope(size, summary="[" * 4096 + "[ [context [/context_bundle [context_bundle ")


def _parens(size: int) -> str:
    return _envelope(size, summary="(" * 4096 + "(web: (memory: a(b (skill: (transcript: ")


def _key_like(size: int) -> str:
    # Lines that look like keys and are not (unknown words, a space before the colon).
    return _envelope(
        size,
        summary="foo: bar\nsummary : x\n- tool : y\nwhy : z\n  Proposed_Goal :\nargs= 1\n",
    )


def _deep_items(size: int) -> str:
    # Items whose text nests list markers ever deeper, YAML- and JSON-style.
    nested = "".join("  " * depth + "- " * depth + "x\n" for depth in range(1, 80))
    body = _fill(nested + "[" * 200 + "{" * 200 + "\n", size // 2)
    return _envelope(
        size,
        lists=f"recommended_tool_calls:\n  - tool: t\n    args:\n{body}\n    why: w\n"
        "recommended_skills: []\n",
        summary="- a fact (memory)\n",
    )


def _long_line(size: int) -> str:
    return _envelope(size, summary="word ")


def _many_lines(size: int) -> str:
    return _envelope(size, summary="\n" * 64 + "x\n" * 64 + " \n")


HOSTILE: dict[str, Callable[[int], str]] = {
    "runs of quotes": _quotes,
    "runs of spaces": _spaces,
    "runs of backticks": _backticks,
    "runs of [": _brackets,
    "runs of (": _parens,
    "key-like lines": _key_like,
    "deep list items": _deep_items,
    "one long line": _long_line,
    "many lines": _many_lines,
}
"""Each hostile class, as a builder of an envelope of a given size."""


def hostile(name: str, size: int) -> str:
    """The hostile envelope ``name`` of ``size`` characters."""
    return HOSTILE[name](size)


def harmless(size: int) -> str:
    """A realistic envelope of ``size`` characters: attributed summary lines, five JSON
    tool calls and four skills (the harness benchmark's bundle, grown)."""
    return make_bundle(size)


def _unterminated(text: str) -> str:
    return text.removesuffix(CLOSE_TAG)


PARSERS: dict[str, Callable[[str], object]] = {
    "parse_context_bundle": parse_context_bundle,
    "fit_bundle": lambda text: fit_bundle(text, FIT_CHARS),
    "bundle_warnings": bundle_warnings,
    "bundle_rejection_reason": bundle_rejection_reason,
}
"""The parsers measured; ``bundle_rejection_reason`` gets the unterminated text."""


def _timed(parser: Callable[[str], object], text: str) -> float:
    started = time.perf_counter()
    parser(text)
    return time.perf_counter() - started


def measure(parser: str, hostile_text: str, harmless_text: str, repeats: int) -> dict[str, Any]:
    """Times of one parser on both texts, alternately; the ratio of the medians."""
    function = PARSERS[parser]
    if parser == "bundle_rejection_reason":
        hostile_text, harmless_text = _unterminated(hostile_text), _unterminated(harmless_text)
    hostile_s: list[float] = []
    harmless_s: list[float] = []
    for _ in range(repeats):
        harmless_s.append(_timed(function, harmless_text))
        hostile_s.append(_timed(function, hostile_text))
    bad, good = summarize(hostile_s), summarize(harmless_s)
    return {
        "hostile_ms": bad.scaled(1e3).to_dict(),
        "harmless_ms": good.scaled(1e3).to_dict(),
        "ratio": bad.median / good.median if good.median > 0 else float("inf"),
    }


def run(
    *, sizes: Sequence[int], repeats: int, log: Callable[[str], None] = lambda _: None
) -> Section:
    """Every parser on every hostile class at every size; one target per class."""
    section = Section(
        name="envelope_parsers",
        title="Envelope parsers on hostile input, against harmless input",
    )
    rows: list[list[str]] = []
    data: dict[str, Any] = {}
    for size in sizes:
        good = harmless(size)
        for name in HOSTILE:
            bad = hostile(name, size)
            results = {parser: measure(parser, bad, good, repeats) for parser in PARSERS}
            data[f"{name} @ {size}"] = results
            worst_parser = max(results, key=lambda parser: results[parser]["ratio"])
            worst = results[worst_parser]["ratio"]
            log(f"parsers: {name} at {size:,} characters, worst ratio {worst:.2f}")
            rows.append(
                [
                    name,
                    f"{size / 1e6:g} M",
                    *(f"{results[parser]['ratio']:.2f}" for parser in PARSERS),
                ]
            )
            section.targets.append(
                Target(
                    area="Envelope parsers",
                    target=f"{name}, {size / 1e6:g} M chars: each parser <= {TARGET_RATIO:g}x",
                    measured=f"{results[worst_parser]['hostile_ms']['median']:.1f} ms "
                    f"({worst_parser})",
                    peer=f"harmless {results[worst_parser]['harmless_ms']['median']:.1f} ms",
                    ratio=f"{worst:.2f}x",
                    status=judge(worst, TARGET_RATIO, at_most=True),
                    value=worst,
                    limit=TARGET_RATIO,
                )
            )
    section.data = {"repeats": repeats, "sizes": list(sizes), "results": data}
    section.details.append(
        markdown_table(["hostile input", "size", *PARSERS], rows)
        + "\n\nRatios of median times, hostile over harmless, measured alternately in the "
        "same run; `bundle_rejection_reason` gets both texts with the closing tag cut off."
    )
    json.dumps(section.data)  # everything recorded is JSON-ready
    return section
