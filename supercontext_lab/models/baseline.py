"""Baselines that use no model: ``rank`` and ``random`` (SPEC §14).

A model that picks a bundle's facts must do better than picking without it. These two
:class:`ChatModel` implementations pick through the very path a small model's picks take
(the extractive format, :mod:`.extractive`): the harness gathers first (they declare
themselves small, so the scout prefetches), the run's facts and names are offered in the
order the run ranked them, and the pick line is turned into the envelope by
:func:`~.extractive.envelope_from_picks`. Only the choosing differs:

* ``rank`` takes the first :data:`~.extractive.FACT_PICKS` offered facts and the first
  offered tool and skill: the ranking the model is handed, taken as it is;
* ``random`` takes as many facts, a tool and a skill at random from the same offers,
  seeded by the request (and the model's seed), so a case gives the same bundle on every
  run and machine.

Neither calls tools or reads anything itself; without choices (a call that is not the
scout's emission) they answer with an empty envelope-free text.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Literal, get_args

from .base import Message, ModelInfo, ModelReply, ToolSpec
from .choices import BundleChoices
from .extractive import (
    FACT_PICKS,
    envelope_from_picks,
    offered_facts,
    offered_skills,
    offered_tools,
)

__all__ = ["BASELINE_KINDS", "BaselineKind", "PickBaseline"]

BaselineKind = Literal["rank", "random"]
BASELINE_KINDS: tuple[str, ...] = get_args(BaselineKind)


class PickBaseline:
    """A no-model picker of the extractive format (see the module docstring)."""

    def __init__(self, kind: BaselineKind, *, seed: int = 0) -> None:
        if kind not in BASELINE_KINDS:
            raise ValueError(f"baseline must be one of {', '.join(BASELINE_KINDS)}, not {kind!r}")
        self.kind: BaselineKind = kind
        self.seed = seed
        self._info = ModelInfo(
            label=f"baseline:{kind}",
            cache_identity=f"baseline:{kind}:{seed}",
            bundle_format="extractive",
            small=True,
        )

    @property
    def name(self) -> str:
        return self._info.label

    @property
    def info(self) -> ModelInfo:
        """A small, in-process picker: the scout gathers for it first."""
        return self._info

    def close(self) -> None:
        """Nothing to release."""

    def picks(self, choices: BundleChoices) -> str:
        """The pick reply (``FACTS: …``, ``TOOLS: …``, ``SKILLS: …``) for ``choices``."""
        facts = [fact.number for fact in offered_facts(choices)]
        tools = offered_tools(choices)
        skills = [skill.id for skill in offered_skills(choices)]
        if self.kind == "random":
            chooser = random.Random(f"{self.seed}\n{choices.request}")
            facts = sorted(chooser.sample(facts, min(FACT_PICKS, len(facts))))
            tools = chooser.sample(tools, min(1, len(tools)))
            skills = chooser.sample(skills, min(1, len(skills)))
        lines = (
            ("FACTS", [str(number) for number in facts[:FACT_PICKS]]),
            ("TOOLS", tools[:1]),
            ("SKILLS", skills[:1]),
        )
        return "\n".join(f"{key}: {', '.join(values) or 'none'}" for key, values in lines)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        on_text: Callable[[str], None] | None = None,
        choices: BundleChoices | None = None,
    ) -> ModelReply:
        """The envelope written from this baseline's picks over ``choices``."""
        text = ""
        if choices is not None:
            text = envelope_from_picks(self.picks(choices), choices) or ""
        if on_text is not None and text:
            on_text(text)
        return ModelReply(
            Message(role="assistant", content=text), finish_reason="stop", model=self.name
        )
