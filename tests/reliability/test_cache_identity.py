"""The evaluation's result store serves a stored run only for the same run: everything
that changes what the model is asked is part of the key.

``prefetch = "auto"`` gathers before the first model call on a route marked
``small_model = true``: the same definition on the same server then holds another
conversation, so a stored run of the route without the mark must not be served for it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from supercontext_lab.agents import default_agent_definition
from supercontext_lab.eval import EvalCase, EvalReport, Expectations, Variant, evaluate
from supercontext_lab.eval.keys import model_identity
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.routes import ModelRoute
from supercontext_lab.sources.demo import demo_workspace_path
from supercontext_lab.testing import OpenAITestServer

KERNEL = "What did we decide about the dispersal kernel?"


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(model=OfflineScoutModel()) as served:
        yield served


def _evaluate(variant: Variant, workspace: Path, store: Path) -> EvalReport:
    case = EvalCase("kernel", KERNEL, expect=Expectations(mentions=("2Dt",)))
    return evaluate([case], [variant], workspace=workspace, cache_path=store, progress=False)


def test_a_small_model_route_is_not_served_the_runs_of_the_same_route_unmarked(
    server: OpenAITestServer, tmp_path: Path
) -> None:
    """The same route marked small_model (prefetch gathers first): run again, not reused"""
    workspace = tmp_path / "ws"
    shutil.copytree(
        demo_workspace_path(), workspace, ignore=shutil.ignore_patterns(".supercontext")
    )
    route = ModelRoute(kind="openai", base_url=server.base_url, model="m", timeout_s=10.0)
    small = route.model_copy(update={"small_model": True})
    assert model_identity(route.model_dump()) != model_identity(small.model_dump())
    definition = default_agent_definition()
    assert definition.prefetch == "auto"
    variant = Variant("v", definition, route=route)
    store = tmp_path / "results.sqlite3"

    first = _evaluate(variant, workspace, store)
    marked = _evaluate(replace(variant, route=small), workspace, store)

    assert marked.reused_runs == 0
    assert not marked.results[0].from_cache
    # Its own run: the harness gathered first, so the model was called fewer times (the
    # call they share may come from the response cache: the same messages, the same reply).
    assert 0 < marked.results[0].model_calls < first.results[0].model_calls
    again = _evaluate(replace(variant, route=small), workspace, store)
    assert again.reused_runs == 1  # its own run is stored and served
