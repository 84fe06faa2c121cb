"""Flavour facets: the names of the user's working preferences and their aliases."""

from __future__ import annotations

import re

__all__ = ["FLAVOUR_ALIASES", "FLAVOUR_FACETS", "normalise_facet"]

FLAVOUR_FACETS: tuple[str, ...] = (
    "communication",
    "coding_style",
    "stack",
    "workflow",
    "environment",
    "directives",
    "anti_preferences",
)
"""The flavour facets, in the order they are listed to a model."""

FLAVOUR_ALIASES: dict[str, str] = {
    "comms": "communication",
    "communication_style": "communication",
    "tone": "communication",
    "coding": "coding_style",
    "code_style": "coding_style",
    "style": "coding_style",
    "tech": "stack",
    "tech_stack": "stack",
    "tools": "stack",
    "process": "workflow",
    "work": "workflow",
    "env": "environment",
    "setup": "environment",
    "machine": "environment",
    "rules": "directives",
    "instructions": "directives",
    "dislikes": "anti_preferences",
    "avoid": "anti_preferences",
    "anti": "anti_preferences",
    "donts": "anti_preferences",
}
"""Other names a model may use for a facet (compared after :func:`normalise_facet`)."""


def _facet_key(name: str) -> str:
    # "Coding Style", "coding-style" and " coding_style " are the same facet; "don'ts" too.
    return "_".join(re.sub(r"['’]", "", name).strip().lower().replace("-", " ").split())


def normalise_facet(name: str) -> str | None:
    """The canonical facet for ``name`` (a facet or an alias), or ``None`` when unknown."""
    key = _facet_key(name)
    if key in FLAVOUR_FACETS:
        return key
    return FLAVOUR_ALIASES.get(key)
