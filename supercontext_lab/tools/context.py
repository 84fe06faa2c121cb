"""What every tool of one scout run is bound to: the workspace and the web settings."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..config import get_setting
from ..errors import ConfigError, ToolError
from ..sources.skills import RegistryEntry, fetch_registry
from ..sources.web import DEFAULT_FETCH_TIMEOUT_S
from ..sources.web_search import WebSearchProvider
from ..sources.workspace import Workspace

__all__ = ["ToolContext", "web_policy"]


def web_policy(allow_private: bool | None, timeout: float | None) -> tuple[bool, float]:
    """Whether private addresses may be fetched and the fetch timeout: the values given,
    or the lab's ``web.allow_private_addresses`` (false) and ``web.timeout_s`` (10 s) for
    those left as ``None``. Every fetch of the tools (``web_fetch``, the remote skill
    registry) follows it."""
    try:
        if allow_private is None:
            allow_private = get_setting("web.allow_private_addresses", False)
        if timeout is None:
            timeout = get_setting("web.timeout_s", DEFAULT_FETCH_TIMEOUT_S)
    except ConfigError as exc:
        raise ToolError(f"the lab's config cannot be used: {exc}") from exc
    return allow_private, timeout


@dataclass
class ToolContext:
    """The scout's tools read through this, never through globals.

    ``web_search`` is the search provider (without one ``web_search_tool`` says search is
    not configured); ``allow_private_addresses`` and ``web_timeout`` override the lab's
    ``web.*`` settings when not ``None``; ``registry_url`` adds a remote skill registry,
    fetched once, on first use, under the same settings as ``web_fetch``;
    ``exclude_conversations`` names past conversations ``memory_recall`` never returns
    (the thread the scout runs for: a thread never recalls itself).
    """

    workspace: Workspace
    web_search: WebSearchProvider | None = None
    allow_private_addresses: bool | None = None
    web_timeout: float | None = None
    registry_url: str | None = None
    exclude_conversations: frozenset[str] = frozenset()
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
                allow_private, timeout = web_policy(self.allow_private_addresses, self.web_timeout)
                self._remote = fetch_registry(
                    self.registry_url, timeout=timeout, allow_private_addresses=allow_private
                )
        known = {entry.id for entry in entries}
        entries.extend(entry for entry in self._remote if entry.id not in known)
        return entries

    def installed_ids(self) -> set[str]:
        """The folder slugs of the installed skills."""
        return {skill.dir_name for skill in self.workspace.skills}
