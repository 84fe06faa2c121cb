"""The scout: its run loop (``loop``), one round of read-only tool calls (``tool_round``),
the final reply settled into the envelope the orchestrator may see (``settle``), what a
constrained emission may choose from (``choices``) and what a run hands back
(``records``).

The grounding check (``grounding``, with its report in ``grounding_report``, its checks of
names and of claims in ``grounding_names`` and ``grounding_claims``, and the rules of
support in ``claims`` and ``figures``) and what a run read (``sources``) sit beside them.
One run builds the system prompt and the task message, calls the model with the
read-only tools of the scout's allowlist until it answers with the envelope, and records
every step; see :func:`run_scout`.
"""

from __future__ import annotations

from .grounding import SUPPORT_THRESHOLD, ClaimCheck, Dropped, GroundingReport, check_bundle
from .loop import (
    CONTEXT_WRAP_UP_SHARE,
    DEFAULT_SCOUT_TIMEOUT_S,
    GRACE_INSTRUCTION,
    prefetch_enabled,
    run_gathered,
    run_scout,
)
from .records import ScoutRun, ScoutStatus, StopCause, TraceStep, trace_summary
from .sources import RunSources

__all__ = [
    "CONTEXT_WRAP_UP_SHARE",
    "DEFAULT_SCOUT_TIMEOUT_S",
    "GRACE_INSTRUCTION",
    "SUPPORT_THRESHOLD",
    "ClaimCheck",
    "Dropped",
    "GroundingReport",
    "RunSources",
    "ScoutRun",
    "ScoutStatus",
    "StopCause",
    "TraceStep",
    "check_bundle",
    "prefetch_enabled",
    "run_gathered",
    "run_scout",
    "trace_summary",
]
