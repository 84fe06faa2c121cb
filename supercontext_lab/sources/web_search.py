"""The web search seam: a provider protocol and its result record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["WebResult", "WebSearchProvider"]


@dataclass(frozen=True)
class WebResult:
    """One web search hit."""

    title: str
    url: str
    snippet: str = ""


@runtime_checkable
class WebSearchProvider(Protocol):
    """Anything that can search the web: ``search(query, limit) -> list[WebResult]``."""

    def search(self, query: str, limit: int) -> list[WebResult]:
        """Return at most ``limit`` results for ``query``, best first."""
        ...
