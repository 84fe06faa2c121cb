"""A scout run's record (scout/records.py): its JSON shape masks secrets."""

from __future__ import annotations

from supercontext_lab.models.base import Usage
from supercontext_lab.scout import ScoutRun, ScoutStatus, TraceStep


def test_to_dict_masks_secrets_in_every_text_of_the_run() -> None:
    key = "sk-proj-Zx81Lq0P4eT7mN2vB6cR9"
    step = TraceStep(
        kind="tool",
        iteration=1,
        started_ms=0.0,
        duration_ms=1.0,
        tool="memory_recall",
        arguments=f'{{"query": "{key}"}}',
        result_preview=f"hit: {key}",
    )
    run = ScoutRun(
        status=ScoutStatus.COMPLETED,
        reason=None,
        output=key,
        envelope=None,
        bundle=None,
        problems=[f"problem quoting {key}"],
        trace=[step],
        usage=Usage(),
        model_calls=0,
        elapsed_ms=1.0,
        model_name="m",
        definition_hash="h",
    )
    data = run.to_dict()
    assert key not in str(data)
    assert data["problems"] == ["problem quoting [secret removed]"]
    assert data["trace"][0]["result_preview"] == "hit: [secret removed]"
