"""What the grounding check finds on one envelope, and how it is told (SPEC §13).

The check's verdicts are records of their own: each summary claim with its support
(:class:`ClaimCheck`), each item failed with why (:class:`Dropped`), and the report of one
envelope (:class:`GroundingReport`). A run keeps the report (``ScoutRun.grounding``), the
front ends show its lines and badge, and evaluations read its dictionary, so none of them
needs the check itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .._text import one_line
from ..agents.definition import GroundingMode

__all__ = ["ClaimCheck", "Dropped", "DroppedKind", "GroundingReport"]

DroppedKind = Literal["tool", "skill", "bullet", "goal", "has_enough_context"]


@dataclass(frozen=True)
class Dropped:
    """One item the check failed, and why."""

    kind: DroppedKind
    item: str
    why: str

    def describe(self, mode: GroundingMode) -> str:
        """One line for ``problems``: ``dropped tool 'x': …`` (``flagged`` in mark mode)."""
        verb = "dropped" if mode == "drop" else "flagged"
        if self.kind == "has_enough_context":
            verb = "set to false" if mode == "drop" else "flagged"
            return f"grounding: has_enough_context {verb}: {self.why}"
        return f"grounding: {verb} {self.kind} {one_line(self.item, 80)!r}: {self.why}"

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "item": self.item, "why": self.why}


@dataclass(frozen=True)
class ClaimCheck:
    """One summary claim: its text, what it cites, and how well that supports it."""

    text: str
    sources: tuple[str, ...]
    support: float
    why: str | None
    """Why it is unsupported; ``None`` when supported."""

    @property
    def supported(self) -> bool:
        return self.why is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "sources": list(self.sources),
            "support": round(self.support, 3),
            "supported": self.supported,
            "why": self.why,
        }


@dataclass(frozen=True)
class GroundingReport:
    """What the check found on one envelope (the checks and the modes: :mod:`.grounding`)."""

    mode: GroundingMode
    claims: tuple[ClaimCheck, ...]
    dropped: tuple[Dropped, ...]
    corrected: tuple[str, ...]
    """``installed`` flags set from the workspace, one line each."""
    envelope: str
    """The envelope after the check: the input itself in ``mark`` and ``off`` modes when
    nothing needed correcting."""
    emptied: bool
    invented: int
    """Recommended tools and skills that exist nowhere."""
    elapsed_ms: float = 0.0

    @property
    def grounded(self) -> int:
        """Supported claims."""
        return sum(1 for claim in self.claims if claim.supported)

    @property
    def checked(self) -> int:
        """Claims checked."""
        return len(self.claims)

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.corrected) and self.mode != "off"

    @property
    def badge(self) -> str:
        """``"grounded 3 of 4"``, for headers."""
        return f"grounded {self.grounded} of {self.checked}"

    def problems(self) -> list[str]:
        """One line per dropped (or flagged) item and correction; none in ``off`` mode."""
        if self.mode == "off":
            return []
        lines = [item.describe(self.mode) for item in self.dropped]
        lines.extend(f"grounding: {line}" for line in self.corrected)
        if self.emptied:
            lines.append("grounding: nothing in the bundle was grounded, so the turn starts cold")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "grounded": self.grounded,
            "checked": self.checked,
            "invented_names": self.invented,
            "emptied": self.emptied,
            "claims": [claim.to_dict() for claim in self.claims],
            "dropped": [item.to_dict() for item in self.dropped],
            "corrected": list(self.corrected),
            "elapsed_ms": round(self.elapsed_ms, 3),
        }
