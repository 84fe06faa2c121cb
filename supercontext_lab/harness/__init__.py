"""The harness turn (SPEC §7): a thread (``thread``), what one turn did (``turn``).

A thread's first-turn preparation is ``first_turn``, the orchestrator's part of a turn
``orchestrator``, and the file a thread is saved to and resumed from ``saved``.

On the first turn of a genuinely new thread with Super Context on, the harness prepares
the message before the orchestrator sees it and prepends the validated envelope; any
failure means a cold start, with the reason kept on the :class:`TurnResult`. How it
prepares is the pre-flight design (SPEC §16, ``designs``): the scout, the pack
(``pack``), the cached envelope (``cached``) or nothing, under an optional pre-turn
deadline (``deadline``, ``preflight``); or, with ``prefetch``, no turn waits: each later
turn is sent the pack an earlier turn's background lookup built (``prefetch``).
"""

from __future__ import annotations

from .cached import build_cached, serve_cached
from .designs import DESIGNS, PreflightSettings, preflight_settings
from .pack import run_pack
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
    "DESIGNS",
    "PREPARED_CONTEXT_HEADER",
    "PreflightSettings",
    "Preparation",
    "Thread",
    "TurnResult",
    "already_prepared_envelope",
    "build_cached",
    "build_prepared_message",
    "preflight_settings",
    "run_pack",
    "serve_cached",
]
