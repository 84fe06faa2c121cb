"""The MCP benchmark runs end to end with a few calls (its figures mean nothing here): it
needs the mcp extra, skipped without it except under ``CI=true``."""

from __future__ import annotations

import importlib.util
import os

import pytest

from benchmarks import mcp_server


def test_the_mcp_benchmark_measures_the_three_ways(capsys: pytest.CaptureFixture[str]) -> None:
    if importlib.util.find_spec("mcp") is None:
        message = "the mcp extra is not installed"
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on"):
            pytest.fail(f"CI must run the MCP benchmark's smoke test, but {message}")
        pytest.skip(message)
    assert mcp_server.main(["--repeats", "3", "--warmup", "1"], log=lambda message: None) == 0
    table = capsys.readouterr().out
    assert "| MCP over stdio (SDK client, separate process) |" in table
    assert "| in-process `ContextService.prepare` (peer, no MCP) |" in table
    assert "3/3 prepared" in table
    assert "the pre-flight read 8,000 characters" in table
