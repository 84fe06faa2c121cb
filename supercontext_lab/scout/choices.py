"""What a constrained emission may choose from: the names that exist and what the run read.

Built from the workspace (the orchestrator's tools, installed skills) and the run's
sources (skills seen in a registry, the attributions of what was read, the facts ranked
for the request), so a grammar or a schema can only name what the grounding check keeps.
"""

from __future__ import annotations

from ..models.choices import BundleChoices, ChoiceFact, ChoiceSkill
from ..reading.relevance import request_terms
from ..sources.workspace import Workspace
from .grounding_names import known_names
from .sources import RunSources, attribution_labels

__all__ = ["bundle_choices"]


def bundle_choices(
    workspace: Workspace, sources: RunSources, request: str, focus: str = ""
) -> BundleChoices:
    """The choices of a run on ``workspace`` that read ``sources`` for ``request``."""
    names = known_names(workspace, sources)
    described = {skill.dir_name: skill.description for skill in workspace.skills}
    installed = [
        ChoiceSkill(skill, True, described.get(skill, "")) for skill in sorted(names.installed)
    ]
    seen = [
        ChoiceSkill(skill, False, sources.skill_description(skill))
        for skill in sources.skills_seen
        if skill not in names.installed
    ]
    return BundleChoices(
        request=request,
        tools=tuple(sorted(names.tools)),
        skills=(*installed, *seen),
        attributions=tuple(attribution_labels(sources)),
        facts=tuple(
            ChoiceFact(fact.number, fact.text, fact.source.label)
            for fact in sources.facts(request_terms(request, focus))
        ),
    )
