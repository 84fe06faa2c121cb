"""The grounding check: every envelope, from every route, against what exists (SPEC §13).

A valid envelope is not a good bundle. Before the orchestrator sees a bundle, this
deterministic check (no model, a few milliseconds) compares it with the workspace and
with what the run actually read:

* every recommended tool is in the orchestrator's catalogue;
* every recommended skill is installed or in the registry, and its ``installed`` flag is
  set from the workspace, whatever the model wrote;
* every *claim* of the summary (a bullet; other lines say what is missing) cites a
  source the run read (:class:`~.sources.RunSources`), and that source's text supports it:
  at least :data:`SUPPORT_THRESHOLD` of the claim's content terms (the one word analyzer,
  :func:`~supercontext_lab._words.content_terms`) occur in one text the citation may rest
  on;
* ``has_enough_context: true`` over a summary whose claims are all unsupported is flagged.

``grounding = "drop"`` (the default) removes what fails, lists each item with why, and
rewrites the envelope with the one writer; ``"mark"`` keeps the items and lists them;
``"off"`` changes and lists nothing but still measures, so evaluations can report a
grounded rate for every run. A bundle the check empties (it dropped something and no
supported claim, tool or skill is left) is a cold start (``ColdStartReason.UNGROUNDED``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._text import one_line
from .._words import content_terms
from ..agents.definition import GroundingMode
from ..bundle import ContextBundle, parse_context_bundle
from ..bundle_records import SummaryLine, split_summary
from ..bundle_render import write_envelope
from ..sources.workspace import Workspace
from .sources import RunSources

__all__ = [
    "SUPPORT_THRESHOLD",
    "ClaimCheck",
    "Dropped",
    "GroundingReport",
    "KnownNames",
    "check_bundle",
    "check_names",
    "known_names",
    "support",
]

SUPPORT_THRESHOLD = 0.6
"""The least share of a claim's content terms that one cited text must hold for the claim
to count as supported. A sentence copied from a note scores 1.0; a paraphrase that keeps
the note's nouns and numbers scores above this; generic prose scores near 0."""

DroppedKind = Literal["tool", "skill", "bullet", "has_enough_context"]


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
    """What the check found on one envelope (see the module docstring)."""

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


@dataclass
class _Terms:
    """Content terms of each text, computed once per text: a plain ``(memory)`` claim is
    compared with every note, and notes repeat across claims."""

    cache: dict[str, frozenset[str]] = field(default_factory=dict)

    def of(self, text: str) -> frozenset[str]:
        terms = self.cache.get(text)
        if terms is None:
            terms = self.cache[text] = frozenset(content_terms(text))
        return terms


def support(claim: str, texts: Iterable[str], terms: _Terms | None = None) -> float:
    """The share of ``claim``'s content terms held by the best of ``texts`` (0 to 1)."""
    terms = terms or _Terms()
    wanted = content_terms(claim)
    if not wanted:
        return 0.0
    best = 0
    for text in texts:
        best = max(best, len(wanted & terms.of(text)))
        if best == len(wanted):
            break
    return best / len(wanted)


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


def _check_claim(line: SummaryLine, sources: RunSources, terms: _Terms) -> ClaimCheck:
    labels = tuple(source.label for source in line.sources)
    if not line.sources:
        return ClaimCheck(line.text, labels, 0.0, "it cites no source")
    texts: list[str] = []
    unread: list[str] = []
    for source in line.sources:
        found = sources.texts_for(source)
        if found:
            texts.extend(found)
        else:
            unread.append(source.label)
    if not texts:
        return ClaimCheck(line.text, labels, 0.0, f"the run did not read {unread[0]}")
    score = support(line.claim, texts, terms)
    if score < SUPPORT_THRESHOLD:
        why = f"what it cites does not support it (support {score:.2f} < {SUPPORT_THRESHOLD})"
        return ClaimCheck(line.text, labels, score, why)
    return ClaimCheck(line.text, labels, score, None)


def _is_claim(line: SummaryLine) -> bool:
    # A bullet states a fact; other lines ("Missing: …", a one-line greeting summary)
    # say what is absent or why nothing is needed, and are left as they are.
    return line.bullet


def _name_problems(
    bundle: ContextBundle, names: KnownNames
) -> tuple[list[Dropped], list[str], dict[int, bool]]:
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
    dropped, _corrected, _flags = _name_problems(bundle, known_names(workspace))
    return dropped


def _summary_without(summary: str, dropped: set[str]) -> str:
    kept: list[str] = []
    for raw in summary.split("\n"):
        parsed = split_summary(raw)
        if parsed and _is_claim(parsed[0]) and parsed[0].text in dropped:
            continue
        kept.append(raw)
    return "\n".join(kept).strip("\n")


def _rewrite(
    bundle: ContextBundle,
    dropped: Sequence[Dropped],
    flags: dict[int, bool],
    *,
    drop: bool,
    has_enough: bool | None,
) -> str:
    gone = {(item.kind, item.item) for item in dropped} if drop else set()
    summary = bundle.summary
    if drop:
        summary = _summary_without(summary, {item for kind, item in gone if kind == "bullet"})
    tools = [
        (call.tool, call.args, call.why)
        for call in bundle.recommended_tool_calls
        if ("tool", call.tool) not in gone
    ]
    skills = [
        (skill.skill, flags.get(index, skill.installed), skill.why)
        for index, skill in enumerate(bundle.recommended_skills)
        if ("skill", skill.skill) not in gone
    ]
    return write_envelope(
        has_enough_context=has_enough,
        proposed_goal=bundle.proposed_goal,
        summary=summary,
        tool_calls=tools,
        skills=skills,
    )


def check_bundle(
    bundle: ContextBundle,
    *,
    workspace: Workspace,
    sources: RunSources,
    mode: GroundingMode = "drop",
) -> GroundingReport:
    """Check ``bundle`` against ``workspace`` and what the run read (``sources``)."""
    started = time.perf_counter()
    names = known_names(workspace, sources)
    dropped, corrected, flags = _name_problems(bundle, names)
    invented = len(dropped)
    terms = _Terms()
    claims = tuple(
        _check_claim(line, sources, terms) for line in bundle.summary_lines if _is_claim(line)
    )
    dropped.extend(Dropped("bullet", c.text, c.why) for c in claims if c.why is not None)
    has_enough = bundle.has_enough_context
    if has_enough and claims and not any(c.supported for c in claims):
        dropped.append(
            Dropped("has_enough_context", "true", "no summary line is supported by what was read")
        )
        has_enough = False if mode == "drop" else has_enough
    envelope = bundle.envelope
    emptied = False
    if mode != "off" and (dropped or corrected):
        envelope = _rewrite(bundle, dropped, flags, drop=mode == "drop", has_enough=has_enough)
        if mode == "drop" and dropped:
            checked = parse_context_bundle(envelope)
            emptied = checked is None or _empty(checked)
    return GroundingReport(
        mode=mode,
        claims=claims,
        dropped=tuple(dropped),
        corrected=tuple(corrected),
        envelope=envelope,
        emptied=emptied,
        invented=invented,
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )


def _empty(bundle: ContextBundle) -> bool:
    """Whether nothing a turn could use is left: no bullet, no line citing a source, no
    tool and no skill ("Missing: …" lines alone carry no context)."""
    has_claim = any(line.bullet or line.attributions for line in bundle.summary_lines)
    return not (has_claim or bundle.recommended_tool_calls or bundle.recommended_skills)
