"""The harness turn (SPEC §7): a thread (``thread``), what one turn did (``turn``).

On the first turn of a genuinely new thread with Super Context on, the harness runs the
scout before the orchestrator sees the message and prepends the validated envelope; any
failure means a cold start, with the reason kept on the :class:`TurnResult`.
"""

from __future__ import annotations

from .thread import Thread
from .turn import (
    AGENT_CONTEXT_STATUS_HEADER,
    PREPARED_CONTEXT_HEADER,
    Preparation,
    TurnResult,
    already_prepared_envelope,
    build_prepared_message,
)

__all__ = [
    "AGENT_CONTEXT_STATUS_HEADER",
    "PREPARED_CONTEXT_HEADER",
    "Preparation",
    "Thread",
    "TurnResult",
    "already_prepared_envelope",
    "build_prepared_message",
]
