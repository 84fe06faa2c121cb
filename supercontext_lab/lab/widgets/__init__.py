"""ipywidgets composites for the notebook lab: bundle panels, trace timelines, the
composer with the Super Context toggle, the live agent.toml editor, bundle diffs and
side-by-side comparisons.

They render and edit what the engine returns and call the engine for every action;
untrusted text is escaped before it becomes HTML (see :mod:`.html`).
"""

from __future__ import annotations

from .comparison import BundleComparison
from .composer import Composer
from .diff import bundle_diff_html, changed_fields
from .editor import AgentEditor
from .panel import BundlePanel
from .status import RunStatus
from .trace import TraceTimeline

__all__ = [
    "AgentEditor",
    "BundleComparison",
    "BundlePanel",
    "Composer",
    "RunStatus",
    "TraceTimeline",
    "bundle_diff_html",
    "changed_fields",
]
