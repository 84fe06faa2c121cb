"""Run the benchmarks in one process and write the results.

:func:`run_all` is what ``python -m benchmarks`` calls; :class:`Options` holds every size
and repeat count, so the smoke test can run the very same code at a tiny size.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import corpus as corpus_mod
from .report import Section, machine_info, write_performance_doc, write_results

__all__ = ["BENCHMARKS", "REPO_ROOT", "Options", "RunOutcome", "run_all"]

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Names accepted on the command line, in the order ``all`` runs them.
BENCHMARKS = (
    "memory",
    "scaling",
    "harness",
    "preflight",
    "envelope",
    "startup",
    "eval",
    "parsers",
    "segmenter",
    "conversations",
)


@dataclass
class Options:
    """Sizes, repeats and output places of one run (defaults: the full benchmark)."""

    docs: int = 50_000
    corpus_docs: int = 100_000
    queries: int = 200
    sizes: tuple[int, ...] = (10_000, 50_000, 200_000)
    corpus_roots: list[Path] | None = None
    build_repeats: int = 3
    update_repeats: int = 30
    reopen_files: int = 2000
    reopen_repeats: int = 5
    scaling_queries: dict[str, int] = field(
        default_factory=lambda: {"memorytree": 200, "bm25s": 100, "rank-bm25": 40}
    )
    turn_repeats: int = 30
    turn_warmup: int = 3
    #: Turns per design of the pre-flight benchmark, and turns per missed deadline.
    preflight_repeats: int = 30
    preflight_deadline_repeats: int = 5
    timeit_repeat: int = 7
    #: Envelope sizes (characters) and repeats of the envelope parsers' hostile-input run.
    envelope_sizes: tuple[int, ...] = (1_000_000, 4_000_000)
    envelope_repeats: int = 7
    import_repeats: int = 10
    load_ext_repeats: int = 5
    eval_cases: int = 200
    eval_concurrency: int = 16
    eval_delay_s: float = 0.05
    eval_concurrent_repeats: int = 2
    eval_cache_reruns: int = 2
    parser_repeats: int = 5
    #: Input sizes by parser of the other untrusted-text parsers (``None``: each parser's
    #: own, 1 to 4 MB).
    parser_sizes: dict[str, tuple[int, ...]] | None = None
    #: Repeats of the sentence segmenter's speed run, and the two sizes (characters) of
    #: its growth measure for the peers and for ours.
    segmenter_repeats: int = 5
    segmenter_peer_sizes: tuple[int, int] = (4_000, 16_000)
    segmenter_own_sizes: tuple[int, int] = (250_000, 1_000_000)
    #: The chat export imported and recalled from: conversations, turns each, import
    #: repeats, recall queries.
    conversations: int = 1000
    conversation_turns: int = 10
    conversation_repeats: int = 3
    conversation_queries: int = 200
    results_dir: Path = field(default_factory=lambda: REPO_ROOT / "benchmarks" / "results")
    #: Where the corpus is cached (kept apart from the results so ``--results`` reuses it).
    cache_dir: Path = field(default_factory=lambda: REPO_ROOT / "benchmarks" / "results" / "cache")
    #: Where ``performance.md`` and ``scaling.png`` go; ``None`` writes neither.
    docs_dir: Path | None = field(default_factory=lambda: REPO_ROOT / "docs")
    command: str = "python -m benchmarks all"

    @classmethod
    def quick(cls) -> Options:
        """A run of well under a minute, for trying changes (not for the published table)."""
        return cls(
            docs=5_000,
            corpus_docs=20_000,
            queries=100,
            sizes=(2_000, 5_000, 20_000),
            build_repeats=2,
            update_repeats=10,
            reopen_files=300,
            turn_repeats=10,
            preflight_repeats=10,
            preflight_deadline_repeats=2,
            envelope_sizes=(1_000_000,),
            envelope_repeats=3,
            import_repeats=5,
            load_ext_repeats=3,
            eval_cases=48,
            eval_concurrent_repeats=2,
            eval_cache_reruns=2,
            parser_repeats=3,
            parser_sizes=dict.fromkeys(
                (
                    "html_to_text",
                    "parse_front_matter",
                    "parse_dataset",
                    "body_text",
                    "cli printable",
                ),
                (200_000,),
            ),
            segmenter_repeats=3,
            segmenter_own_sizes=(50_000, 200_000),
            conversations=200,
            conversation_repeats=1,
            conversation_queries=100,
            docs_dir=None,
            command="python -m benchmarks all --quick",
        )


@dataclass
class RunOutcome:
    """What :func:`run_all` produced."""

    sections: list[Section]
    total_seconds: float
    json_path: Path
    markdown_path: Path
    markdown: str
    docs_paths: list[Path]


@contextlib.contextmanager
def isolated_lab_home() -> Iterator[Path]:
    """A private lab home for the run, so no user config or model route leaks in."""
    saved = {k: v for k, v in os.environ.items() if k.startswith(("OPENHUMAN_", "SUPERCONTEXT_"))}
    for name in saved:
        del os.environ[name]
    home = Path(tempfile.mkdtemp(prefix="scl-bench-home-"))
    os.environ["SUPERCONTEXT_LAB_HOME"] = str(home)
    try:
        yield home
    finally:
        os.environ.pop("SUPERCONTEXT_LAB_HOME", None)
        os.environ.update(saved)
        shutil.rmtree(home, ignore_errors=True)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class _Shared:
    """What several benchmarks of one run use: the corpus, its documents and queries, the
    memory benchmark's engines (reused by the scaling one), the plots and pages written."""

    work: Path
    corpus: corpus_mod.Corpus | None = None
    docs: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    runs: dict[str, Any] = field(default_factory=dict)
    docs_paths: list[Path] = field(default_factory=list)


def _load_corpus(options: Options, shared: _Shared, log: Callable[[str], None]) -> None:
    log(f"corpus: loading or building {options.corpus_docs} docstring paragraphs")
    corpus = corpus_mod.load_corpus(
        options.cache_dir, options.corpus_docs, roots=options.corpus_roots, progress=log
    )
    log(
        f"corpus: {len(corpus.docs)} paragraphs from {corpus.files_parsed} files "
        f"in {corpus.build_seconds:.1f} s ({'cache' if corpus.cached else 'parsed'})"
    )
    shared.corpus = corpus
    shared.docs = corpus_mod.resize_docs(corpus.docs, options.docs)
    shared.queries = corpus_mod.make_queries(shared.docs, options.queries)


def _memory(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import memory_recall

    section, shared.runs = memory_recall.run(
        shared.docs,
        shared.queries,
        shared.work / "memory",
        build_repeats=options.build_repeats,
        update_repeats=options.update_repeats,
        reopen_files=options.reopen_files,
        reopen_repeats=options.reopen_repeats,
        log=log,
    )
    assert shared.corpus is not None
    section.data["corpus"] = shared.corpus.describe()
    section.data["tokenizer"] = corpus_mod.tokenizer_name()
    section.data["sample_queries"] = shared.queries[:10]
    return section


def _scaling(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import scaling

    assert shared.corpus is not None
    section, points = scaling.run(
        shared.corpus.docs,
        shared.queries,
        shared.work / "scaling",
        options.sizes,
        reuse=shared.runs,
        query_counts=options.scaling_queries,
        log=log,
    )
    if options.docs_dir is not None:
        shared.docs_paths.append(scaling.plot(points, options.docs_dir / "scaling.png"))
    return section


def _harness(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import harness_overhead

    return harness_overhead.run(
        repeats=options.turn_repeats,
        warmup=options.turn_warmup,
        timeit_repeat=options.timeit_repeat,
        log=log,
    )


def _preflight(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import preflight

    return preflight.run(
        repeats=options.preflight_repeats,
        warmup=options.turn_warmup,
        deadline_repeats=options.preflight_deadline_repeats,
        log=log,
    )


def _envelope(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import envelope_parsers

    return envelope_parsers.run(
        sizes=options.envelope_sizes, repeats=options.envelope_repeats, log=log
    )


def _parsers(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import parsers

    return parsers.run(repeats=options.parser_repeats, sizes=options.parser_sizes, log=log)


def _segmenter(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import segmenter

    return segmenter.run(
        repeats=options.segmenter_repeats,
        peer_sizes=options.segmenter_peer_sizes,
        own_sizes=options.segmenter_own_sizes,
        log=log,
    )


def _startup(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import import_time

    return import_time.run(
        import_repeats=options.import_repeats,
        load_ext_repeats=options.load_ext_repeats,
        log=log,
    )


def _eval(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import eval_throughput

    return eval_throughput.run(
        cases=options.eval_cases,
        concurrency=options.eval_concurrency,
        delay_s=options.eval_delay_s,
        concurrent_repeats=options.eval_concurrent_repeats,
        cache_reruns=options.eval_cache_reruns,
        log=log,
    )


def _conversations(options: Options, shared: _Shared, log: Callable[[str], None]) -> Section:
    from . import conversations

    assert shared.corpus is not None
    return conversations.run(
        shared.corpus.docs,
        conversations=options.conversations,
        turns=options.conversation_turns,
        repeats=options.conversation_repeats,
        queries=options.conversation_queries,
        log=log,
    )


_RUNNERS: dict[str, Callable[[Options, _Shared, Callable[[str], None]], Section]] = {
    "memory": _memory,
    "scaling": _scaling,
    "harness": _harness,
    "preflight": _preflight,
    "envelope": _envelope,
    "parsers": _parsers,
    "startup": _startup,
    "eval": _eval,
    "segmenter": _segmenter,
    "conversations": _conversations,
}


def run_all(
    options: Options,
    names: Sequence[str] = BENCHMARKS,
    *,
    log: Callable[[str], None] = _stderr,
) -> RunOutcome:
    """Run the named benchmarks, write the results and (for a full run) the docs."""
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        raise ValueError(f"unknown benchmark(s) {', '.join(unknown)}; choose from {BENCHMARKS}")
    started = time.perf_counter()
    load_at_start = machine_info()["load_average"]
    sections: list[Section] = []
    with isolated_lab_home(), tempfile.TemporaryDirectory(prefix="scl-bench-") as tmp:
        shared = _Shared(work=Path(tmp))
        if {"memory", "scaling", "conversations"} & set(names):
            _load_corpus(options, shared, log)
        for name in BENCHMARKS:  # in the order of BENCHMARKS, whatever the order asked
            if name in names:
                t0 = time.perf_counter()
                section = _RUNNERS[name](options, shared, log)
                section.seconds = time.perf_counter() - t0
                sections.append(section)
    total = time.perf_counter() - started
    info = {**machine_info(), "load_average_at_start": load_at_start}
    json_path, md_path, markdown = write_results(
        options.results_dir, sections, total_seconds=total, command=options.command, info=info
    )
    docs_paths = shared.docs_paths
    if options.docs_dir is not None:
        perf = options.docs_dir / "performance.md"
        write_performance_doc(perf, markdown, command=options.command, plot_name="scaling.png")
        docs_paths.append(perf)
    return RunOutcome(sections, total, json_path, md_path, markdown, docs_paths)
