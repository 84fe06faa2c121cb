"""What every tool of one scout run is bound to: the workspace, the web settings and the
embedder of semantic recall."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Literal

from ..config import get_setting
from ..errors import ConfigError, SupercontextError, ToolError
from ..models.embeddings import configured_embedder
from ..sources.memory.embedder import Embedder
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
    (the thread the scout runs for: a thread never recalls itself); ``embedder`` is what
    ``memory_recall`` fuses with BM25 (``None``: BM25 alone; ``"config"``, the default:
    the one ``[memory] semantic`` names, off unless set).
    """

    workspace: Workspace
    web_search: WebSearchProvider | None = None
    allow_private_addresses: bool | None = None
    web_timeout: float | None = None
    registry_url: str | None = None
    exclude_conversations: frozenset[str] = frozenset()
    embedder: Embedder | Literal["config"] | None = "config"
    _recall: tuple[Embedder | None, str | None] | None = field(default=None, init=False, repr=False)
    _recall_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
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

    def recall_embedder(self) -> tuple[Embedder | None, str | None]:
        """The embedder of ``memory_recall`` for this run and, when semantic recall is
        asked for but cannot be had, why (one line): the setting is read once per run."""
        with self._recall_lock:
            if self._recall is None:
                if self.embedder != "config":
                    self._recall = (self.embedder, None)
                else:
                    try:
                        self._recall = (configured_embedder(), None)
                    except SupercontextError as exc:
                        self._recall = (None, f"semantic recall is off for this run: {exc}")
            return self._recall

    def semantic_failed(self, problem: str) -> None:
        """Turn semantic recall off for the rest of the run, saying ``problem``: an
        endpoint that failed once is not asked again by every later recall."""
        with self._recall_lock:
            self._recall = (None, problem)

    def installed_ids(self) -> set[str]:
        """The folder slugs of the installed skills."""
        return {skill.dir_name for skill in self.workspace.skills}
