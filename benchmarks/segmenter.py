"""Sentence segmentation: :func:`supercontext_lab.reading.sentences.split_sentences` against
pySBD and syntok.

Three measures, every segmenter on the same texts in the same run:

* **Accuracy** on the labelled corpora of :mod:`benchmarks.segmenter_cases` (pySBD's
  English Golden Rules, the demo workspace's notes, notes of a marine-biology PhD student):
  the share of texts split exactly as labelled, and the precision, recall and F1 of the
  boundaries (positions between sentences, counted on the text without its whitespace
  so that a peer's spacing does not matter).
* **Speed** over every labelled text, runs interleaved (each segmenter once, then again,
  ``repeats`` times); the figure is the ratio of pySBD's median to ours.
* **Growth**: each segmenter on inputs of two sizes, four times apart (notes, "Dr. "
  repeated, ". " repeated, "A. " repeated, words without punctuation), in CPU time, the
  quickest of three runs; a linear segmenter takes about four times as long on the
  larger, a quadratic one sixteen. The peers get small sizes (pySBD is quadratic on
  some of these inputs), ours gets them and large ones (a megabyte).

The peers are optional (``pip install -e ".[bench]"``); without them their rows are
skipped and the targets that compare with them are pending.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from importlib import metadata
from statistics import median
from typing import Any

from .report import MISS, PENDING, Section, Target, judge, markdown_table
from .segmenter_cases import CORPORA, DEMO_NOTES, Case
from .stats import fmt_ms

__all__ = ["GROWTH_INPUTS", "SEGMENTERS", "boundaries", "run", "score"]

Splitter = Callable[[str], list[str]]

#: The segmenters, in the order of the report: ours, then the peers.
SEGMENTERS = ("ours", "pysbd", "syntok")
_PEER_PACKAGES = {"pysbd": "pysbd", "syntok": "syntok"}

#: The growth target: on an input four times larger, at most this many times slower.
GROWTH_TARGET = 6.0


def _ours() -> Splitter:
    from supercontext_lab.reading.sentences import split_sentences

    return split_sentences


def _pysbd() -> Splitter:
    import pysbd  # type: ignore[import-untyped]

    # clean=False: the text is segmented as given (cleaning rewrites it).
    segmenter = pysbd.Segmenter(language="en", clean=False)

    def split(text: str) -> list[str]:
        return [s.strip() for s in segmenter.segment(text) if s.strip()]

    return split


def _syntok() -> Splitter:
    from syntok import segmenter  # type: ignore[import-untyped]

    def split(text: str) -> list[str]:
        # A token is its leading whitespace plus its text, so joining them gives the
        # sentence as written.
        return [
            "".join(token.spacing + token.value for token in sentence).strip()
            for paragraph in segmenter.process(text)
            for sentence in paragraph
        ]

    return split


_LOADERS: dict[str, Callable[[], Splitter]] = {
    "ours": _ours,
    "pysbd": _pysbd,
    "syntok": _syntok,
}


def _available(log: Callable[[str], None]) -> tuple[dict[str, Splitter], dict[str, str]]:
    """The segmenters that load here, and each one's version (or why it did not load)."""
    splitters: dict[str, Splitter] = {}
    versions: dict[str, str] = {}
    for name in SEGMENTERS:
        try:
            splitters[name] = _LOADERS[name]()
        except ImportError:
            versions[name] = 'not installed (pip install -e ".[bench]")'
            log(f"segmenter: {name} is not installed; its rows are skipped")
            continue
        package = _PEER_PACKAGES.get(name, "supercontext-lab")
        try:
            versions[name] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[name] = "unknown"
    return splitters, versions


def boundaries(sentences: Sequence[str]) -> set[int]:
    """Where ``sentences`` break, as offsets into their text with whitespace removed."""
    out: set[int] = set()
    offset = 0
    for sentence in sentences[:-1]:
        offset += len("".join(sentence.split()))
        out.add(offset)
    return out


def score(split: Splitter, cases: Sequence[Case]) -> dict[str, Any]:
    """Exact-match accuracy and boundary precision, recall and F1 of ``split`` on
    ``cases``, and the (1-based) numbers of the cases it got wrong."""
    exact = found = expected = right = 0
    wrong: list[int] = []
    for number, (text, want) in enumerate(cases, 1):
        got = split(text)
        if got == want:
            exact += 1
        else:
            wrong.append(number)
        got_at, want_at = boundaries(got), boundaries(want)
        found += len(got_at)
        expected += len(want_at)
        right += len(got_at & want_at)
    precision = right / found if found else 1.0
    recall = right / expected if expected else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "cases": len(cases),
        "exact": exact,
        "accuracy": exact / len(cases) if cases else 1.0,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "wrong": wrong,
    }


def _fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


#: Inputs of the growth measure, by name: each builds a text of the size asked for.
GROWTH_INPUTS: dict[str, Callable[[int], str]] = {
    "demo notes": lambda n: _fill(" ".join(text for text, _ in DEMO_NOTES) + " ", n),
    "'Dr. ' repeated": lambda n: _fill("Dr. ", n),
    "'. ' repeated": lambda n: _fill(". ", n),
    "'A. ' repeated": lambda n: _fill("A. ", n),
    "words, no punctuation": lambda n: _fill("word ", n),
}


def _cpu_time(split: Splitter, text: str) -> float:
    # CPU time, not wall time: on a shared machine the wait for a core is most of the
    # noise, and the growth ratio is about the work done.
    started = time.process_time()
    split(text)
    return time.process_time() - started


def _speed(
    splitters: dict[str, Splitter], texts: Sequence[str], repeats: int
) -> dict[str, list[float]]:
    def one_pass(split: Splitter) -> float:
        started = time.perf_counter()
        for text in texts:
            split(text)
        return time.perf_counter() - started

    for split in splitters.values():  # one untimed pass each: imports, caches
        one_pass(split)
    samples: dict[str, list[float]] = {name: [] for name in splitters}
    for _ in range(repeats):
        for name, split in splitters.items():
            samples[name].append(one_pass(split))
    return samples


def _growth(split: Splitter, sizes: tuple[int, int], repeats: int) -> dict[str, Any]:
    small, large = sizes
    out: dict[str, Any] = {}
    for name, make in GROWTH_INPUTS.items():
        texts = make(small), make(large)
        times: tuple[list[float], list[float]] = ([], [])
        for _ in range(repeats):
            for text, sample in zip(texts, times, strict=True):
                sample.append(_cpu_time(split, text))
        # The quickest of the repeats: the noise of a busy machine only ever adds time.
        small_s, large_s = min(times[0]), min(times[1])
        out[name] = {
            "small_s": small_s,
            "large_s": large_s,
            "growth": large_s / small_s if small_s > 0 else float("inf"),
        }
    return out


def _heading(name: str, versions: dict[str, str], splitters: dict[str, Splitter]) -> str:
    return f"{name} {versions[name]}" if name in splitters else name


def _pct(figures: dict[str, Any]) -> str:
    return f"{figures['exact']}/{figures['cases']} ({100 * figures['accuracy']:.0f}%)"


def run(
    *,
    repeats: int = 5,
    peer_sizes: tuple[int, int] = (4_000, 16_000),
    own_sizes: tuple[int, int] = (250_000, 1_000_000),
    log: Callable[[str], None] = print,
) -> Section:
    """Measure accuracy, speed and growth of every segmenter that loads here."""
    splitters, versions = _available(log)
    data: dict[str, Any] = {
        "versions": versions,
        "corpora": {name: len(cases) for name, cases in CORPORA.items()},
        "accuracy": {},
        "repeats": repeats,
    }
    targets: list[Target] = []
    area = "Sentence segmenter"

    log(f"segmenter: accuracy of {', '.join(splitters)} on {len(CORPORA)} labelled corpora")
    accuracy_rows: list[tuple[str, ...]] = []
    for corpus, cases in CORPORA.items():
        scores = {name: score(split, cases) for name, split in splitters.items()}
        data["accuracy"][corpus] = scores
        accuracy_rows.append(
            (
                corpus,
                str(len(cases)),
                *(
                    f"{_pct(scores[name])}, F1 {scores[name]['f1']:.3f}"
                    if name in scores
                    else "not installed"
                    for name in SEGMENTERS
                ),
            )
        )
        ours = scores["ours"]
        measured = "; ".join(f"{name} {_pct(figures)}" for name, figures in scores.items())
        if "pysbd" in scores:
            peer = scores["pysbd"]
            targets.append(
                Target(
                    area,
                    f"{corpus}: texts split exactly right ≥ pySBD's",
                    measured,
                    "pySBD, same run",
                    f"{ours['exact'] - peer['exact']:+d} texts",
                    judge(ours["accuracy"], peer["accuracy"], at_most=False),
                    round(ours["accuracy"], 4),
                    round(peer["accuracy"], 4),
                )
            )
        else:
            targets.append(
                Target(
                    area,
                    f"{corpus}: texts split exactly right ≥ pySBD's",
                    f"{measured}; pySBD not installed",
                    status=PENDING,
                )
            )

    texts = [text for cases in CORPORA.values() for text, _ in cases]
    chars = sum(len(text) for text in texts)
    log(f"segmenter: speed over {len(texts)} texts ({chars:,} characters), {repeats} repeats")
    samples = _speed(splitters, texts, repeats)
    speed = {name: median(times) for name, times in samples.items()}
    data["speed"] = {
        "texts": len(texts),
        "characters": chars,
        "median_s": speed,
        "samples_s": samples,
    }
    speed_rows = [
        (name, fmt_ms(seconds), f"{chars / seconds / 1e6:.2f} M chars/s" if seconds else "—")
        for name, seconds in speed.items()
    ]
    if "pysbd" in speed:
        ratio = speed["pysbd"] / speed["ours"]
        data["speed"]["pysbd_over_ours"] = ratio
        targets.append(
            Target(
                area,
                "faster than pySBD on the labelled texts",
                "; ".join(f"{name} {fmt_ms(seconds)}" for name, seconds in speed.items())
                + f" a pass over {len(texts)} texts",
                "pySBD, same run",
                f"{ratio:.0f}× faster",
                judge(ratio, 1.0, at_most=False),
                round(ratio, 2),
                1.0,
            )
        )
    else:
        targets.append(
            Target(
                area,
                "faster than pySBD on the labelled texts",
                f"ours {fmt_ms(speed['ours'])} a pass; pySBD not installed",
                status=PENDING,
            )
        )

    growth: dict[str, Any] = {}
    growth_rows: list[tuple[str, ...]] = []
    runs = [(name, peer_sizes) for name in splitters] + [("ours", own_sizes)]
    for name, sizes in runs:
        log(f"segmenter: growth of {name} from {sizes[0]:,} to {sizes[1]:,} characters")
        measured_growth = _growth(splitters[name], sizes, max(1, min(repeats, 3)))
        growth[f"{name} @ {sizes[0]}-{sizes[1]}"] = measured_growth
        for case, figures in measured_growth.items():
            growth_rows.append(
                (
                    name,
                    f"{sizes[0]:,} → {sizes[1]:,}",
                    case,
                    fmt_ms(figures["small_s"]),
                    fmt_ms(figures["large_s"]),
                    f"{figures['growth']:.1f}×",
                )
            )
    data["growth"] = growth
    own = growth[f"ours @ {own_sizes[0]}-{own_sizes[1]}"]
    worst_case, worst = max(own.items(), key=lambda item: item[1]["growth"])
    targets.append(
        Target(
            area,
            f"linear: 4× the input takes ≤ {GROWTH_TARGET:g}× the time (ours, "
            f"{own_sizes[1]:,} characters)",
            f"worst {worst['growth']:.1f}× ({worst_case}: {fmt_ms(worst['small_s'])} → "
            f"{fmt_ms(worst['large_s'])})",
            "the same input at a quarter of the size",
            f"{worst['growth']:.1f}×",
            judge(worst["growth"], GROWTH_TARGET, at_most=True) if worst["small_s"] else MISS,
            round(worst["growth"], 3),
            GROWTH_TARGET,
        )
    )

    section = Section("segmenter", "Sentence segmenter", data, targets)
    section.details.append(
        markdown_table(
            ("Corpus", "Texts", *(_heading(name, versions, splitters) for name in SEGMENTERS)),
            accuracy_rows,
        )
    )
    section.details.append(
        markdown_table((f"Segmenter ({len(texts)} texts)", "Median a pass", "Rate"), speed_rows)
    )
    section.details.append(
        markdown_table(
            ("Segmenter", "Characters", "Input", "Smaller (CPU)", "Larger (CPU)", "Growth"),
            growth_rows,
        )
    )
    return section
