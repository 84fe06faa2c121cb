"""The embedded offline models: a scout and an orchestrator that need no network or key.

:class:`OfflineScoutModel` plays the scout through the same tool-calling loop as a real
model; :class:`OfflineOrchestratorModel` answers the user from the prepared context.
"""

from __future__ import annotations

from .orchestrator import OfflineOrchestratorModel
from .scout import OfflineScoutModel

__all__ = ["OfflineOrchestratorModel", "OfflineScoutModel"]
