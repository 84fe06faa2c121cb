"""The grounding check of names: recommended tools and skills against the workspace (SPEC §13).

A bundle may recommend only what exists: a tool of the orchestrator's catalogue, a skill
that is installed or in the registry (the workspace's own, or one the run saw). A skill's
``installed`` flag is set from the workspace, whatever the model wrote. The same names
bound what a constrained emission may choose (``scout.choices``) and what the panel
marks as missing, so they are worked out in one place (:func:`known_names`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bundle import ContextBundle
from ..sources.workspace import Workspace
from .grounding_report import Dropped
from .sources import RunSources

__all__ = ["KnownNames", "check_names", "known_names", "name_problems"]


@dataclass(frozen=True)
class KnownNames:
    """The names a bundle may recommend: tools, installed skills, registry entries."""

    tools: frozenset[str]
    installed: frozenset[str]
    registry: frozenset[str]


def known_names(workspace: Workspace, sources: RunSources | None = None) -> KnownNames:
    """The orchestrator's tools, the installed skills, and the registry entries (the
    workspace's own and those the run saw, a remote registry's included)."""
    seen = sources.skills_seen if sources is not None else {}
    installed = {skill.dir_name for skill in workspace.skills}
    return KnownNames(
        tools=frozenset(tool.name for tool in workspace.orchestrator_tools),
        installed=frozenset(installed),
        registry=frozenset({entry.id for entry in workspace.registry} | set(seen)),
    )


def name_problems(
    bundle: ContextBundle, names: KnownNames
) -> tuple[list[Dropped], list[str], dict[int, bool]]:
    """What ``bundle`` recommends that ``names`` lacks, the ``installed`` flags corrected
    (one line each), and the flag each kept skill gets, by its index in the bundle."""
    dropped: list[Dropped] = []
    corrected: list[str] = []
    flags: dict[int, bool] = {}
    for call in bundle.recommended_tool_calls:
        if call.tool not in names.tools:
            dropped.append(Dropped("tool", call.tool, "not in the orchestrator's tool catalogue"))
    for index, skill in enumerate(bundle.recommended_skills):
        installed = skill.skill in names.installed
        if not installed and skill.skill not in names.registry:
            dropped.append(Dropped("skill", skill.skill, "neither installed nor in the registry"))
            continue
        flags[index] = installed
        if skill.installed is not installed:
            corrected.append(
                f"skill {skill.skill!r}: installed set to {str(installed).lower()} "
                f"from the workspace (the bundle said {skill.installed})"
            )
    return dropped, corrected, flags


def check_names(bundle: ContextBundle, workspace: Workspace) -> list[Dropped]:
    """The name checks alone: recommended tools and skills that ``workspace`` lacks."""
    dropped, _corrected, _flags = name_problems(bundle, known_names(workspace))
    return dropped
