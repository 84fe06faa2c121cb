"""From a model hint (``burst``, ``agentic``) to a :class:`ChatModel`.

Routes live in ``config.toml`` as ``[models.<hint>]`` tables; every hint defaults to the
embedded offline models so the lab works with no network and no key. An ``offline``
route gives the offline scout for the scout's role and the offline orchestrator for the
orchestrator's role. A ``local`` route starts (or reuses) a llama.cpp server on this
machine; its package is imported only then, so the core never needs the extra.
"""

from __future__ import annotations

from typing import Literal

from ..routes import ModelRoute, get_model_route
from .base import ChatModel
from .baseline import PickBaseline
from .offline import OfflineOrchestratorModel, OfflineScoutModel
from .openai import OpenAICompatibleModel

__all__ = ["ORCHESTRATOR_HINT", "SCOUT_HINT", "Role", "model_for_route", "resolve_model"]

SCOUT_HINT = "burst"
ORCHESTRATOR_HINT = "agentic"

Role = Literal["scout", "orchestrator"]


def model_for_route(route: ModelRoute, *, role: Role) -> ChatModel:
    """Build the model a route describes, for the given role."""
    if route.kind == "offline" or (route.kind == "baseline" and role == "orchestrator"):
        return OfflineScoutModel() if role == "scout" else OfflineOrchestratorModel()
    if route.kind == "baseline":
        return PickBaseline("random" if route.model == "random" else "rank")
    # Only the scout emits a bundle; the orchestrator answers in free text.
    bundle_format = route.resolved_bundle_format() if role == "scout" else "text"
    if route.kind == "local":
        from .local import local_chat_model

        return local_chat_model(route.model, timeout_s=route.timeout_s, bundle_format=bundle_format)
    return OpenAICompatibleModel.from_route(route, bundle_format=bundle_format)


def resolve_model(hint: str, *, role: Role) -> ChatModel:
    """The model for ``hint`` from the lab's config (offline by default)."""
    return model_for_route(get_model_route(hint), role=role)
