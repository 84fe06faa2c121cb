"""The web source: the address classifier, the guarded fetcher and the search tool.

Network traffic goes only to servers these tests start on 127.0.0.1 or [::1]; host names
that "resolve" elsewhere do so through a patched ``socket.getaddrinfo``.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab import config
from supercontext_lab.sources import address_guard
from supercontext_lab.sources.address_guard import classify_address
from supercontext_lab.sources.html_text import html_to_text
from supercontext_lab.sources.web_search import WebResult
from supercontext_lab.tools.web import fetch_url, search_with

PAGE = (
    "<!doctype html><html><head><title>Seed  dispersal</title>"
    "<style>body { color: red }</style><script>var secret = 'hidden';</script></head>"
    "<body><h1>Kernels</h1><p>Wind   carries\n seeds &amp; pollen.</p>"
    "<noscript>enable js</noscript><ul><li>one</li><li>two</li></ul></body></html>"
)
BIG = b"x" * 50_000


@dataclass
class Site:
    """A loopback test server and what it saw."""

    base: str
    port: int
    requests: list[tuple[str, str]] = field(default_factory=list)
    routes: dict[str, Callable[[BaseHTTPRequestHandler], None]] = field(default_factory=dict)
    release: threading.Event = field(default_factory=threading.Event)


def _send(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str = "text/plain"
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _redirect(location: str) -> Callable[[BaseHTTPRequestHandler], None]:
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return route


def _serve(host: str) -> Iterator[Site]:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET

    class Server(ThreadingHTTPServer):
        address_family = family
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # clients hanging up early is what several tests do on purpose

    site: Site | None = None

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            assert site is not None
            site.requests.append((self.path, self.headers.get("Host", "")))
            route = site.routes.get(self.path.split("?")[0])
            if route is None:
                _send(self, 404, b"no such page")
            else:
                route(self)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = Server((host, 0), Handler)
    port = server.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    site = Site(base=f"http://{shown}:{port}", port=port)

    def slow(handler: BaseHTTPRequestHandler) -> None:
        assert site is not None
        site.release.wait(5)
        _send(handler, 200, b"late")

    def drip(handler: BaseHTTPRequestHandler) -> None:
        assert site is not None
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()
        for _ in range(60):
            if site.release.wait(0.05):
                return
            handler.wfile.write(b"drop ")
            handler.wfile.flush()

    site.routes.update(
        {
            "/page": lambda h: _send(h, 200, PAGE.encode(), "text/html; charset=utf-8"),
            "/plain": lambda h: _send(h, 200, "café notes".encode(), "text/plain; charset=utf-8"),
            "/big": lambda h: _send(h, 200, BIG),
            "/host": lambda h: _send(h, 200, h.headers.get("Host", "").encode()),
            "/png": lambda h: _send(h, 200, b"\x89PNG\r\n\x1a\n\0\0", "image/png"),
            "/loop": _redirect("/loop"),
            "/to-page": _redirect("/page"),
            "/slow": slow,
            "/drip": drip,
        }
    )
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def site() -> Iterator[Site]:
    yield from _serve("127.0.0.1")


@pytest.fixture
def site6() -> Iterator[Site]:
    try:
        probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        pytest.skip("IPv6 loopback is not available here")
    yield from _serve("::1")


class FakeDNS:
    """Host name → addresses for a patched ``socket.getaddrinfo``; nothing else resolves."""

    def __init__(self) -> None:
        self.table: dict[str, list[str]] = {}
        self.queued: dict[str, list[list[str]]] = {}
        self.lookups: list[str] = []

    def __setitem__(self, host: str, addresses: list[str]) -> None:
        self.table[host] = addresses

    def queue(self, host: str, *answers: list[str]) -> None:
        """Answer successive lookups of ``host`` with ``answers``, one each."""
        self.queued.setdefault(host, []).extend(answers)

    def answer(self, host: str) -> list[str] | None:
        if self.queued.get(host):
            return self.queued[host].pop(0)
        return self.table.get(host)


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> FakeDNS:
    dns = FakeDNS()
    real = socket.getaddrinfo

    def fake(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        dns.lookups.append(name)
        addresses = dns.answer(name)
        if addresses is None:
            # Only numeric loopback addresses may reach the real resolver.
            assert ipaddress.ip_address(name).is_loopback, f"unexpected lookup of {name!r}"
            return real(host, port, *args, **kwargs)
        out = []
        for ip in addresses:
            if ":" in ip:
                out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (ip, port or 80, 0, 0)))
            else:
                out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port or 80)))
        return out

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return dns


@pytest.fixture
def loopback_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Treat 127.0.0.1 as a public address, so the default policy can be exercised."""
    real = address_guard.classify_address

    def classify(ip: str) -> str | None:
        return None if ip == "127.0.0.1" else real(ip)

    monkeypatch.setattr(address_guard, "classify_address", classify)


def _payload(result: Any) -> dict[str, Any]:
    assert result.ok, result.content
    data = json.loads(result.content)
    assert isinstance(data, dict)
    return data


# ---------------------------------------------------------------------- classifier


@pytest.mark.parametrize(
    ("ip", "category"),
    [
        ("10.0.0.1", "private"),
        ("192.168.1.1", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("100.64.0.1", "private"),
        ("100.127.255.254", "private"),
        ("fd00::1", "private"),
        ("fc00::1", "private"),
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.1.2.3", "private"),
        ("2002:7f00:1::", "loopback"),
        ("64:ff9b::a00:1", "private"),
        ("169.254.1.1", "link_local"),
        ("fe80::1", "link_local"),
        ("fe80::1%eth0", "link_local"),
        ("169.254.169.254", "metadata"),
        ("fd00:ec2::254", "metadata"),
        ("100.100.100.200", "metadata"),
        ("168.63.129.16", "metadata"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("ff02::1", "multicast"),
        ("255.255.255.255", "reserved"),
        ("240.0.0.1", "reserved"),
        ("192.0.2.10", "reserved"),
        ("198.18.0.1", "reserved"),
        ("2001:db8::1", "reserved"),
        ("8.8.8.8", None),
        ("1.1.1.1", None),
        ("172.32.0.1", None),
        ("100.128.0.1", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),
    ],
)
def test_classify_address(ip: str, category: str | None) -> None:
    assert classify_address(ip) == category


@pytest.mark.parametrize("text", ["", "localhost", "10.0.0", "300.1.1.1", "::g"])
def test_classify_address_rejects_non_addresses(text: str) -> None:
    with pytest.raises(ValueError, match="not an IP address"):
        classify_address(text)


@given(st.ip_addresses(v=4))
def test_mapped_ipv6_is_judged_like_its_ipv4(address: ipaddress.IPv4Address) -> None:
    assert classify_address(f"::ffff:{address}") == classify_address(str(address))


@given(st.ip_addresses(network="10.0.0.0/8") | st.ip_addresses(network="192.168.0.0/16"))
def test_every_rfc1918_address_is_private(address: ipaddress.IPv4Address) -> None:
    assert classify_address(str(address)) == "private"


@given(st.ip_addresses())
def test_classifier_only_passes_global_addresses(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    category = classify_address(str(address))
    assert category in {
        None, "metadata", "unspecified", "loopback", "link_local", "private", "multicast",
        "reserved",
    }  # fmt: skip
    if category is None:
        assert address.is_global
        assert not address.is_multicast


# ---------------------------------------------------------------------- policy


def test_loopback_server_is_refused_by_default(site: Site) -> None:
    result = fetch_url(f"{site.base}/page", allow_private_addresses=False, timeout=5)
    assert not result.ok
    assert result.content.startswith("web_fetch: refusing to fetch 127.0.0.1")
    assert "loopback" in result.content
    assert site.requests == []


def test_ipv6_loopback_server_is_refused_then_allowed(site6: Site) -> None:
    refused = fetch_url(f"{site6.base}/plain", allow_private_addresses=False, timeout=5)
    assert not refused.ok
    assert "loopback" in refused.content
    assert site6.requests == []
    allowed = _payload(fetch_url(f"{site6.base}/plain", allow_private_addresses=True, timeout=5))
    assert allowed["text"] == "café notes"


def test_default_policy_comes_from_config(site: Site) -> None:
    assert not fetch_url(f"{site.base}/plain", timeout=5).ok
    config.set_setting("web.allow_private_addresses", True)
    assert _payload(fetch_url(f"{site.base}/plain", timeout=5))["text"] == "café notes"


def test_allowed_fetch_turns_html_into_text(site: Site) -> None:
    data = _payload(fetch_url(f"{site.base}/page", allow_private_addresses=True, timeout=5))
    assert data["status"] == 200
    assert data["content_type"].startswith("text/html")
    assert data["truncated"] is False
    assert data["text"] == "Seed dispersal\nKernels\nWind carries seeds & pollen.\none\ntwo"
    assert "secret" not in data["text"]
    assert "color" not in data["text"]


@pytest.mark.parametrize(
    ("host", "addresses", "category"),
    [
        ("intranet.test", ["10.0.0.7"], "private"),
        ("router.test", ["192.168.0.1"], "private"),
        ("mixed.test", ["93.184.216.34", "172.16.5.5"], "private"),
        ("v6.test", ["2606:4700::1", "fd12::1"], "private"),
        ("imds.test", ["169.254.169.254"], "metadata"),
        ("local.test", ["127.0.0.1"], "loopback"),
    ],
)
def test_host_names_resolving_to_blocked_addresses_are_refused(
    fake_dns: FakeDNS, host: str, addresses: list[str], category: str
) -> None:
    fake_dns[host] = addresses
    result = fetch_url(f"http://{host}/x", allow_private_addresses=False, timeout=5)
    assert not result.ok
    assert f"refusing to fetch {host} (" in result.content
    assert category.replace("_", "-") in result.content


def test_international_host_names_are_resolved_as_punycode(fake_dns: FakeDNS) -> None:
    fake_dns["xn--bcher-kva.test"] = ["10.0.0.8"]
    result = fetch_url("http://Bücher.test/x", allow_private_addresses=False, timeout=5)
    assert not result.ok
    assert "refusing to fetch xn--bcher-kva.test (10.0.0.8): private address" in result.content
    assert fake_dns.lookups == ["xn--bcher-kva.test"]


@pytest.mark.parametrize(
    "url",
    [
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://METADATA.google.internal./x",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
    ],
)
def test_metadata_endpoints_are_refused_without_lookup(fake_dns: FakeDNS, url: str) -> None:
    result = fetch_url(url, allow_private_addresses=False, timeout=5)
    assert not result.ok
    assert "metadata" in result.content
    assert fake_dns.lookups == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://127.0.0.1/file.txt", "not scheme 'ftp'"),
        ("file:///etc/passwd", "not scheme 'file'"),
        ("javascript:alert(1)", "not scheme 'javascript'"),
        ("data:text/plain,hello", "not scheme 'data'"),
        ("gopher://127.0.0.1:70/", "not scheme 'gopher'"),
        ("example.com/page", "not scheme 'none'"),
        ("http:///nohost", "no host name"),
        ("http://user:pw@127.0.0.1/", "user name or password"),
    ],
)
def test_unusable_urls_are_refused(url: str, reason: str) -> None:
    result = fetch_url(url, allow_private_addresses=True, timeout=5)
    assert not result.ok
    assert reason in result.content


def test_redirect_to_a_blocked_address_is_refused(
    site: Site, fake_dns: FakeDNS, loopback_is_public: None
) -> None:
    fake_dns["internal.test"] = ["10.1.2.3"]
    site.routes["/jump"] = _redirect(f"http://internal.test:{site.port}/page")
    result = fetch_url(f"{site.base}/jump", allow_private_addresses=False, timeout=5)
    assert not result.ok
    assert "refusing to fetch internal.test (10.1.2.3): private address" in result.content
    assert [path for path, _ in site.requests] == ["/jump"]


def test_each_hop_is_resolved_again_against_dns_rebinding(
    site: Site, fake_dns: FakeDNS, loopback_is_public: None
) -> None:
    fake_dns.queue("rebind.test", ["127.0.0.1"], ["10.9.9.9"])
    site.routes["/first"] = _redirect(f"http://rebind.test:{site.port}/page")
    result = fetch_url(f"http://rebind.test:{site.port}/first", timeout=5)
    assert not result.ok
    assert "rebind.test (10.9.9.9): private address" in result.content
    assert site.requests == [("/first", f"rebind.test:{site.port}")]


def test_connection_goes_to_the_vetted_address_with_the_original_host(
    site: Site, fake_dns: FakeDNS, loopback_is_public: None
) -> None:
    fake_dns["pinned.test"] = ["127.0.0.1"]
    data = _payload(fetch_url(f"http://pinned.test:{site.port}/host", timeout=5))
    assert data["text"] == f"pinned.test:{site.port}"
    assert data["url"] == f"http://pinned.test:{site.port}/host"


def test_allowed_redirects_are_followed_and_reported(site: Site) -> None:
    data = _payload(fetch_url(f"{site.base}/to-page", allow_private_addresses=True, timeout=5))
    assert data["url"] == f"{site.base}/page"
    assert data["redirected_from"] == [f"{site.base}/to-page"]
    assert data["text"].startswith("Seed dispersal")


def test_redirect_loops_stop_after_five_hops(site: Site) -> None:
    result = fetch_url(f"{site.base}/loop", allow_private_addresses=True, timeout=5)
    assert not result.ok
    assert "redirected more than 5 times" in result.content
    assert len(site.requests) == 6


# ---------------------------------------------------------------------- limits


@pytest.mark.parametrize(
    ("max_bytes", "length", "truncated"),
    [
        (1_000, 1_000, True),
        (49_999, 49_999, True),
        (50_000, 50_000, False),
        (80_000, 50_000, False),
    ],
)
def test_body_is_cut_at_max_bytes(site: Site, max_bytes: int, length: int, truncated: bool) -> None:
    result = fetch_url(f"{site.base}/big", max_bytes, allow_private_addresses=True, timeout=5)
    data = _payload(result)
    assert len(data["text"]) == length
    assert data["truncated"] is truncated
    assert ("note" in data) is truncated


def test_slow_server_times_out(site: Site) -> None:
    started = time.monotonic()
    result = fetch_url(f"{site.base}/slow", allow_private_addresses=True, timeout=0.5)
    assert not result.ok
    assert "timed out after 0.5 s" in result.content
    assert time.monotonic() - started < 3


def test_dripping_server_is_bounded_by_the_deadline(site: Site) -> None:
    started = time.monotonic()
    result = fetch_url(f"{site.base}/drip", allow_private_addresses=True, timeout=0.5)
    assert not result.ok
    assert "timed out" in result.content
    assert time.monotonic() - started < 2


@pytest.mark.parametrize(
    ("path", "reason"),
    [("/missing", "answered HTTP 404"), ("/png", "'image/png', not text")],
)
def test_errors_and_non_text_pages_fail(site: Site, path: str, reason: str) -> None:
    result = fetch_url(f"{site.base}{path}", allow_private_addresses=True, timeout=5)
    assert not result.ok
    assert reason in result.content


def test_connection_refused_is_reported(site: Site) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    result = fetch_url(f"http://127.0.0.1:{closed_port}/", allow_private_addresses=True, timeout=5)
    assert not result.ok
    assert result.content.startswith("web_fetch: cannot connect to 127.0.0.1")


# ---------------------------------------------------------------------- html and search


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<p>a</p><p>b</p>", "a\nb"),
        ("x<br>y<br/>z", "x\ny\nz"),
        ("<div>  lots   of\tspace </div>", "lots of space"),
        ("<script>alert(1)</script>visible", "visible"),
        ("<style>p{}</style><template>t</template>kept", "kept"),
        ("<p>5 &lt; 6 &amp;&amp; caf&eacute;</p>", "5 < 6 && café"),
        ("<head><title>T</title><meta x></head><body>B</body>", "T\nB"),
        ("<p>unclosed <b>bold", "unclosed bold"),
        ("<p>one\ntwo</p><pre>a\nb</pre>", "one two\na\nb"),
        ("", ""),
    ],
)
def test_html_to_text(html: str, text: str) -> None:
    assert html_to_text(html) == text


@given(st.text())
def test_html_to_text_never_raises_and_collapses_space(html: str) -> None:
    text = html_to_text(html)
    assert "  " not in text
    assert "\n\n" not in text
    assert text == text.strip()


@given(st.text(alphabet=st.characters(blacklist_characters="<&")))
def test_text_without_markup_keeps_its_words(plain: str) -> None:
    assert html_to_text(plain).split() == plain.split()


class FakeSearch:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, limit: int) -> list[WebResult]:
        self.calls.append((query, limit))
        if self.fail:
            raise RuntimeError("quota exceeded")
        return [WebResult(f"r{i}", f"https://example.org/{i}", f"s{i}") for i in range(10)]


def test_web_search_without_provider_is_not_configured() -> None:
    result = search_with("dispersal kernels")
    assert not result.ok
    assert result.content.startswith("web search is not configured (set a provider")


def test_web_search_with_provider() -> None:
    provider = FakeSearch()
    data = _payload(search_with("dispersal kernels", 2, provider=provider))
    assert provider.calls == [("dispersal kernels", 2)]
    assert data == {
        "query": "dispersal kernels",
        "results": [
            {"title": "r0", "url": "https://example.org/0", "snippet": "s0"},
            {"title": "r1", "url": "https://example.org/1", "snippet": "s1"},
        ],
    }


def test_web_search_provider_failure_is_a_tool_error() -> None:
    result = search_with("x", provider=FakeSearch(fail=True))
    assert not result.ok
    assert result.content == "web_search_tool failed: RuntimeError: quota exceeded"
