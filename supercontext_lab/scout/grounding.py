"""The grounding check: every envelope, from every route, against what exists (SPEC §13).

A valid envelope is not a good bundle. Before the orchestrator sees a bundle, this
deterministic check (no model, a few milliseconds) compares it with the workspace and
with what the run actually read:

* every recommended tool is in the orchestrator's catalogue;
* every recommended skill is installed or in the registry, and its ``installed`` flag is
  set from the workspace, whatever the model wrote;
* every *claim* of the summary is supported by what the run read
  (:class:`~.sources.RunSources`). Every item of the summary is a claim (a bullet, a
  ``+``, ``1.``, ``1)`` or ``a)`` item, a plain line, an item with the indented lines that
  continue it) except a line that cites nothing and only says what is missing (one
  sentence labelled ``Missing:``, or "Nothing relevant was found.": see
  :func:`~.claims.is_status_line`). A claim is supported when every source it cites is
  one the run read, every sentence of it is supported by the text of one of them (the
  rules of :mod:`.claims`: enough shared terms, the same figures, dates, amounts and
  identifiers, the same negation; ``(integrations)`` only as the list says), and every
  source it cites supports at least one of its sentences. An attribution that a cited
  text itself holds ("… (memory: other/note)" inside a note) is that text's content,
  not a citation: it is not counted, and the envelope writes it as text
  (:func:`~supercontext_lab.bundle.render.attributions_as_text`);
* ``has_enough_context: true`` over a summary whose claims are all unsupported is flagged;
* given the user's request, the proposed goal (adopted as the thread's goal, in every
  later turn's system prompt) is a claim too: the request and what the run read must
  support it by the same rules, or a note's "set the goal to …" would become the thread's
  goal.

``grounding = "drop"`` (the default) removes what fails, lists each item with why, and
rewrites the envelope with the one writer; ``"mark"`` keeps the items and lists them;
``"off"`` changes and lists nothing but still measures, so evaluations can report a
grounded rate for every run. A bundle the check empties (it dropped something and no
supported claim, tool or skill is left) is a cold start (``ColdStartReason.UNGROUNDED``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._text import one_line
from ..agents.definition import GroundingMode
from ..bundle import ContextBundle, parse_context_bundle
from ..bundle.records import Source, SummaryLine
from ..bundle.render import attributions_as_text, write_envelope
from ..errors import SupercontextError
from ..reading.words import content_terms
from ..sources.integrations import Integration
from ..sources.workspace import Workspace
from .claims import (
    SUPPORT_THRESHOLD,
    EvidenceCache,
    Sentence,
    Verdict,
    integration_verdict,
    is_status_line,
    judge,
    sentences,
)
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


def support(claim: str, texts: Iterable[str], cache: EvidenceCache | None = None) -> float:
    """The share of ``claim``'s content terms held by the best of ``texts`` (0 to 1), the
    first rule of :func:`~.claims.judge`."""
    if not content_terms(claim):
        return 0.0
    cache = cache or EvidenceCache()
    return max((judge(claim, cache.of(text)).share for text in texts), default=0.0)


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


@dataclass(frozen=True)
class _Checked:
    """A claim's check, with the line it checked and the attributions it holds as text."""

    line: SummaryLine
    check: ClaimCheck
    quoted: frozenset[Source]


def _quoted(line: SummaryLine, texts: dict[Source, list[str]], cache: EvidenceCache) -> set[Source]:
    """The sources a line cites that another source it cites holds in its own text: a
    copied "(memory: other/note)" is part of the note, not the scout's citation."""
    return {
        source
        for source in line.sources
        for other in line.sources
        if other != source and any(source in cache.of(text).cites for text in texts[other])
    }


def _check_claim(
    line: SummaryLine,
    sources: RunSources,
    cache: EvidenceCache,
    integrations: Sequence[Integration],
) -> _Checked:
    texts = {source: sources.texts_for(source) for source in line.sources}
    quoted = _quoted(line, texts, cache)
    cited = [source for source in line.sources if source not in quoted]
    labels = tuple(source.label for source in cited)

    def failed(share: float, why: str) -> _Checked:
        return _Checked(line, ClaimCheck(line.text, labels, share, why), frozenset(quoted))

    if not cited:
        return failed(0.0, "it cites no source")
    unread = [source for source in cited if not texts[source]]
    if unread:
        return failed(0.0, f"the run did not read {unread[0].label}")
    # A sentence without a content word ("That is all.") states nothing to support; a
    # claim of such sentences only states nothing at all.
    parts = [part for part in map(Sentence.of, sentences(line.text)) if part.terms]
    if not parts:
        return failed(0.0, f"it states nothing (support 0.00 < {SUPPORT_THRESHOLD:g})")
    used: set[Source] = set()
    lowest = 1.0
    for sentence in parts:
        verdicts: list[Verdict] = []
        supported = False
        for source in cited:
            for text in texts[source]:
                evidence = cache.of(text)
                verdict = (
                    integration_verdict(sentence, evidence, integrations)
                    if source.kind == "integrations"
                    else judge(sentence, evidence)
                )
                verdicts.append(verdict)
                if verdict.supported:
                    # One text of a source is enough for the source to count.
                    used.add(source)
                    supported = True
                    lowest = min(lowest, verdict.share)
                    break
        if not supported:
            best = max(verdicts, key=lambda v: v.share)
            shown = one_line(sentence.text, 60, at_word=True)
            where = f" (in '{shown}')" if len(parts) > 1 else ""
            return failed(best.share, f"{best.why}{where}")
    idle = [source for source in cited if source not in used]
    if idle:
        return failed(lowest, f"{idle[0].label} supports none of it")
    return _Checked(line, ClaimCheck(line.text, labels, lowest, None), frozenset(quoted))


def _is_claim(line: SummaryLine) -> bool:
    # Every line says something, and is checked, except one that cites nothing and only
    # says what is missing ("Missing: …", "Nothing relevant was found.").
    return not is_status_line(line.text)


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


def _summary_without(summary: str, checked: Sequence[_Checked], *, drop: bool) -> str:
    """``summary`` without the lines of the claims that failed (with ``drop``), the
    attributions claims quote from their notes written as text."""
    raw = summary.split("\n")
    gone: set[int] = set()
    for item in checked:
        line = item.line
        if drop and not item.check.supported:
            gone.update(range(line.first, line.last + 1))
        elif item.quoted:
            raw[line.first] = line.marker + attributions_as_text(line.text, item.quoted)
            gone.update(range(line.first + 1, line.last + 1))
    return "\n".join(text for number, text in enumerate(raw) if number not in gone).strip("\n")


def _rewrite(
    bundle: ContextBundle,
    dropped: Sequence[Dropped],
    checked: Sequence[_Checked],
    flags: dict[int, bool],
    *,
    drop: bool,
    has_enough: bool | None,
) -> str:
    gone = {(item.kind, item.item) for item in dropped} if drop else set()
    summary = _summary_without(bundle.summary, checked, drop=drop)
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
        proposed_goal=None if ("goal", bundle.proposed_goal) in gone else bundle.proposed_goal,
        summary=summary,
        tool_calls=tools,
        skills=skills,
    )


def _goal_problem(goal: str, request: str, sources: RunSources, cache: EvidenceCache) -> str | None:
    """Why the request and what the run read do not support ``goal``, or ``None``."""
    texts = [request, *(t.text for t in sources.named.values()), sources.memory_md]
    texts += [*sources.profile, sources.integrations]
    # The request alone, or the request with everything read (a goal may name what a
    # note adds: "… by the March deadline").
    said = (cache.of(request), cache.of("\n\n".join(text for text in texts if text.strip())))
    for sentence in map(Sentence.of, sentences(goal)):
        verdicts = [judge(sentence, evidence) for evidence in said]
        if not any(verdict.supported for verdict in verdicts):
            why = verdicts[-1].why
            return f"neither the request nor what was read supports it: {why}"
    return None


def check_bundle(
    bundle: ContextBundle,
    *,
    workspace: Workspace,
    sources: RunSources,
    mode: GroundingMode = "drop",
    request: str | None = None,
) -> GroundingReport:
    """Check ``bundle`` against ``workspace`` and what the run read (``sources``); with
    the user's ``request``, its proposed goal too (see the module docstring)."""
    started = time.perf_counter()
    names = known_names(workspace, sources)
    dropped, corrected, flags = _name_problems(bundle, names)
    invented = len(dropped)
    cache = EvidenceCache()
    goal = bundle.proposed_goal
    why = _goal_problem(goal, request, sources, cache) if goal and request is not None else None
    if goal and why is not None:
        dropped.append(Dropped("goal", goal, why))
    integrations = _integrations(workspace)
    checked = [
        _check_claim(line, sources, cache, integrations)
        for line in bundle.summary_lines
        if _is_claim(line)
    ]
    claims = tuple(item.check for item in checked)
    dropped.extend(Dropped("bullet", c.text, c.why) for c in claims if c.why is not None)
    corrected.extend(
        f"{source.label!r} in {one_line(item.line.text, 60, at_word=True)!r} is the note's "
        "own text, not a citation: kept as text"
        for item in checked
        if item.check.supported or mode != "drop"
        for source in sorted(item.quoted, key=lambda s: s.label)
    )
    has_enough = bundle.has_enough_context
    if has_enough and claims and not any(c.supported for c in claims):
        dropped.append(
            Dropped("has_enough_context", "true", "no summary line is supported by what was read")
        )
        has_enough = False if mode == "drop" else has_enough
    envelope = bundle.envelope
    emptied = False
    if mode != "off" and (dropped or corrected):
        envelope = _rewrite(
            bundle, dropped, checked, flags, drop=mode == "drop", has_enough=has_enough
        )
        if mode == "drop" and dropped:
            after = parse_context_bundle(envelope)
            emptied = after is None or _empty(after)
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


def _integrations(workspace: Workspace) -> list[Integration]:
    """The workspace's integration list; an unreadable one supports no claim (the run's
    system prompt reported it)."""
    try:
        return list(workspace.integrations)
    except SupercontextError:
        return []


def _empty(bundle: ContextBundle) -> bool:
    """Whether nothing a turn could use is left: no claim, no tool and no skill ("Missing:
    …" lines alone carry no context)."""
    has_claim = any(_is_claim(line) for line in bundle.summary_lines)
    return not (has_claim or bundle.recommended_tool_calls or bundle.recommended_skills)
