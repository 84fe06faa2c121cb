"""The guarded fetcher behind ``web_fetch`` and the remote skill registry.

Every URL is treated as hostile: http/https only, no credentials in the URL, no host name
mixing look-alike scripts, and every address checked by :mod:`.address_guard` on every
redirect hop (at most five, followed here). The connection goes to the address that was
vetted, with the original host name in the ``Host`` header and in TLS SNI, so a DNS
answer that changes between the check and the connection (DNS rebinding) cannot redirect
it. Bodies are streamed and cut at ``max_bytes`` (a compressed one inflated no further);
a wall-clock deadline bounds the whole exchange: connect, response headers and body.
:func:`fetch_body` is that exchange; :func:`fetch_page` turns its body into text.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from .._deadline import deadline_transport
from .._http import body_text, charset_of, read_body, tls_context
from .._text import strip_userinfo
from .._version import __version__
from ..errors import ConfigError, ToolError
from .address_guard import ascii_host, check_host_name, vetted_addresses
from .html_text import html_to_text

__all__ = [
    "DEFAULT_FETCH_TIMEOUT_S",
    "DEFAULT_MAX_BYTES",
    "MAX_REDIRECTS",
    "FetchedBody",
    "FetchedPage",
    "check_timeout",
    "fetch_body",
    "fetch_page",
]

DEFAULT_MAX_BYTES = 200_000
DEFAULT_FETCH_TIMEOUT_S = 10.0
MAX_REDIRECTS = 5
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class FetchedBody:
    """A body fetched under the guard: the final URL, status, content type, at most
    ``max_bytes`` of the (inflated) body and whether it was cut there; ``redirects`` lists
    the URLs that redirected."""

    url: str
    status: int
    content_type: str
    body: bytes
    truncated: bool
    redirects: tuple[str, ...] = ()


@dataclass(frozen=True)
class FetchedPage:
    """A fetched page: the final URL, status, content type, readable text and whether the
    body was cut at ``max_bytes``; ``redirects`` lists the URLs that redirected."""

    url: str
    status: int
    content_type: str
    text: str
    truncated: bool
    redirects: tuple[str, ...] = ()


_PAGE_TYPES = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5"


def fetch_page(
    url: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    timeout: float = DEFAULT_FETCH_TIMEOUT_S,
    allow_private_addresses: bool = False,
) -> FetchedPage:
    """Fetch ``url`` with :func:`fetch_body` and return its readable text.

    Raises :class:`ToolError` with a one-line reason for a refused URL or address, a
    network failure, a timeout, a non-2xx status, too many redirects or a body that is not
    text. The body is decoded in the charset its ``Content-Type`` names, or UTF-8 when
    that charset is unknown or unusable.
    """
    fetched = fetch_body(
        url,
        max_bytes,
        timeout=timeout,
        allow_private_addresses=allow_private_addresses,
        accept=_PAGE_TYPES,
        client="web_fetch",
    )
    return FetchedPage(
        url=fetched.url,
        status=fetched.status,
        content_type=fetched.content_type,
        text=_body_text(fetched.body, fetched.content_type),
        truncated=fetched.truncated,
        redirects=fetched.redirects,
    )


def fetch_body(
    url: str,
    max_bytes: int,
    *,
    timeout: float,
    allow_private_addresses: bool,
    accept: str,
    client: str,
) -> FetchedBody:
    """GET ``url`` under the policy of the module docstring, within ``timeout`` seconds
    for the whole exchange; ``accept`` is the ``Accept`` header and ``client`` names the
    caller in the ``User-Agent``.

    Raises :class:`ToolError` with a one-line reason for a refused URL or address, a
    network failure, a timeout, a non-2xx status or too many redirects.
    """
    if max_bytes < 1:
        raise ToolError("max_bytes must be at least 1.")
    check_timeout(timeout)
    deadline = time.monotonic() + timeout
    redirects: list[str] = []
    current = url
    headers = {"User-Agent": f"supercontext-lab/{__version__} ({client})", "Accept": accept}
    for _hop in range(MAX_REDIRECTS + 1):
        target = _check_url(current)
        addresses = vetted_addresses(target, allow_private_addresses)
        outcome = _request(target, addresses, max_bytes, deadline, timeout, headers)
        if isinstance(outcome, str):
            redirects.append(current)
            current = urljoin(current, outcome)
            continue
        status, content_type, body, truncated = outcome
        if not 200 <= status < 300:
            raise ToolError(f"{current} answered HTTP {status}.")
        return FetchedBody(current, status, content_type, body, truncated, tuple(redirects))
    raise ToolError(f"{url} redirected more than {MAX_REDIRECTS} times; not followed further.")


def _check_url(raw: str) -> httpx.URL:
    if "\0" in raw:
        raise ToolError("a URL holding a NUL character is not fetched.")
    try:
        parsed = httpx.URL(raw.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        # The URL is not shown whole: it may carry a password that did not parse.
        shown = strip_userinfo(raw)
        raise ToolError(f"'{shown}' is not a valid URL ({strip_userinfo(str(exc))}).") from exc
    if parsed.scheme not in ("http", "https"):
        shown = parsed.scheme or "none"
        raise ToolError(f"only http and https URLs can be fetched, not scheme '{shown}'.")
    if not parsed.host:
        raise ToolError(f"'{strip_userinfo(raw)}' has no host name.")
    if parsed.userinfo:
        raise ToolError("URLs carrying a user name or password are not fetched.")
    check_host_name(parsed)
    return parsed


_Response = tuple[int, str, bytes, bool]


def _request(
    url: httpx.URL,
    addresses: list[str],
    max_bytes: int,
    deadline: float,
    timeout: float,
    fixed_headers: dict[str, str],
) -> _Response | str:
    """GET ``url`` from the first reachable vetted address; a redirect returns its target."""
    last_error: Exception | None = None
    for ip in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        pinned, extensions = _pin(url, ip)
        headers = {
            **fixed_headers,
            "Host": _host_header(url),
            # Uncompressed bodies are asked for; a server sending a compressed one anyway
            # has it inflated no further than max_bytes (see _http.read_body).
            "Accept-Encoding": "identity",
        }
        # A fresh client per hop: a pooled TLS connection made for one host name must
        # never serve another host that happens to share the address.
        # The transport bounds every connect, header and body read by the deadline: a
        # server dripping header lines cannot hold the fetch (and its pool thread) past it.
        try:
            transport = deadline_transport(deadline, verify=tls_context())
        except ConfigError as exc:
            raise ToolError(str(exc)) from exc
        with httpx.Client(
            trust_env=False,
            follow_redirects=False,
            timeout=httpx.Timeout(min(timeout, remaining)),
            transport=transport,
        ) as client:
            try:
                request = client.build_request(
                    "GET", pinned, headers=headers, extensions=extensions
                )
                response = client.send(request, stream=True)
            except httpx.ConnectError as exc:
                last_error = exc
                continue
            except httpx.TimeoutException as exc:
                raise ToolError(f"{url} timed out after {timeout:g} s.") from exc
            except httpx.HTTPError as exc:
                raise ToolError(f"fetching {url} failed: {exc}.") from exc
            try:
                if response.status_code in _REDIRECT_STATUSES:
                    location = response.headers.get("location")
                    if not location:
                        raise ToolError(f"{url} redirected without a Location header.")
                    return str(location)
                content_type = response.headers.get("content-type", "")
                body, truncated = _read_capped(response, max_bytes, deadline, url, timeout)
                return response.status_code, content_type, body, truncated
            finally:
                response.close()
    if last_error is not None:
        raise ToolError(f"cannot connect to {url.host}: {last_error}.") from last_error
    raise ToolError(f"{url} timed out after {timeout:g} s.")


def _pin(url: httpx.URL, ip: str) -> tuple[httpx.URL, dict[str, str]]:
    """The URL aimed at ``ip``, plus the SNI extension that keeps TLS on the host name."""
    if "%" in ip:
        # Scoped (link-local) addresses only pass when private addresses are allowed, and
        # URLs cannot carry a scope portably: connect by name then.
        return url, {}
    extensions = {"sni_hostname": ascii_host(url)} if url.scheme == "https" else {}
    return url.copy_with(host=ip), extensions


def _host_header(url: httpx.URL) -> str:
    host = ascii_host(url)
    host = f"[{host}]" if ":" in host else host
    default_port = 443 if url.scheme == "https" else 80
    if url.port is not None and url.port != default_port:
        return f"{host}:{url.port}"
    return host


_TEXTUAL = re.compile(
    r"^(text/[\w.+-]+|application/(json|xml|xhtml\+xml|javascript|ld\+json|[\w.-]+\+(json|xml)))$"
)


def _body_text(body: bytes, content_type: str) -> str:
    mime = content_type.partition(";")[0]
    mime = mime.strip().lower()
    if mime and not _TEXTUAL.match(mime):
        raise ToolError(f"the page is '{mime}', not text; only text pages are fetched.")
    text = body_text(body, charset_of(content_type))
    if not mime and b"\0" in body[:1024]:
        raise ToolError("the page is binary, not text; only text pages are fetched.")
    looks_html = text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    if mime in ("text/html", "application/xhtml+xml") or (not mime and looks_html):
        return html_to_text(text)
    return text


def _read_capped(
    response: httpx.Response, max_bytes: int, deadline: float, url: httpx.URL, timeout: float
) -> tuple[bytes, bool]:
    """Up to ``max_bytes`` of the body, and whether more was there."""

    def timed_out() -> ToolError:
        return ToolError(f"{url} timed out after {timeout:g} s.")

    try:
        return read_body(response, deadline=deadline, on_deadline=timed_out, max_bytes=max_bytes)
    except httpx.TimeoutException as exc:
        raise timed_out() from exc
    except httpx.HTTPError as exc:
        raise ToolError(f"reading {url} failed: {exc}.") from exc


def check_timeout(timeout: float) -> None:
    """Refuse a fetch timeout that is not a positive, finite number of seconds."""
    # inf would overflow the socket timeout and nan would compare false everywhere,
    # silently removing the bound.
    if not math.isfinite(timeout) or timeout <= 0:
        raise ToolError(f"the fetch timeout must be a positive number of seconds, not {timeout:g}.")
