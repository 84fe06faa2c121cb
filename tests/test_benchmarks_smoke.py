"""The benchmarks run end to end at a tiny size, so the scripts cannot rot.

The figures measured here mean nothing; what is checked is that every benchmark runs,
judges its targets and writes well-formed results, and that the helpers it relies on
(statistics, corpus extraction, query drawing, the bundle generator) are right.
"""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import pytest

from benchmarks import corpus, parsers, segmenter
from benchmarks.eval_throughput import make_cases
from benchmarks.harness_overhead import make_bundle
from benchmarks.import_time import heaviest_imports
from benchmarks.memory_recall import overlap
from benchmarks.report import MISS, PASS, PENDING, judge
from benchmarks.runner import Options, run_all
from benchmarks.segmenter_cases import CORPORA
from benchmarks.stats import fmt_bytes, fmt_ms, percentile, summarize
from supercontext_lab.bundle import parse_context_bundle

STDLIB = Path(sysconfig.get_paths()["stdlib"])
STATUSES = {PASS, MISS, PENDING}


def tiny_options(tmp: Path) -> Options:
    return Options(
        docs=300,
        corpus_docs=600,
        queries=12,
        sizes=(150, 300),
        corpus_roots=[STDLIB / "json", STDLIB / "email", STDLIB / "logging"],
        build_repeats=2,
        update_repeats=3,
        reopen_files=12,
        reopen_repeats=2,
        scaling_queries={"memorytree": 12, "bm25s": 8, "rank-bm25": 4},
        turn_repeats=2,
        turn_warmup=1,
        preflight_repeats=2,
        preflight_deadline_repeats=1,
        timeit_repeat=2,
        envelope_sizes=(20_000,),
        envelope_repeats=1,
        import_repeats=1,
        load_ext_repeats=1,
        eval_cases=4,
        eval_concurrency=2,
        eval_delay_s=0.01,
        eval_concurrent_repeats=1,
        eval_cache_reruns=1,
        segmenter_repeats=1,
        segmenter_peer_sizes=(400, 1_600),
        segmenter_own_sizes=(2_000, 8_000),
        conversations=20,
        conversation_turns=4,
        conversation_repeats=1,
        conversation_queries=10,
        results_dir=tmp / "results",
        cache_dir=tmp / "cache",
        docs_dir=tmp / "docs",
        command="pytest smoke",
    )


def _quiet(message: str) -> None:
    del message


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench")


def _load(options: Options) -> dict[str, object]:
    data = json.loads((options.results_dir / "latest.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_memory_and_scaling_run_and_write_docs(workdir: Path) -> None:
    options = tiny_options(workdir)
    outcome = run_all(options, ["memory", "scaling"], log=_quiet)
    data = _load(options)
    targets = data["targets"]
    assert isinstance(targets, list) and len(targets) == 6
    assert {t["status"] for t in targets} <= STATUSES
    memory = data["sections"]["memory_recall"]  # type: ignore[index]
    assert memory["documents"] == 300
    assert set(memory["engines"]) == {"memorytree", "bm25s", "bm25s-scores", "rank-bm25"}
    assert memory["engines"]["bm25s-scores"]["same_index_as"] == "bm25s"
    for engine in memory["engines"].values():
        assert engine["build_s"]["n"] == 2
        assert engine["peak_rss_growth_bytes"] is not None
        assert engine["query_ms"]["n"] == engine["queries"] * engine["query_passes"]
    # All three rank by BM25 over the same terms, so their top 8 largely agree.
    for name in ("memorytree", "bm25s", "bm25s-scores"):
        assert memory["overlap_vs_rank_bm25"][name]["recall_at_8"] >= 0.6
    assert memory["updates"]["count_unchanged"] is True
    assert sum(memory["reopen"]["warm_changes"]) == 0
    assert memory["reopen"]["cold_added"] == 12
    points = data["sections"]["scaling"]["points"]  # type: ignore[index]
    assert sorted({p["documents"] for p in points}) == [150, 300]
    assert len(points) == 8
    png = workdir / "docs" / "scaling.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (workdir / "docs" / "performance.md").read_text(encoding="utf-8")
    assert "| Area | Target |" in page and "scaling.png" in page
    assert outcome.markdown.count("Memory recall |") == 6


def test_harness_startup_and_eval_run(workdir: Path) -> None:
    options = tiny_options(workdir / "rest")
    options.docs_dir = None
    run_all(options, ["harness", "startup", "eval"], log=_quiet)
    data = _load(options)
    sections = data["sections"]
    assert isinstance(sections, dict)
    harness = sections["harness_overhead"]
    assert harness["preparation_statuses"] == {"prepared": 2}
    assert harness["parse_ok"] is True and harness["bundle_chars"] == 5000
    startup = sections["startup"]
    assert startup["import"]["added_ms"]["n"] == 1
    assert startup["load_ext"]["status"] in {"measured", "pending"}
    evaluation = sections["eval_throughput"]
    assert evaluation["sequential"]["statuses"] == {"completed": 4}
    if evaluation["cache"]["status"] == "measured":
        assert evaluation["cache"]["rerun_misses"] == 0
        assert evaluation["cache"]["rerun_hits"] > 0
        assert evaluation["cache"]["rerun_reused"] == 4
    # The model server ran in a child process, which reported its request count on exit.
    assert evaluation["server"] == "separate process"
    assert evaluation["server_requests"] > 0
    assert evaluation["server_errors"] == 0
    statuses = {t["area"]: t["status"] for t in data["targets"]}  # type: ignore[attr-defined]
    assert set(statuses) == {"Harness overhead", "Start-up", "Evaluation throughput"}
    assert not (options.results_dir.parent / "docs").exists()


def test_the_conversations_benchmark_imports_and_recalls(workdir: Path) -> None:
    options = tiny_options(workdir / "conversations")
    options.docs_dir = None
    run_all(options, ["conversations"], log=_quiet)
    data = _load(options)
    section = data["sections"]["conversations"]  # type: ignore[index]
    assert section["turns"] == 80
    assert section["complete"] is True and section["idempotent"] is True
    assert section["recall_ms"]["n"] == 10
    assert section["queries_with_hits"] == 10
    statuses = {t["area"] for t in data["targets"]}  # type: ignore[attr-defined]
    assert statuses == {"Past conversations"}


def test_the_parser_benchmark_times_every_parser_on_every_hostile_class(workdir: Path) -> None:
    from benchmarks.envelope_parsers import HOSTILE, PARSERS, harmless, hostile

    options = tiny_options(workdir / "envelope")
    options.docs_dir = None
    run_all(options, ["envelope"], log=_quiet)
    data = _load(options)
    results = data["sections"]["envelope_parsers"]["results"]  # type: ignore[index]
    assert set(results) == {f"{name} @ 20000" for name in HOSTILE}
    for measured in results.values():
        assert set(measured) == set(PARSERS)
        assert all(m["ratio"] > 0 and m["hostile_ms"]["n"] == 1 for m in measured.values())
    targets = [t for t in data["targets"] if t["area"] == "Envelope parsers"]  # type: ignore[attr-defined]
    assert len(targets) == len(HOSTILE) and {t["status"] for t in targets} <= STATUSES
    # The inputs are what they say: well-formed envelopes of the size asked for.
    for name in HOSTILE:
        assert abs(len(hostile(name, 20_000)) - 20_000) <= 64, name
        assert parse_context_bundle(hostile(name, 20_000)) is not None, name
    assert len(harmless(20_000)) == 20_000


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1.0], 50, 1.0),
        ([1.0, 3.0], 50, 2.0),
        ([4.0, 1.0, 3.0, 2.0], 0, 1.0),
        ([4.0, 1.0, 3.0, 2.0], 100, 4.0),
        ([1.0, 2.0, 3.0, 4.0, 5.0], 25, 2.0),
        ([0.0, 10.0], 95, 9.5),
    ],
)
def test_percentile_interpolates_like_numpy(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_summary_orders_its_figures() -> None:
    s = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (s.min, s.q1, s.median, s.q3, s.max, s.n) == (1.0, 2.0, 3.0, 4.0, 5.0, 5)
    assert s.p5 < s.q1 and s.q3 < s.p95
    assert s.scaled(1000.0).median == 3000.0
    with pytest.raises(ValueError, match="empty"):
        summarize([])


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0005, "500 µs"), (0.00123, "1.23 ms"), (0.0456, "45.6 ms"), (2.5, "2.50 s")],
)
def test_fmt_ms(seconds: float, text: str) -> None:
    assert fmt_ms(seconds) == text


@pytest.mark.parametrize(
    ("size", "text"),
    [(None, "n/a"), (512, "512 B"), (2048, "2.0 KiB"), (3 * 1024**2, "3.0 MiB")],
)
def test_fmt_bytes(size: int | None, text: str) -> None:
    assert fmt_bytes(size) == text


@pytest.mark.parametrize(
    ("value", "limit", "at_most", "status"),
    [
        (4.9, 5.0, True, PASS),
        (5.1, 5.0, True, MISS),
        (25.0, 20.0, False, PASS),
        (19.0, 20.0, False, MISS),
    ],
)
def test_judge(value: float, limit: float, at_most: bool, status: str) -> None:
    assert judge(value, limit, at_most=at_most) == status


def test_extract_file_keeps_prose_paragraphs_only(tmp_path: Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        '"""Module summary that is long enough to be kept as a paragraph here.\n\n'
        '>>> print("a doctest is code, not prose")\n"""\n\n'
        "class Thing:\n"
        '    """A thing that keeps its docstring paragraph for the search corpus.\n\n'
        '    short\n    """\n\n'
        "    def method(self):\n"
        '        """The method explains in plain words what it does for callers."""\n'
        "if True:\n"
        "    def nested():\n"
        '        """A function inside an if block is still found by the walker."""\n',
        encoding="utf-8",
    )
    found = corpus.extract_file(str(source), "sample.py")
    assert [origin for _, origin in found] == [
        "sample.py",
        "sample.py:Thing",
        "sample.py:Thing.method",
        "sample.py:nested",
    ]
    assert all(">>>" not in text and text != "short" for text, _ in found)


def test_extract_file_ignores_broken_source(tmp_path: Path) -> None:
    source = tmp_path / "broken.py"
    source.write_text("def oops(:\n", encoding="utf-8")
    assert corpus.extract_file(str(source), "broken.py") == []


def test_corpus_is_cached_and_deterministic(tmp_path: Path) -> None:
    roots = [STDLIB / "json"]
    first = corpus.load_corpus(tmp_path, 50, roots=roots)
    again = corpus.load_corpus(tmp_path, 50, roots=roots)
    assert not first.cached and again.cached
    assert first.docs == again.docs and len(first.docs) > 10
    assert len({d.casefold() for d in first.docs}) == len(first.docs)


def test_queries_are_seeded_distinct_content_words() -> None:
    docs = [
        "The memory tree ranks documents with BM25 scoring over SQLite full text search.",
        "Parsing untrusted envelopes never raises and keeps the closing tag intact.",
    ]
    queries = corpus.make_queries(docs, 6, seed=3)
    assert queries == corpus.make_queries(docs, 6, seed=3)
    assert len(set(queries)) == 6
    for query in queries:
        words = query.split()
        assert len(words) == 3 and len(set(words)) == 3
        assert any(all(w in doc.lower() for w in words) for doc in docs)
    with pytest.raises(ValueError, match="distinct"):
        corpus.make_queries(["one two three four"], 5)


@pytest.mark.parametrize(
    ("size", "expected_min", "expected_max"), [(3, 1, 1), (10, 2, 2), (11, 2, 3)]
)
def test_resize_docs_samples_or_repeats(size: int, expected_min: int, expected_max: int) -> None:
    docs = [f"doc {i}" for i in range(5)]
    out = corpus.resize_docs(docs, size)
    assert len(out) == size
    counts = [out.count(d) for d in set(out)]
    assert (min(counts), max(counts)) == (expected_min, expected_max)
    assert set(out) <= set(docs)
    if size >= len(docs):
        assert set(out) == set(docs)


@pytest.mark.parametrize(
    ("mine", "theirs", "recall", "jaccard"),
    [
        ([[1, 2], [3]], [[1, 2], [3]], 1.0, 1.0),
        ([[1, 2]], [[2, 3]], 0.5, 1 / 3),
        ([[]], [[]], 1.0, 1.0),
        ([[1]], [[]], 0.0, 0.0),
    ],
)
def test_overlap(
    mine: list[list[int]], theirs: list[list[int]], recall: float, jaccard: float
) -> None:
    result = overlap(mine, theirs)
    assert result["recall_at_8"] == pytest.approx(recall, abs=1e-4)
    assert result["jaccard"] == pytest.approx(jaccard, abs=1e-4)


@pytest.mark.parametrize("chars", [1500, 5000, 12000])
def test_make_bundle_has_exact_size_and_parses(chars: int) -> None:
    from supercontext_lab import parse_context_bundle

    text = make_bundle(chars)
    assert len(text) == chars
    bundle = parse_context_bundle(text)
    assert bundle is not None
    assert bundle.recommended_tool_calls[0].tool == "file_read"
    assert len(bundle.recommended_skills) == 4 and bundle.has_enough_context is True


def test_make_cases_are_distinct() -> None:
    cases = make_cases(450)
    assert len(set(cases)) == 450


def test_heaviest_imports_reads_only_the_package_subtree() -> None:
    stderr = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |        900 |   certifi",
            "import time:       200 |       1200 | site",
            "import time:       300 |       5000 |     pydantic_core",
            "import time:       400 |       7000 |   pydantic",
            "import time:      6000 |      14000 |   supercontext_lab.agents.definition",
            "import time:       500 |       1500 |   json",
            "import time:       700 |      23000 | supercontext_lab",
        ]
    )
    found = {item["module"]: item["ms"] for item in heaviest_imports(stderr)}
    assert found == {
        "pydantic": 7.0,
        "supercontext_lab.agents.definition": 6.0,
        "json": 1.5,
    }


def test_the_realmodel_table_is_written_between_markers_and_kept_by_a_full_run(
    tmp_path: Path,
) -> None:
    from benchmarks import realmodel
    from benchmarks.report import write_performance_doc

    row = {
        "valid_rate": 1.0,
        "mention_rate": 0.5,
        "tool_precision": 0.25,
        "skill_precision": 0.0,
        "tokens_mean": 3210.4,
        "model_calls_mean": 1.5,
        "seconds_per_run": 42.0,
        "seconds_per_bundle": 42.0,
        "runs": 2,
        "valid_runs": 2,
    }
    rows = {name: dict(row) for name, _ in realmodel.VARIANTS}
    rows["smollm2-text"].update(valid_runs=0, valid_rate=0.0, seconds_per_bundle=float("nan"))
    rows["smollm2-grammar"].update(runs=1)
    extra = {
        "session": {"server_start_s": 3.0, "cold_s": 7.5, "second_s": 2.5},
        "speed": {"prompt_tps": 270.0, "generation_tps": 120.0},
    }
    section = realmodel._section(rows, cases=2, extra=extra)
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nother tables\n", "utf-8")
    realmodel.write_section(doc, section, seconds=120.0, command="python -m benchmarks realmodel")
    realmodel.write_section(doc, section, seconds=60.0, command="python -m benchmarks realmodel")
    text = doc.read_text("utf-8")
    assert text.count(realmodel.BEGIN) == 1 and text.count(realmodel.END) == 1
    assert "other tables" in text
    assert "| `smollm2-grammar` |" in text and "3,210" in text
    assert "| 0% |" in text and "| — |" in text  # no valid bundle: no seconds per bundle
    # How many cases each row covers, the session's times, llama.cpp's speed, the targets.
    assert "| `smollm2-grammar` | SmolLM2-135M, GBNF grammar of the envelope | 1 |" in text
    assert "same request again in that session takes 2.5 s" in text
    assert "270 prompt tokens/s and 120 generated tokens/s" in text
    assert "| time to the first bundle of a session | 7.5 s | ≤ 8 s |" in text
    write_performance_doc(
        doc, "| new | table |\n", command="python -m benchmarks all", plot_name="s.png"
    )
    rewritten = doc.read_text("utf-8")
    assert "| new | table |" in rewritten and "other tables" not in rewritten
    assert rewritten.count(realmodel.BEGIN) == 1
    assert "| `smollm2-grammar` |" in rewritten


def test_the_structures_table_has_a_row_per_dataset_layout_and_route_between_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks import structures
    from benchmarks.report import write_performance_doc
    from benchmarks.runner import isolated_lab_home

    docs, results = tmp_path / "docs", tmp_path / "results"
    docs.mkdir()
    doc = docs / "performance.md"
    doc.write_text("# Performance\n\nother tables\n", "utf-8")
    argv = ["--limit", "1", "--model", "baseline:rank"]
    with isolated_lab_home():
        assert structures.main(argv, docs=docs, results=results, log=_quiet) == 0
        printed = capsys.readouterr().out
        # Only printed: the file keeps the first run's table.
        only = ["--limit", "1", "--dataset", "demo", "--no-write"]
        assert structures.main(only, docs=docs, results=results, log=_quiet) == 0
    assert "| demo | `offline` | 1 |" in capsys.readouterr().out
    text = doc.read_text("utf-8")
    assert text.count(structures.BEGIN) == 1 and text.count(structures.END) == 1
    assert "other tables" in text and "--limit 1" in text
    rows = [line for line in printed.splitlines() if line.startswith("| ") and "`" in line]
    assert all(row in text for row in rows)
    labels = ["demo", "public set", "structures set", "LongMemEval sample", "unseen workspaces"]
    labels += [f"structures set: {layout}" for layout in ("table", "email", "chat", "prose")]
    unseen = ("table", "email", "chat", "log", "list", "prose")
    # The unseen set's first case of each layout are all the SRE manager's.
    labels += [f"unseen workspaces: {part}" for part in ("sre", *unseen)]
    for route in ("offline", "baseline:rank"):
        mine = [row for row in rows if f"| `{route}` |" in row]
        assert sorted(row.split(" | ")[0][2:] for row in mine) == sorted(labels)
        for row in mine:  # one case each, of each layout in the structures and unseen sets
            wanted = {"structures set": "4", "unseen workspaces": "6"}
            label = row.split(" | ")[0][2:]
            assert row.split(" | ")[2] == wanted.get(label.replace(": sre", ""), "1")
    lme = next(row for row in rows if row.startswith("| LongMemEval sample | `offline`"))
    assert lme.endswith(" of 1) |") and "| — | — |" in lme  # LongMemEval sets no mentions
    stored = json.loads((results / "structures.json").read_text("utf-8"))
    assert stored["routes"] == ["offline", "baseline:rank"] and len(stored["rows"]) == 32
    write_performance_doc(
        doc, "| new | table |\n", command="python -m benchmarks all", plot_name="s.png"
    )
    assert doc.read_text("utf-8").count(structures.BEGIN) == 1
    structures.write_block(doc, "rewritten")
    text = doc.read_text("utf-8")
    assert text.count(structures.BEGIN) == 1 and "| new | table |" in text
    assert f"{structures.BEGIN}\nrewritten\n{structures.END}" in text


def test_parsers_run_and_judge_every_parser(workdir: Path) -> None:
    options = tiny_options(workdir / "parsers")
    options.docs_dir = None
    options.parser_repeats = 1
    options.parser_sizes = dict.fromkeys(parsers.PARSERS, (3000,))
    run_all(options, ["parsers"], log=_quiet)
    data = _load(options)
    section = data["sections"]["parsers"]  # type: ignore[index]
    assert set(section["parsers"]) == set(parsers.PARSERS)
    for results in section["parsers"].values():
        assert [r["size"] for r in results] == [3000]
        assert all(case["ratio"] > 0 for case in results[0]["cases"].values())
    targets = data["targets"]
    assert isinstance(targets, list)
    assert [t["area"] for t in targets] == ["Hostile input"] * len(parsers.PARSERS)
    assert {t["status"] for t in targets} <= STATUSES


def test_the_segmenter_benchmark_scores_every_segmenter_it_finds(workdir: Path) -> None:
    options = tiny_options(workdir / "segmenter")
    options.docs_dir = None
    run_all(options, ["segmenter"], log=_quiet)
    data = _load(options)
    section = data["sections"]["segmenter"]  # type: ignore[index]
    installed = [
        name for name in segmenter.SEGMENTERS if "not installed" not in section["versions"][name]
    ]
    assert installed[0] == "ours"
    assert set(section["accuracy"]) == set(CORPORA)
    for scores in section["accuracy"].values():
        assert list(scores) == installed
        assert all(0 <= s["exact"] <= s["cases"] and 0 <= s["f1"] <= 1 for s in scores.values())
    assert set(section["speed"]["median_s"]) == set(installed)
    assert set(section["growth"]) == {f"{n} @ 400-1600" for n in installed} | {"ours @ 2000-8000"}
    targets = data["targets"]
    assert isinstance(targets, list) and len(targets) == len(CORPORA) + 2
    statuses = {t["status"] for t in targets}
    assert statuses <= STATUSES
    if "pysbd" not in installed:
        assert [t["status"] for t in targets[:-1]] == [PENDING] * (len(targets) - 1)


@pytest.mark.parametrize(
    ("sentences", "expected"),
    [([], set()), (["One."], set()), (["A b.", "C d e.", "F."], {3, 7})],
)
def test_segmenter_boundaries_are_offsets_without_whitespace(
    sentences: list[str], expected: set[int]
) -> None:
    assert segmenter.boundaries(sentences) == expected


def test_segmenter_score_counts_exact_texts_and_boundaries() -> None:
    cases = [("A. B.", ["A.", "B."]), ("C d. E.", ["C d.", "E."])]
    scores = segmenter.score(lambda text: [text], cases)
    assert (scores["exact"], scores["precision"], scores["recall"]) == (0, 1.0, 0.0)
    assert scores["wrong"] == [1, 2]


def test_the_harmless_page_is_a_page_of_the_size_asked() -> None:
    page = parsers.harmless_page(50_000)
    assert len(page) == 50_000 and page.startswith("<!doctype html>")
    assert page.count("<a ") > 100
