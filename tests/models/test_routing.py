"""From a route to a model: the role decides the offline model and the emission format."""

from __future__ import annotations

import pytest

from supercontext_lab.models.offline import OfflineOrchestratorModel, OfflineScoutModel
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.models.routing import (
    ORCHESTRATOR_HINT,
    SCOUT_HINT,
    model_for_route,
    resolve_model,
)
from supercontext_lab.routes import BundleFormat, ModelRoute, set_model_route


def test_an_offline_route_gives_the_offline_model_of_each_role() -> None:
    route = ModelRoute(kind="offline")
    assert isinstance(model_for_route(route, role="scout"), OfflineScoutModel)
    assert isinstance(model_for_route(route, role="orchestrator"), OfflineOrchestratorModel)


@pytest.mark.parametrize("bundle_format", ["json_schema", "grammar", "text"])
def test_only_the_scout_uses_the_routes_bundle_format(bundle_format: BundleFormat) -> None:
    route = ModelRoute(
        kind="openai",
        base_url="http://127.0.0.1:9/v1",
        model="qwen2.5",
        bundle_format=bundle_format,
    )
    scout = model_for_route(route, role="scout")
    orchestrator = model_for_route(route, role="orchestrator")
    assert isinstance(scout, OpenAICompatibleModel)
    assert isinstance(orchestrator, OpenAICompatibleModel)
    assert scout.info.bundle_format == bundle_format
    # The orchestrator answers in free text whatever the route says.
    assert orchestrator.info.bundle_format == "text"


def test_hints_default_to_the_offline_models() -> None:
    assert isinstance(resolve_model(SCOUT_HINT, role="scout"), OfflineScoutModel)
    assert isinstance(
        resolve_model(ORCHESTRATOR_HINT, role="orchestrator"), OfflineOrchestratorModel
    )


def test_a_configured_hint_is_read_from_the_config() -> None:
    route = ModelRoute(kind="openai", base_url="http://127.0.0.1:9/v1", model="qwen2.5")
    set_model_route(SCOUT_HINT, route)
    model = resolve_model(SCOUT_HINT, role="scout")
    assert isinstance(model, OpenAICompatibleModel)
    assert model.info.cache_identity.startswith("http://127.0.0.1:9/v1")
    # The other hint is untouched.
    assert isinstance(
        resolve_model(ORCHESTRATOR_HINT, role="orchestrator"), OfflineOrchestratorModel
    )
