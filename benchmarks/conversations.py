"""Past conversations: importing a chat export, and recalling turns from it.

The export is ChatGPT's ``conversations.json`` format (the one users bring most): by
default 1,000 conversations of 10 turns, user and assistant in turn, each conversation a
branch of a message tree as ChatGPT writes it. The turns are paragraphs of the benchmark
corpus (:mod:`.corpus`: docstrings of the installed packages, the text the memory
benchmarks search), taken in a seeded order, so the words of the turns are as varied as
real text is; nothing is downloaded.

* **import**: ``import_conversations(file, workspace)`` into a fresh workspace, end to
  end (reading, parsing, the transcript store, indexing every turn in the memory tree),
  best of ``repeats``; then the same file again, which must change nothing.
* **recall**: the scout's ``memory_recall`` tool on ``*`` (limit 8) in that workspace:
  BM25 over notes and turns, every turn checked against the store and quoted with its
  neighbour. Queries are three to eight content words of a random turn (seeded), as a
  scout asks; p50 and p95, and apart the p95 of ten-word queries (the longest the
  offline scout sends).

Targets: an import of 1,000 conversations (about 10,000 turns) in at most 10 s on two
cores, and recall p95 at most 10 ms at that size.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .report import MISS, Section, Target, judge, markdown_table
from .stats import fmt_ms, summarize

__all__ = ["TARGET_IMPORT_S", "TARGET_RECALL_P95_MS", "make_export", "make_queries", "run"]

TARGET_IMPORT_S = 10.0
TARGET_RECALL_P95_MS = 10.0


def make_export(
    paragraphs: Sequence[str], conversations: int, turns: int, seed: int = 7
) -> list[dict[str, Any]]:
    """A ChatGPT ``conversations.json`` of ``conversations`` × ``turns`` turns, each turn
    one of ``paragraphs`` (seeded order, repeated when there are too few)."""
    rng = random.Random(seed)
    pool = list(paragraphs)
    rng.shuffle(pool)
    export = []
    for number in range(conversations):
        root: dict[str, Any] = {"id": "root", "message": None, "parent": None, "children": []}
        mapping: dict[str, Any] = {"root": root}
        parent = "root"
        started = 1_650_000_000 + number * 3600
        for index in range(turns):
            node = f"n{number}-{index}"
            text = pool[(number * turns + index) % len(pool)]
            mapping[parent]["children"].append(node)
            mapping[node] = {
                "id": node,
                "parent": parent,
                "children": [],
                "message": {
                    "id": node,
                    "author": {"role": "user" if index % 2 == 0 else "assistant"},
                    "create_time": started + index * 30,
                    "content": {"content_type": "text", "parts": [text]},
                    "metadata": {},
                    "recipient": "all",
                },
            }
            parent = node
        export.append(
            {
                "title": f"Conversation {number}",
                "create_time": started,
                "mapping": mapping,
                "current_node": parent,
                "conversation_id": f"bench-{number:05d}",
            }
        )
    return export


def make_queries(
    export: list[dict[str, Any]], count: int, *, lengths: tuple[int, int] = (3, 8), seed: int = 11
) -> list[str]:
    """``count`` queries of ``lengths`` content words of random turns (seeded)."""
    from supercontext_lab.reading.words import keywords

    rng = random.Random(seed)
    drawn: list[str] = []
    while len(drawn) < count:
        conversation = rng.choice(export)
        nodes = [n for n in conversation["mapping"].values() if n["message"] is not None]
        words = sorted(set(keywords(rng.choice(nodes)["message"]["content"]["parts"][0])))
        want = rng.randint(*lengths)
        if len(words) >= want:
            drawn.append(" ".join(rng.sample(words, want)))
    return drawn


def _recall_times(context: Any, queries: Sequence[str]) -> tuple[list[float], int]:
    from supercontext_lab.tools.memory import MemoryRecallArgs, memory_recall

    latencies: list[float] = []
    found = 0
    for query in queries:
        started = time.perf_counter()
        result = memory_recall(context, MemoryRecallArgs(namespace="*", query=query, limit=8))
        latencies.append(time.perf_counter() - started)
        hits = result.data.get("hits", []) if isinstance(result.data, dict) else []
        found += bool(hits)
    return latencies, found


def run(
    paragraphs: Sequence[str],
    *,
    conversations: int = 1000,
    turns: int = 10,
    repeats: int = 3,
    queries: int = 200,
    log: Callable[[str], None] = print,
) -> Section:
    """Measure the import of a chat export made of ``paragraphs`` and recall from it."""
    from supercontext_lab.conversations import import_conversations
    from supercontext_lab.sources.workspace import Workspace
    from supercontext_lab.tools.context import ToolContext

    log(f"conversations: building an export of {conversations} × {turns} turns")
    export = make_export(paragraphs, conversations, turns)
    with tempfile.TemporaryDirectory(prefix="scl-bench-conversations-") as tmp:
        work = Path(tmp)
        path = work / "conversations.json"
        path.write_text(json.dumps(export), encoding="utf-8")
        size = path.stat().st_size
        timings: list[float] = []
        workspace = work / "ws-0"
        for attempt in range(repeats):
            workspace = work / f"ws-{attempt}"
            workspace.mkdir()
            log(f"conversations: import {attempt + 1} of {repeats}")
            started = time.perf_counter()
            report = import_conversations(path, workspace)
            timings.append(time.perf_counter() - started)
        total = conversations * turns
        complete = len(report.added) == conversations and report.turns_indexed == total
        started = time.perf_counter()
        again = import_conversations(path, workspace)
        reimport_s = time.perf_counter() - started
        idempotent = len(again.unchanged) == conversations and again.turns_indexed == 0
        log(f"conversations: {queries} recalls through memory_recall, then ten-word ones")
        context = ToolContext(Workspace(workspace))
        asked = make_queries(export, queries)
        long_asked = make_queries(export, max(queries // 2, 1), lengths=(10, 10), seed=13)
        _recall_times(context, asked[:5])  # warm the caches, as every run after the first
        latencies, found = _recall_times(context, asked)
        long_latencies, _ = _recall_times(context, long_asked)
    best = min(timings)
    recall = summarize(latencies)
    long_recall = summarize(long_latencies)
    area = "Past conversations"
    targets = [
        Target(
            area,
            f"import {conversations:,} conversations ({conversations * turns:,} turns) "
            f"≤ {TARGET_IMPORT_S:g} s",
            f"{best:.2f} s (best of {repeats}; {size / 1e6:.1f} MB export); "
            f"the same file again {reimport_s:.2f} s",
            "—",
            "—",
            judge(best, TARGET_IMPORT_S, at_most=True) if complete and idempotent else MISS,
            round(best, 3),
            TARGET_IMPORT_S,
        ),
        Target(
            area,
            f"recall p95 at {conversations * turns:,} turns ≤ {TARGET_RECALL_P95_MS:g} ms",
            f"p95 {fmt_ms(recall.p95)} (p50 {fmt_ms(recall.median)}, n={recall.n}, 3–8 "
            f"words); ten words: p95 {fmt_ms(long_recall.p95)}",
            "—",
            "—",
            judge(recall.p95 * 1000.0, TARGET_RECALL_P95_MS, at_most=True),
            round(recall.p95 * 1000.0, 3),
            TARGET_RECALL_P95_MS,
        ),
    ]
    data = {
        "conversations": conversations,
        "turns": conversations * turns,
        "export_bytes": size,
        "import_s": timings,
        "reimport_s": reimport_s,
        "complete": complete,
        "idempotent": idempotent,
        "recall_ms": recall.scaled(1000.0).to_dict(),
        "recall_ten_words_ms": long_recall.scaled(1000.0).to_dict(),
        "queries": len(asked),
        "queries_with_hits": found,
    }
    section = Section("conversations", "Past conversations", data, targets)
    section.details.append(
        markdown_table(
            ("Step", "Figure"),
            [
                (
                    "export",
                    f"{conversations:,} conversations, {conversations * turns:,} turns, {size / 1e6:.1f} MB",
                ),
                ("import (best)", f"{best:.2f} s"),
                ("import of the same file again", f"{reimport_s:.2f} s (nothing written)"),
                ("recall p50 / p95, 3–8 words", f"{fmt_ms(recall.median)} / {fmt_ms(recall.p95)}"),
                (
                    "recall p50 / p95, 10 words",
                    f"{fmt_ms(long_recall.median)} / {fmt_ms(long_recall.p95)}",
                ),
                ("queries with a hit", f"{found} of {len(asked)}"),
            ],
        )
    )
    return section
