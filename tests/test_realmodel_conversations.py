"""Past conversations with a real language model: SmolLM2-135M behind llama.cpp's server.

The archive round trip on the model the lab runs locally: thread one settles something,
thread two's first bundle (the scout on SmolLM2, in the local default, the extractive
format) cites the turn as ``(transcript: <thread one>)`` and the grounding check keeps it.
Then the LongMemEval sample: on the questions whose answer one user turn states, the
bundle carries that turn's conversation and, for most, the answer itself.

They need the ``local`` extra, like ``tests/test_realmodel.py``; without it they skip with
the install hint, except under CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from supercontext_lab import Thread
from supercontext_lab.eval import demo_dataset_path, evaluate
from supercontext_lab.eval.longmemeval import load_longmemeval, question_scores
from supercontext_lab.eval.variants import Variant
from supercontext_lab.models.local import (
    LocalServer,
    local_chat_model,
    local_server,
    resolve_gguf,
    stop_local_servers,
)
from supercontext_lab.routes import parse_model_id
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace
from tests.test_realmodel import _require_extra

pytestmark = [pytest.mark.realmodel, pytest.mark.slow, pytest.mark.timeout(900)]

SAMPLE = Path(demo_dataset_path()).parent / "public" / "longmemeval_sample.json"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    _require_extra()
    running = local_server(resolve_gguf("smollm2"))
    yield running
    stop_local_servers()


def test_thread_two_first_bundle_cites_thread_one_on_smollm2(
    server: LocalServer, tmp_path: Path
) -> None:
    root = build_workspace(
        tmp_path / "ws",
        {"memory/global/bread.md": "Sourdough starter feeding schedule: every morning.\n"},
    )
    scout = local_chat_model("smollm2", timeout_s=300.0)
    one = Thread(
        Workspace(root),
        scout_model=scout,
        orchestrator_model=ScriptedModel(["Noted: teal it is, printed by Jonas."], name="o"),
        thread_id="poster-talk",
        super_context_enabled=True,
    )
    one.send(
        "Settled: the Lund symposium poster uses the teal palette, and Jonas prints it on 3 June."
    )
    two = Thread(
        Workspace(root),
        scout_model=scout,
        orchestrator_model=ScriptedModel(["ok"], name="o"),
        super_context_enabled=True,
    )
    result = two.send("Which palette did we pick for the Lund symposium poster?")
    assert result.prepared, (result.reason, result.reason_detail)
    assert result.envelope is not None
    assert "(transcript: poster-talk)" in result.envelope
    assert "teal" in result.envelope
    report = result.scout.grounding if result.scout is not None else None
    assert report is not None and report.grounded >= 1


def test_on_the_longmemeval_sample_smollm2_cites_the_turn_that_answers(
    server: LocalServer,
) -> None:
    questions = load_longmemeval(SAMPLE)
    stated = [
        q.id
        for q in questions.questions.values()
        if q.type == "single-session-user" and not q.abstention
    ]
    cases = [case for case in questions.cases if case.id in stated]
    variant = Variant.baseline(parse_model_id("local:smollm2")).renamed("smollm2")
    report = evaluate(cases, [variant], cache=False, progress=False)
    scored = [question_scores(questions.questions[r.id], r) for r in report.results]
    assert all(r.ok for r in report.results), [r.problems for r in report.results]
    # Every bundle cites the conversation whose turn states the answer …
    assert all(row["evidence_cited"] for row in scored), scored
    # … and most carry the answer itself.
    assert sum(bool(row["answer_in_bundle"]) for row in scored) >= len(scored) // 2 + 1, scored
