"""From a model hint (``burst``, ``agentic``) to a :class:`ChatModel`.

Routes live in ``config.toml`` as ``[models.<hint>]`` tables; every hint defaults to the
embedded offline models so the lab works with no network and no key. An ``offline``
route gives the offline scout for the scout's role and the offline orchestrator for the
orchestrator's role.
"""

from __future__ import annotations

from typing import Literal

from ..routes import ModelRoute, get_model_route
from .base import ChatModel
from .offline import OfflineOrchestratorModel, OfflineScoutModel
from .openai import OpenAICompatibleModel

__all__ = ["ORCHESTRATOR_HINT", "SCOUT_HINT", "Role", "model_for_route", "resolve_model"]

SCOUT_HINT = "burst"
ORCHESTRATOR_HINT = "agentic"

Role = Literal["scout", "orchestrator"]


def model_for_route(route: ModelRoute, *, role: Role) -> ChatModel:
    """Build the model a route describes, for the given role."""
    if route.kind == "offline":
        return OfflineScoutModel() if role == "scout" else OfflineOrchestratorModel()
    return OpenAICompatibleModel.from_route(route)


def resolve_model(hint: str, *, role: Role) -> ChatModel:
    """The model for ``hint`` from the lab's config (offline by default)."""
    return model_for_route(get_model_route(hint), role=role)
