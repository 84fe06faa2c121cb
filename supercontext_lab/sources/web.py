"""The web source: a pluggable search provider and a guarded page fetcher.

``web_fetch`` is reachable by a model that may be reading injected text, so it treats
every URL as hostile: http/https only, no credentials in the URL, no connection to
loopback, private, link-local, multicast or reserved addresses unless the user allows
private addresses, and never one to a cloud-metadata endpoint (it hands out credentials).
The check runs on the literal host, on every address the host name resolves to, and again
on each redirect hop (redirects are followed here, at most five). The connection then
goes to the address that was vetted, with the original host name in the ``Host`` header
and in TLS SNI, so a DNS answer that changes between the check and the connection (DNS
rebinding) cannot redirect it. Bodies are streamed and cut at ``max_bytes``; a wall-clock
deadline bounds the whole fetch: connect, response headers and body.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import re
import socket
import ssl
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Protocol, runtime_checkable
from urllib.parse import urljoin

import httpx

from .._deadline import deadline_transport
from .._version import __version__
from ..config import get_setting
from ..errors import ConfigError, ToolError
from .registry import ToolResult

__all__ = [
    "DEFAULT_FETCH_TIMEOUT_S",
    "DEFAULT_MAX_BYTES",
    "FetchedPage",
    "WebResult",
    "WebSearchProvider",
    "classify_address",
    "fetch_page",
    "html_to_text",
    "web_fetch",
    "web_search_tool",
]

DEFAULT_MAX_BYTES = 200_000
DEFAULT_FETCH_TIMEOUT_S = 10.0
MAX_REDIRECTS = 5
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# Cloud instance-metadata endpoints. Most already fall in a refused range; the list makes
# the refusal say "metadata", and covers the ones that do not (Azure's wire server is a
# public address).
_METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, ...
        "169.254.170.2",  # AWS ECS task metadata
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server
        "fd00:ec2::254",  # AWS IPv6 IMDS
    )
)
_METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)

_V4_PRIVATE = tuple(
    ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)
_V4_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_V4_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_V6_ULA = ipaddress.IPv6Network("fc00::/7")
_V6_SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")
_V6_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def classify_address(ip: str) -> str | None:
    """Why ``ip`` must not be fetched, or ``None`` when it is a public address.

    Categories: ``"metadata"``, ``"unspecified"``, ``"loopback"``, ``"link_local"``,
    ``"private"`` (RFC 1918, CGNAT 100.64/10, IPv6 ULA fc00::/7), ``"multicast"`` and
    ``"reserved"`` (everything else that is not globally routable: documentation,
    benchmarking, broadcast, 240/4, ...). IPv6 forms that embed an IPv4 address
    (``::ffff:a.b.c.d``, 6to4, NAT64) are judged by that address. A string that is not an
    IP address raises ``ValueError``. Pure computation: no traffic is sent.
    """
    try:
        address = ipaddress.ip_address(ip.strip())
    except ValueError as exc:
        raise ValueError(f"'{ip}' is not an IP address") from exc
    return _classify(address)


def _classify(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id is not None:
            address = ipaddress.IPv6Address(str(address).split("%", 1)[0])
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return _classify(embedded)
    if address in _METADATA_ADDRESSES:
        return "metadata"
    if address.is_unspecified or (
        isinstance(address, ipaddress.IPv4Address) and address in _V4_THIS_NETWORK
    ):
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link_local"
    if isinstance(address, ipaddress.IPv4Address):
        if any(address in net for net in _V4_PRIVATE) or address in _V4_CGNAT:
            return "private"
    elif address in _V6_ULA or address in _V6_SITE_LOCAL:
        return "private"
    if address.is_multicast:
        return "multicast"
    if address.is_reserved or address.is_private or not address.is_global:
        return "reserved"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _V6_NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


# --------------------------------------------------------------------------- search


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


def web_search_tool(
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


# --------------------------------------------------------------------------- fetch


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


def fetch_page(
    url: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    timeout: float = DEFAULT_FETCH_TIMEOUT_S,
    allow_private_addresses: bool = False,
) -> FetchedPage:
    """Fetch ``url`` under the address policy described in the module docstring.

    Raises :class:`ToolError` with a one-line reason for a refused URL or address, a
    network failure, a timeout, a non-2xx status, too many redirects or a body that is not
    text.
    """
    if max_bytes < 1:
        raise ToolError("max_bytes must be at least 1.")
    _check_timeout(timeout)
    deadline = time.monotonic() + timeout
    redirects: list[str] = []
    current = url
    for _hop in range(MAX_REDIRECTS + 1):
        target = _check_url(current)
        addresses = _vetted_addresses(target, allow_private_addresses)
        outcome = _request(target, addresses, max_bytes, deadline, timeout)
        if isinstance(outcome, str):
            redirects.append(current)
            current = urljoin(current, outcome)
            continue
        status, content_type, body, truncated = outcome
        if not 200 <= status < 300:
            raise ToolError(f"{current} answered HTTP {status}.")
        return FetchedPage(
            url=current,
            status=status,
            content_type=content_type,
            text=_body_text(body, content_type),
            truncated=truncated,
            redirects=tuple(redirects),
        )
    raise ToolError(f"{url} redirected more than {MAX_REDIRECTS} times; not followed further.")


def _check_url(raw: str) -> httpx.URL:
    try:
        parsed = httpx.URL(raw.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise ToolError(f"'{raw}' is not a valid URL ({exc}).") from exc
    if parsed.scheme not in ("http", "https"):
        shown = parsed.scheme or "none"
        raise ToolError(f"only http and https URLs can be fetched, not scheme '{shown}'.")
    if not parsed.host:
        raise ToolError(f"'{raw}' has no host name.")
    if parsed.userinfo:
        raise ToolError("URLs carrying a user name or password are not fetched.")
    return parsed


def _vetted_addresses(url: httpx.URL, allow_private: bool) -> list[str]:
    """Addresses ``url``'s host resolves to, all of which passed the policy."""
    host = _ascii_host(url).rstrip(".").lower()
    # Metadata endpoints hand out cloud credentials; allowing private addresses (to read
    # an intranet page) must not open them to a model reading injected text.
    if host in _METADATA_HOSTS:
        raise ToolError(f"refusing to fetch {host}: cloud metadata host.")
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        _refuse_if_blocked(host, str(literal), allow_private)
        return [str(literal)]
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise ToolError(f"cannot resolve host '{host}' ({exc}).") from exc
    addresses: list[str] = []
    for info in infos:
        ip = str(info[4][0])
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise ToolError(f"host '{host}' resolved to no address.")
    # One bad answer refuses the host: a resolver may hand out the addresses in any order.
    for ip in addresses:
        _refuse_if_blocked(host, ip, allow_private)
    return addresses


def _refuse_if_blocked(host: str, ip: str, allow_private: bool) -> None:
    category = classify_address(ip)
    if category is None or (allow_private and category != "metadata"):
        return
    shown = host if host == ip else f"{host} ({ip})"
    if category == "metadata":
        # Refused whatever the setting (see _vetted_addresses).
        raise ToolError(f"refusing to fetch {shown}: cloud metadata address.")
    raise ToolError(
        f"refusing to fetch {shown}: {category.replace('_', '-')} address "
        "(set web.allow_private_addresses to allow it)."
    )


_Response = tuple[int, str, bytes, bool]


def _request(
    url: httpx.URL,
    addresses: list[str],
    max_bytes: int,
    deadline: float,
    timeout: float,
) -> _Response | str:
    """GET ``url`` from the first reachable vetted address; a redirect returns its target."""
    last_error: Exception | None = None
    for ip in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        pinned, extensions = _pin(url, ip)
        headers = {
            "Host": _host_header(url),
            "User-Agent": f"supercontext-lab/{__version__} (web_fetch)",
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            # Uncompressed bodies keep max_bytes honest (no decompression bombs).
            "Accept-Encoding": "identity",
        }
        # A fresh client per hop: a pooled TLS connection made for one host name must
        # never serve another host that happens to share the address.
        # The transport bounds every connect, header and body read by the deadline: a
        # server dripping header lines cannot hold the fetch (and its pool thread) past it.
        with httpx.Client(
            trust_env=False,
            follow_redirects=False,
            timeout=httpx.Timeout(min(timeout, remaining)),
            transport=deadline_transport(deadline, verify=_tls_context()),
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


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """httpx's default verifying TLS context, built once.

    Loading the CA bundle costs about 0.1 s, and every hop gets a fresh client; a context
    holds settings and certificates, never connections, so sharing it shares nothing
    between hosts.
    """
    return httpx.create_ssl_context(trust_env=False)


def _pin(url: httpx.URL, ip: str) -> tuple[httpx.URL, dict[str, str]]:
    """The URL aimed at ``ip``, plus the SNI extension that keeps TLS on the host name."""
    if "%" in ip:
        # Scoped (link-local) addresses only pass when private addresses are allowed, and
        # URLs cannot carry a scope portably: connect by name then.
        return url, {}
    extensions = {"sni_hostname": _ascii_host(url)} if url.scheme == "https" else {}
    return url.copy_with(host=ip), extensions


def _ascii_host(url: httpx.URL) -> str:
    # International names travel as punycode (xn--...) in DNS, SNI and the Host header.
    return url.raw_host.decode("ascii")


def _host_header(url: httpx.URL) -> str:
    host = _ascii_host(url)
    host = f"[{host}]" if ":" in host else host
    default_port = 443 if url.scheme == "https" else 80
    if url.port is not None and url.port != default_port:
        return f"{host}:{url.port}"
    return host


def _read_capped(
    response: httpx.Response, max_bytes: int, deadline: float, url: httpx.URL, timeout: float
) -> tuple[bytes, bool]:
    """Up to ``max_bytes`` of the body, and whether more was there."""
    chunks: list[bytes] = []
    size = 0
    try:
        # Chunks are taken as they arrive, so the deadline is checked often; reading past
        # the cap is how "more was there" is known without trusting Content-Length.
        for chunk in response.iter_bytes():
            if time.monotonic() > deadline:
                # A server dripping bytes would otherwise dodge the per-read timeout.
                raise ToolError(f"{url} timed out after {timeout:g} s.")
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                break
    except httpx.TimeoutException as exc:
        raise ToolError(f"{url} timed out after {timeout:g} s.") from exc
    except httpx.HTTPError as exc:
        raise ToolError(f"reading {url} failed: {exc}.") from exc
    body = b"".join(chunks)
    return body[:max_bytes], size > max_bytes


_TEXTUAL = re.compile(
    r"^(text/[\w.+-]+|application/(json|xml|xhtml\+xml|javascript|ld\+json|[\w.-]+\+(json|xml)))$"
)


def _body_text(body: bytes, content_type: str) -> str:
    mime, _, params = content_type.partition(";")
    mime = mime.strip().lower()
    if mime and not _TEXTUAL.match(mime):
        raise ToolError(f"the page is '{mime}', not text; only text pages are fetched.")
    charset = "utf-8"
    match = re.search(r"charset\s*=\s*\"?([\w.:-]+)", params, re.IGNORECASE)
    if match:
        charset = match.group(1)
    try:
        text = body.decode(charset, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    if not mime and b"\0" in body[:1024]:
        raise ToolError("the page is binary, not text; only text pages are fetched.")
    looks_html = text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    if mime in ("text/html", "application/xhtml+xml") or (not mime and looks_html):
        return html_to_text(text)
    return text


# --------------------------------------------------------------------------- html → text

_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
        "td", "th", "title", "tr", "ul",
    }
)  # fmt: skip


_SPACE = re.compile(r"\s+")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _SKIPPED:
            self.skip_depth += 1
        elif tag == "pre":
            self.pre_depth += 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # <br/>, <hr/>: a void element opens nothing that needs closing.
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _SKIPPED and self.skip_depth:
            self.skip_depth -= 1
        elif tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        # The title lives in <head>, which is otherwise skipped: keep it as the first line.
        if self.in_title or not self.skip_depth:
            # Outside <pre>, a line break in the source is just a space, as browsers show it.
            self.parts.append(data if self.pre_depth else _SPACE.sub(" ", data))


def html_to_text(html: str) -> str:
    """Readable text from HTML: scripts, styles and tags dropped, whitespace collapsed.

    Block elements become line breaks; runs of spaces collapse to one and blank lines to
    none. Never raises on any input.
    """
    parser = _TextExtractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; keep whatever was read before a failure
        pass
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


# --------------------------------------------------------------------------- tools


def web_fetch(
    url: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    timeout: float | None = None,
    allow_private_addresses: bool | None = None,
) -> ToolResult:
    """The ``web_fetch`` tool: :func:`fetch_page` as a :class:`ToolResult`, never raising.

    ``timeout`` defaults to ``web.timeout_s`` from the lab's config (10 s) and
    ``allow_private_addresses`` to ``web.allow_private_addresses`` (false).
    """
    try:
        policy_private, policy_timeout = _policy(allow_private_addresses, timeout)
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


def _policy(allow_private: bool | None, timeout: float | None) -> tuple[bool, float]:
    """The explicit values, or the lab's config settings for those left as ``None``."""
    try:
        if allow_private is None:
            allow_private = get_setting("web.allow_private_addresses", False)
        if timeout is None:
            timeout = get_setting("web.timeout_s", DEFAULT_FETCH_TIMEOUT_S)
    except ConfigError as exc:
        raise ToolError(f"the lab's config cannot be used: {exc}") from exc
    _check_timeout(timeout)
    return allow_private, timeout


def _check_timeout(timeout: float) -> None:
    # inf would overflow the socket timeout and nan would compare false everywhere,
    # silently removing the bound.
    if not math.isfinite(timeout) or timeout <= 0:
        raise ToolError(f"the fetch timeout must be a positive number of seconds, not {timeout:g}.")
