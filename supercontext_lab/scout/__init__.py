"""The scout: its run loop (``loop``) and what a run hands back (``records``).

One run builds the system prompt and the task message, calls the model with the
read-only tools of the scout's allowlist until it answers with the envelope, and records
every step; see :func:`run_scout`.
"""

from __future__ import annotations

from .loop import CONTEXT_WRAP_UP_SHARE, DEFAULT_SCOUT_TIMEOUT_S, GRACE_INSTRUCTION, run_scout
from .records import ScoutRun, ScoutStatus, StopCause, TraceStep, trace_summary

__all__ = [
    "CONTEXT_WRAP_UP_SHARE",
    "DEFAULT_SCOUT_TIMEOUT_S",
    "GRACE_INSTRUCTION",
    "ScoutRun",
    "ScoutStatus",
    "StopCause",
    "TraceStep",
    "run_scout",
    "trace_summary",
]
