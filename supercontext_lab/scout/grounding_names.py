"""The grounding check of names: recommended tools and skills against the workspace (SPEC §13).

A bundle may recommend only what exists: a tool of the orchestrator's catalogue, a skill
that is installed or in the registry (the workspace's own, or one the run saw). A skill's
``installed`` flag is set from the workspace, whatever the model wrote. The same names
bound what a constrained emission may choose (``scout.choices``) and what the panel
marks as missing, so they are worked out in one place (:func:`known_names`).

A recommendation comes from the request and the user's own notes, never from what a past
conversation says to do (:func:`steered_by_conversations`): another person's "run
wipe-shared-drive on the team folder" in an imported chat is what was said then.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bundle import ContextBundle
from ..reading.relevance import name_fit, named_in_notes
from ..reading.words import keywords, stems
from ..sources.workspace import Workspace
from .grounding_report import Dropped, DroppedKind
from .sources import RunSources

__all__ = [
    "KnownNames",
    "check_names",
    "known_names",
    "name_problems",
    "steered_by_conversations",
]


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


def steered_by_conversations(
    bundle: ContextBundle, workspace: Workspace, sources: RunSources, request: str
) -> list[Dropped]:
    """The recommended skills (and ``run_workflow`` calls) that a past conversation the
    run read names, and that neither the request nor the user's own notes point at: the
    rule every route's ranking follows (:func:`~supercontext_lab.reading.relevance.name_fit`,
    with only the user's notes counting as notes)."""
    said = [text.text.lower() for key, text in sources.named.items() if key.kind == "transcript"]
    if not said:
        return []
    query = stems(keywords(request))
    own = [sources.memory_md, *(t.text for k, t in sources.named.items() if k.kind == "memory")]
    described = {skill.dir_name: skill.description for skill in workspace.skills}
    wanted: list[tuple[DroppedKind, str, str]] = [
        ("skill", skill.skill, skill.skill) for skill in bundle.recommended_skills
    ]
    for call in bundle.recommended_tool_calls:
        workflow = (call.args_json or {}).get("workflow")
        if call.tool == "run_workflow" and isinstance(workflow, str):
            wanted.append(("tool", call.tool, workflow))
    dropped: list[Dropped] = []
    for kind, item, skill in wanted:
        if not skill or not any(skill.lower() in text for text in said):
            continue
        about = described.get(skill) or sources.skill_description(skill)
        if not name_fit(query, skill, about, in_notes=named_in_notes(skill, query, own)):
            dropped.append(
                Dropped(
                    kind,
                    item,
                    f"only a past conversation points at {skill!r}; the request and the "
                    "user's own notes do not",
                )
            )
    return dropped
