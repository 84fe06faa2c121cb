"""The web tools: ``web_search_tool`` through a provider, ``web_fetch`` under the guard.

As everywhere in this package, the tool functions ``(context, args)`` carry their tool's
name; :func:`search_with` and :func:`fetch_url` are the same reads for a caller that
holds the settings itself.
"""

from __future__ import annotations

from pydantic import Field

from ..errors import ToolError
from ..sources.web import DEFAULT_MAX_BYTES, fetch_page
from ..sources.web_search import WebSearchProvider
from .base import ToolArgs, ToolResult
from .context import ToolContext, web_policy

__all__ = [
    "WebFetchArgs",
    "WebSearchArgs",
    "fetch_url",
    "search_with",
    "web_fetch",
    "web_search_tool",
]


class WebSearchArgs(ToolArgs):
    """Arguments of ``web_search_tool``."""

    query: str = Field(min_length=1, description="What to search the web for.")
    limit: int = Field(default=5, ge=1, le=10, description="How many results (1-10).")


class WebFetchArgs(ToolArgs):
    """Arguments of ``web_fetch``."""

    url: str = Field(min_length=1, description="An http or https URL of a public page.")
    max_bytes: int = Field(
        default=DEFAULT_MAX_BYTES,
        ge=1,
        le=5_000_000,
        description="Stop reading the body after this many bytes.",
    )


def web_search_tool(context: ToolContext, args: WebSearchArgs) -> ToolResult:
    """The ``web_search_tool`` tool: :func:`search_with` the run's provider."""
    return search_with(args.query, args.limit, provider=context.web_search)


def web_fetch(context: ToolContext, args: WebFetchArgs) -> ToolResult:
    """The ``web_fetch`` tool: :func:`fetch_url` with the run's web settings."""
    return fetch_url(
        args.url,
        args.max_bytes,
        timeout=context.web_timeout,
        allow_private_addresses=context.allow_private_addresses,
    )


def search_with(
    query: str, limit: int = 5, *, provider: WebSearchProvider | None = None
) -> ToolResult:
    """Search the web through ``provider``; without one, say that search is not configured."""
    if provider is None:
        return ToolResult.failure(
            "web search is not configured (set a provider: "
            "build_scout_registry(workspace, web_search=<WebSearchProvider>)); "
            "answer from the other sources"
        )
    try:
        hits = provider.search(query, limit)
    except Exception as exc:  # a provider is third-party code: report, never crash the run
        return ToolResult.failure(f"web_search_tool failed: {type(exc).__name__}: {exc}")
    results = [{"title": h.title, "url": h.url, "snippet": h.snippet} for h in hits[:limit]]
    return ToolResult.success({"query": query, "results": results})


def fetch_url(
    url: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    timeout: float | None = None,
    allow_private_addresses: bool | None = None,
) -> ToolResult:
    """What ``web_fetch`` answers: :func:`fetch_page` as a :class:`ToolResult`, never raising.

    ``timeout`` defaults to ``web.timeout_s`` from the lab's config (10 s) and
    ``allow_private_addresses`` to ``web.allow_private_addresses`` (false).
    """
    try:
        policy_private, policy_timeout = web_policy(allow_private_addresses, timeout)
        page = fetch_page(
            url,
            max_bytes,
            timeout=policy_timeout,
            allow_private_addresses=policy_private,
        )
    except ToolError as exc:
        return ToolResult.failure(f"web_fetch: {exc}")
    payload = {
        "url": page.url,
        "status": page.status,
        "content_type": page.content_type,
        "truncated": page.truncated,
        "text": page.text,
    }
    if page.redirects:
        payload["redirected_from"] = list(page.redirects)
    if page.truncated:
        payload["note"] = f"body cut at {max_bytes} bytes"
    return ToolResult.success(payload)
