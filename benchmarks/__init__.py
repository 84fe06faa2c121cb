"""Benchmarks of supercontext_lab against the tools a user would otherwise pick.

``python -m benchmarks all`` runs, in one process: memory recall against rank-bm25 and
bm25s on a docstring corpus built offline, its scaling from 10k to 200k documents, the
harness's first-turn overhead, start-up costs, evaluation throughput against a local
OpenAI-compatible server, the parsers of untrusted text on hostile input and the sentence
segmenter against pySBD and syntok. It prints one table of targets and writes
``benchmarks/results/latest.json`` and ``latest.md`` (see ``benchmarks/README.md``).
"""

from __future__ import annotations

__all__: list[str] = []
