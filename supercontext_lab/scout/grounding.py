"""The grounding check: every envelope, from every route, against what exists (SPEC §13).

A valid envelope is not a good bundle. Before the orchestrator sees a bundle, this
deterministic check (no model, a few milliseconds) compares it with the workspace and
with what the run actually read:

* every recommended tool is in the orchestrator's catalogue, and every recommended skill
  is installed or in the registry, its ``installed`` flag set from the workspace; given
  the request, a skill only a past conversation points at is no recommendation
  (:mod:`.grounding_names`);
* every *claim* of the summary is supported by what the run read, sentence by sentence,
  by the rules of support of :mod:`.claims`; a line that only says what is missing is no
  claim; an attribution a cited note itself holds is the note's text, not a citation
  (:mod:`.grounding_claims`), and the envelope writes it as text;
* ``has_enough_context: true`` over a summary whose claims are all unsupported is flagged;
* given the user's request, the proposed goal (adopted as the thread's goal, in every
  later turn's system prompt) is a claim too, checked against the request and what the
  run read (:mod:`.grounding_claims`).

This module runs those checks over one envelope (:func:`check_bundle`), applies the mode
and writes the envelope the orchestrator sees. ``grounding = "drop"`` (the default)
removes what fails, lists each item with why, and rewrites the envelope with the one
writer; ``"mark"`` keeps the items and lists them; ``"off"`` changes and lists nothing but
still measures, so evaluations can report a grounded rate for every run. A bundle the
check empties (it dropped something and no supported claim, tool or skill is left) is a
cold start (``ColdStartReason.UNGROUNDED``).

It is also the check's public face: the report's records (:mod:`.grounding_report`), the
name checks and the share of support can be imported from here, so a front end needs
only this module.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from .._text import one_line
from ..agents.definition import GroundingMode
from ..bundle import ContextBundle, parse_context_bundle
from ..bundle.render import attributions_as_text, write_envelope
from ..sources.workspace import Workspace
from .claims import SUPPORT_THRESHOLD, EvidenceCache
from .grounding_claims import (
    CheckedClaim,
    check_claim,
    goal_problem,
    integrations_of,
    is_claim,
    support,
)
from .grounding_names import (
    KnownNames,
    check_names,
    known_names,
    name_problems,
    steered_by_conversations,
)
from .grounding_report import ClaimCheck, Dropped, GroundingReport
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


def _summary_without(summary: str, checked: Sequence[CheckedClaim], *, drop: bool) -> str:
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
    checked: Sequence[CheckedClaim],
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
    dropped, corrected, flags = name_problems(bundle, names)
    invented = len(dropped)
    cache = EvidenceCache()
    goal = bundle.proposed_goal
    why = goal_problem(goal, request, sources, cache) if goal and request is not None else None
    if goal and why is not None:
        dropped.append(Dropped("goal", goal, why))
    if request is not None:
        dropped.extend(steered_by_conversations(bundle, workspace, sources, request))
    integrations = integrations_of(workspace)
    checked = [
        check_claim(line, sources, cache, integrations)
        for line in bundle.summary_lines
        if is_claim(line)
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


def _empty(bundle: ContextBundle) -> bool:
    """Whether nothing a turn could use is left: no claim, no tool and no skill ("Missing:
    …" lines alone carry no context)."""
    has_claim = any(is_claim(line) for line in bundle.summary_lines)
    return not (has_claim or bundle.recommended_tool_calls or bundle.recommended_skills)
