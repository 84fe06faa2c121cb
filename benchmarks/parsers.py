"""The parsers of untrusted text against hostile input of the same size as a harmless one.

Each parser reads a harmless input (a realistic page, memory file, dataset, body or
terminal line) and hostile inputs of the same size, each built to make a naive reader
quadratic (an unterminated construct repeated, an entity flood, runs of control
characters). Runs are interleaved (every input once, then again, ``repeats`` times), and
every figure is the ratio of a hostile input's median time to the harmless input's median
in the same run. The target is the worst ratio of each parser: at most 2×.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from .report import Section, Target, judge, markdown_table
from .stats import fmt_ms

__all__ = ["PARSERS", "Parser", "harmless_page", "run"]

TARGET_RATIO = 2.0


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


_PAGE_HEAD = (
    "<!doctype html><html lang=en><head><meta charset=utf-8><title>Seed dispersal &mdash; "
    "field notes</title><meta name=viewport content='width=device-width'>"
    '<link rel=stylesheet href="/static/site.css"><style>body{font:16px/1.5 serif}'
    ".nav a{color:#036}</style><script>window.dataLayer=window.dataLayer||[];"
    "function gtag(){dataLayer.push(arguments)}</script></head><body>"
    '<nav class="nav"><ul><li><a href="/">Home</a></li><li><a href="/notes">Notes</a></li>'
    '<li><a href="/about" title="About this site">About</a></li></ul></nav><main>'
)
_PAGE_SECTION = (
    '<section id="kernels"><h2>Dispersal kernels</h2><p>The <b>dispersal kernel</b> '
    "describes how far seeds travel from the parent plant; see "
    '<a href="/wiki/Seed_dispersal" title="Seed dispersal">seed dispersal</a> and '
    '<a href="/wiki/Wind" class="mw-redirect" title="Wind">wind</a> &amp; animal '
    "vectors.</p><p>A fat-tailed <i>2Dt</i> kernel fits long-distance events better than "
    'a Gaussian one (<a href="#ref-3">[3]</a>).</p><ul><li>Exponential kernels</li>'
    "<li>2Dt kernels &ndash; fat tailed</li><li>Mixtures</li></ul>"
    '<table class="data"><tr><th>Kernel</th><th>Mean distance</th></tr><tr><td>Gaussian'
    "</td><td>12.4&nbsp;m</td></tr><tr><td>2Dt</td><td>31.0&nbsp;m</td></tr></table>"
    "<!-- figure 2 goes here --></section>\n"
)


def harmless_page(size: int) -> str:
    """A realistic article page of ``size`` characters: head with a title, style and
    script, a navigation list, sections of paragraphs with links and entities, tables."""
    return _fill(_PAGE_HEAD + _PAGE_SECTION * (size // len(_PAGE_SECTION) + 1), size)


def _distinct_references(size: int) -> str:
    out: list[str] = []
    total = number = 0
    while total < size:
        ref = f"&#{1 + number % 1_100_000};"
        out.append(ref)
        total += len(ref)
        number += 1
    return "".join(out)[:size]


HTML_HOSTILE: dict[str, Callable[[int], str]] = {
    "'<a ' repeated": lambda n: _fill("<a ", n),
    "'<x' repeated": lambda n: _fill("<x", n),
    "unclosed comment": lambda n: "<!--" + "x" * (n - 4),
    "'<!--' repeated": lambda n: _fill("<!--", n),
    "'<!' repeated": lambda n: _fill("<!", n),
    "'<?' repeated": lambda n: _fill("<?", n),
    "'<![CDATA[' repeated": lambda n: _fill("<![CDATA[", n),
    "'</' repeated": lambda n: _fill("</", n),
    "unclosed quote": lambda n: '<a href="' + "x" * (n - 9),
    "'<a b=\"' repeated": lambda n: _fill('<a b="', n),
    "unclosed attributes": lambda n: "<a " + _fill("b=c ", n - 3),
    "'= ' in a tag": lambda n: "<a " + _fill("= ", n - 3),
    "deep nesting '<div>'": lambda n: _fill("<div>", n),
    "deep nesting '<span><b><i>'": lambda n: _fill("<span><b><i>", n),
    "'&amp;' flood": lambda n: _fill("&amp;", n),
    "'&eacute;' flood": lambda n: _fill("&eacute;", n),
    "distinct numeric references": _distinct_references,
    "one reference of n digits": lambda n: "&#" + "9" * (n - 2),
    "<script> without end": lambda n: "<script>" + _fill("x<", n - 8),
    "'<' repeated": lambda n: "<" * n,
}


def _front_matter(body: str) -> Callable[[int], str]:
    return lambda n: _fill(body, n)


FRONT_MATTER_HARMLESS = (
    "---\nname: Weekly report\ndescription: Drafts the weekly report, numbers first\n"
    "tags: [reports, weekly]\n---\n"
)
FRONT_MATTER_HOSTILE: dict[str, Callable[[int], str]] = {
    "a value followed by n spaces": lambda n: "---\nname: a" + " " * (n - 20) + "b\n---\nx\n",
    "continuation lines": lambda n: "---\nname: x\n" + _fill("  more words\n", n - 30) + "---\n",
    "block list items": lambda n: "---\ntags:\n" + _fill("  - x\n", n - 20) + "---\n",
    "a list of n/3 items": lambda n: "---\ntags: [" + _fill("a, ", n - 20) + "]\n---\n",
    "never closed": lambda n: "---\n" + _fill("key: value\n", n - 4),
}


def _dataset(line: Callable[[int], dict[str, Any]], *, ascii: bool = False) -> Callable[[int], str]:
    def make(size: int) -> str:
        lines: list[str] = []
        total = 0
        while total < size:
            text = json.dumps(line(len(lines)), ensure_ascii=ascii)
            lines.append(text)
            total += len(text) + 1
        return "\n".join(lines)

    return make


DATASET_HARMLESS = _dataset(
    lambda i: {
        "id": f"case-{i}",
        "message": "What did we decide about the dispersal kernel for the grant renewal?",
        "expect": {"mentions": ["2Dt"], "has_goal": False, "skills": ["lit-review-digest"]},
    }
)
DATASET_HOSTILE: dict[str, Callable[[int], str]] = {
    "'\\ud800' escapes": _dataset(
        lambda i: {"id": f"c{i}", "message": "\ud800\udfff" * 60}, ascii=True
    ),
    "control characters": _dataset(lambda i: {"id": f"c{i}", "message": "\x1b\u202e\t" * 50}),
    "lines of 100 kB": _dataset(lambda i: {"id": f"c{i}", "message": "budget " * 14_000}),
    "many mentions": _dataset(
        lambda i: {"id": f"c{i}", "message": "m", "expect": {"mentions": ["x"] * 2000}}
    ),
}


def _body(text: str, charset: str) -> Callable[[int], tuple[bytes, str]]:
    return lambda n: (_fill(text, n).encode("utf-8", "surrogatepass"), charset)


BODY_HARMLESS = _body("Seed dispersal notes, caf\u00e9 \u2014 kernels.\n", "utf-8")
BODY_HOSTILE: dict[str, Callable[[int], tuple[bytes, str]]] = {
    "charset=punycode": _body("a", "punycode"),
    "charset=idna": _body("a.b", "idna"),
    "invalid UTF-8": lambda n: (b"\xff\xc3(" * (n // 3), "utf-8"),
    "UTF-7 lone surrogates": lambda n: (b"+2AA-" * (n // 5), "utf-7"),
    "UTF-16 lone surrogates": lambda n: (b"\x00\xd8" * (n // 2), "utf-16-le"),
    "unknown charset": _body("a", "x-no-such-charset"),
}

PRINTABLE_HARMLESS = "accepted: the harness would use this envelope (memory) caf\u00e9\n"
PRINTABLE_HOSTILE: dict[str, Callable[[int], str]] = {
    "ESC flood": lambda n: "\x1b" * n,
    "CSI sequences": lambda n: _fill("\x1b[2J\x9b2J\x07\x08", n),
    "bidi overrides": lambda n: _fill("\u202e\u2066", n),
    "lone surrogates": lambda n: _fill("\udc80", n),
}


@dataclass(frozen=True)
class Parser:
    """One parser: how to call it, its harmless input and its hostile ones, by size."""

    name: str
    call: Callable[[Any], object]
    harmless: Callable[[int], Any]
    hostile: dict[str, Callable[[int], Any]]
    sizes: tuple[int, ...]


def _parsers() -> list[Parser]:
    from supercontext_lab._http import body_text
    from supercontext_lab.cli.common import printable
    from supercontext_lab.eval.dataset import parse_dataset
    from supercontext_lab.sources.frontmatter import parse_front_matter
    from supercontext_lab.sources.html_text import html_to_text

    def front_matter(text: str) -> object:
        front = parse_front_matter(text)
        return front.get_list("tags")

    return [
        Parser("html_to_text", html_to_text, harmless_page, HTML_HOSTILE, (1_000_000, 4_000_000)),
        Parser(
            "parse_front_matter",
            front_matter,
            _front_matter(FRONT_MATTER_HARMLESS + "Body line of the memory note.\n" * 40),
            FRONT_MATTER_HOSTILE,
            (1_000_000,),
        ),
        Parser("parse_dataset", parse_dataset, DATASET_HARMLESS, DATASET_HOSTILE, (4_000_000,)),
        Parser(
            "body_text", lambda pair: body_text(*pair), BODY_HARMLESS, BODY_HOSTILE, (4_000_000,)
        ),
        Parser(
            "cli printable",
            printable,
            lambda n: _fill(PRINTABLE_HARMLESS, n),
            PRINTABLE_HOSTILE,
            (1_000_000,),
        ),
    ]


PARSERS = ("html_to_text", "parse_front_matter", "parse_dataset", "body_text", "cli printable")


def _time(call: Callable[[Any], object], value: Any) -> float:
    started = time.perf_counter()
    call(value)
    return time.perf_counter() - started


def _measure(parser: Parser, size: int, repeats: int) -> dict[str, Any]:
    inputs = {"harmless": parser.harmless(size)}
    inputs.update((name, make(size)) for name, make in parser.hostile.items())
    samples: dict[str, list[float]] = {name: [] for name in inputs}
    for value in inputs.values():  # one untimed call each: caches, first allocations
        parser.call(value)
    for _ in range(repeats):
        for name, value in inputs.items():
            samples[name].append(_time(parser.call, value))
    base = median(samples["harmless"])
    return {
        "size": size,
        "harmless_s": base,
        "cases": {
            name: {"median_s": median(times), "ratio": median(times) / base}
            for name, times in samples.items()
            if name != "harmless"
        },
    }


def run(
    *,
    repeats: int = 5,
    sizes: dict[str, tuple[int, ...]] | None = None,
    names: Sequence[str] = PARSERS,
    log: Callable[[str], None] = print,
) -> Section:
    """Measure every parser in ``names``; ``sizes`` overrides a parser's input sizes."""
    targets: list[Target] = []
    rows: list[tuple[str, ...]] = []
    data: dict[str, Any] = {"repeats": repeats, "target_ratio": TARGET_RATIO, "parsers": {}}
    for parser in _parsers():
        if parser.name not in names:
            continue
        results = []
        for size in (sizes or {}).get(parser.name, parser.sizes):
            log(f"parsers: {parser.name} on {size:,} characters, {repeats} repeats")
            result = _measure(parser, size, repeats)
            results.append(result)
            for case, figures in result["cases"].items():
                rows.append(
                    (
                        parser.name,
                        f"{size:,}",
                        case,
                        fmt_ms(figures["median_s"]),
                        fmt_ms(result["harmless_s"]),
                        f"{figures['ratio']:.2f}×",
                    )
                )
        data["parsers"][parser.name] = results
        worst_ratio, worst_case, worst_size = max(
            (figures["ratio"], case, result["size"])
            for result in results
            for case, figures in result["cases"].items()
        )
        targets.append(
            Target(
                "Hostile input",
                f"{parser.name}: hostile input ≤ {TARGET_RATIO:g}× a harmless one of its size",
                f"worst {worst_ratio:.2f}× ({worst_case}, {worst_size:,} characters); "
                f"harmless {fmt_ms(results[-1]['harmless_s'])} at {results[-1]['size']:,}",
                "harmless input, same run",
                f"{worst_ratio:.2f}×",
                judge(worst_ratio, TARGET_RATIO, at_most=True),
                round(worst_ratio, 3),
                TARGET_RATIO,
            )
        )
    section = Section("parsers", "Parsers of untrusted text", data, targets)
    section.details.append(
        markdown_table(("Parser", "Size", "Hostile input", "Median", "Harmless", "Ratio"), rows)
    )
    return section
