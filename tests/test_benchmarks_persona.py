"""The persona benchmark runs end to end on the demo workspace for one round (its figures
mean nothing here): it needs the jupyter-ai extra, skipped without it except under CI."""

from __future__ import annotations

import pytest
from lab.persona_support import require_jupyter_ai

from benchmarks import persona


def test_the_persona_benchmark_times_the_persona_against_the_orchestrator_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    require_jupyter_ai()
    status = persona.main(["--repeats", "2"], log=lambda message: None)
    table = capsys.readouterr().out
    assert "| the orchestrator reply alone (peer), p50 / p95 |" in table
    assert "| persona, pack, p50 / p95 |" in table
    added = next(line for line in table.splitlines() if line.startswith("| added by"))
    assert "× the peer" in added
    assert status == (0 if "meets" in added else 1)
