"""What a constrained emission may choose from: the names and sources that exist (SPEC §13).

A model asked for the ``[context_bundle]`` envelope under a grammar or a JSON schema
should pick, not spell: recommended tools from the orchestrator's catalogue, skills from
the installed ones and the registry entries the run saw, attributions from the sources
the run read, and (in the ``extractive`` format) summary facts by their number. The scout
builds one :class:`BundleChoices` per call from its run and passes it to
``ChatModel.complete(choices=…)``; a model that constrains nothing ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..bundle.render import attributions_as_text

__all__ = ["BundleChoices", "ChoiceFact", "ChoiceSkill"]


@dataclass(frozen=True)
class ChoiceSkill:
    """A skill the bundle may recommend; ``installed`` comes from the workspace."""

    id: str
    installed: bool
    description: str = ""


@dataclass(frozen=True)
class ChoiceFact:
    """One gathered sentence, numbered from 1, and the attribution that cites it."""

    number: int
    text: str
    attribution: str
    """The attribution's label, e.g. ``"memory: project-grant/budget"`` or ``"profile"``."""

    @property
    def from_conversation(self) -> bool:
        """Whether the fact quotes a past conversation (``transcript: <id>``), not the
        user's own notes."""
        return self.attribution.startswith("transcript:")

    @property
    def cited(self) -> str:
        """The fact as a summary line writes it: an attribution inside the note's text is
        the note's words (written in square brackets), the one citation is its source."""
        return f"{attributions_as_text(self.text)} ({self.attribution})"


@dataclass(frozen=True)
class BundleChoices:
    """The names, sources and facts one envelope may use (see the module docstring)."""

    request: str = ""
    """The user's message the bundle prepares."""
    tools: tuple[str, ...] = ()
    """The orchestrator's tool names."""
    skills: tuple[ChoiceSkill, ...] = ()
    attributions: tuple[str, ...] = ()
    """Attribution labels of the sources the run read (``"memory"`` included)."""
    facts: tuple[ChoiceFact, ...] = ()

    def skill(self, skill_id: str) -> ChoiceSkill | None:
        return next((skill for skill in self.skills if skill.id == skill_id), None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON shape, for cache keys: equal choices give equal keys."""
        return {
            "request": self.request,
            "tools": list(self.tools),
            "skills": [[s.id, s.installed, s.description] for s in self.skills],
            "attributions": list(self.attributions),
            "facts": [[f.number, f.text, f.attribution] for f in self.facts],
        }
