"""What every tool of one scout run is bound to: the workspace and the web settings."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..sources.skills import RegistryEntry, fetch_registry
from ..sources.web_search import WebSearchProvider
from ..sources.workspace import Workspace

__all__ = ["ToolContext"]


@dataclass
class ToolContext:
    """The scout's tools read through this, never through globals.

    ``web_search`` is the search provider (without one ``web_search_tool`` says search is
    not configured); ``allow_private_addresses`` and ``web_timeout`` override the lab's
    ``web.*`` settings when not ``None``; ``registry_url`` adds a remote skill registry,
    fetched once, on first use.
    """

    workspace: Workspace
    web_search: WebSearchProvider | None = None
    allow_private_addresses: bool | None = None
    web_timeout: float | None = None
    registry_url: str | None = None
    _remote: list[RegistryEntry] | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def registry_entries(self) -> list[RegistryEntry]:
        """The workspace's registry.json entries, then the remote ones with new ids."""
        entries = list(self.workspace.registry)
        if not self.registry_url:  # None or "": no remote registry
            return entries
        with self._lock:
            # Tool calls of one reply run side by side: fetch the remote registry once.
            if self._remote is None:
                self._remote = fetch_registry(self.registry_url)
        known = {entry.id for entry in entries}
        entries.extend(entry for entry in self._remote if entry.id not in known)
        return entries

    def installed_ids(self) -> set[str]:
        """The folder slugs of the installed skills."""
        return {skill.dir_name for skill in self.workspace.skills}
