"""Bodies and answers from the network: the remote skill registry fetched under the same
guard and deadline as ``web_fetch``, any charset decoded, compressed bodies inflated no
further than their cap, lying headers and look-alike host names refused.

Every server here listens on 127.0.0.1; the suite's network guard refuses (and fails the
test on) any connection elsewhere and answers host-name lookups itself.
"""

from __future__ import annotations

import gzip
import json
import time
import zlib
from typing import Any

import pytest

from supercontext_lab.errors import ToolError
from supercontext_lab.sources.skills import fetch_registry
from supercontext_lab.tools import build_scout_registry, web
from supercontext_lab.tools.base import ToolResult

from .support import (
    REDIRECT_TARGETS,
    NetworkGuard,
    PageServer,
    Sandbox,
    fill,
    finishes,
    header_dripper,
    raw_server,
)

REGISTRY = [{"id": "budget-check", "name": "Budget check", "description": "Checks budgets."}]


def _serve(site: PageServer, path: str, body: bytes, content_type: str, **headers: str) -> str:
    site.routes[path] = (200, {"Content-Type": content_type, **headers}, body)
    return site.base + path


def _registry_search(sandbox: Sandbox, url: str, **settings: Any) -> ToolResult:
    registry = build_scout_registry(_workspace(sandbox), registry_url=url, **settings)
    return registry.call("skill_registry_search", {"query": "budget"})


def _workspace(sandbox: Sandbox) -> Any:
    from supercontext_lab.sources.workspace import Workspace

    return Workspace(sandbox.root, allow_outside_links=False)


# ---------------------------------------------------------------------- one deadline


def test_registry_fetch_deadline_covers_the_response_headers() -> None:
    """A registry dripping one header line at a time: fetch_registry gives up on time"""
    with header_dripper() as url:
        started = time.perf_counter()
        with pytest.raises(ToolError, match="timed out after 1 s"):
            finishes(15, lambda: fetch_registry(url, timeout=1.0, allow_private_addresses=True))
        elapsed = time.perf_counter() - started
    assert elapsed < 2.5, elapsed


def test_registry_search_tool_gives_up_on_a_dripping_registry(sandbox: Sandbox) -> None:
    """skill_registry_search on a dripping registry answers a tool error within its timeout"""
    with header_dripper() as url:
        started = time.perf_counter()
        result = finishes(
            15,
            lambda: _registry_search(sandbox, url, web_timeout=1.0, allow_private_addresses=True),
        )
        elapsed = time.perf_counter() - started
    assert not result.ok and "timed out" in result.content
    assert elapsed < 2.5, elapsed


# ---------------------------------------------------------------------- the address guard


@pytest.mark.parametrize(("target", "reason"), REDIRECT_TARGETS)
def test_registry_redirect_is_refused_before_any_connection(
    target: str,
    reason: str,
    site: PageServer,
    network_guard: NetworkGuard,
    loopback_is_public: None,
) -> None:
    """A registry redirecting (over two hops) to a refused target: refused before connecting"""
    site.redirect("/jump", fill(target, site), 307)
    start = site.redirect("/registry.json", "/jump", 302)
    with pytest.raises(ToolError) as caught:
        fetch_registry(start, timeout=3)
    assert reason in str(caught.value) and "\n" not in str(caught.value)
    assert "pw@" not in str(caught.value)
    assert site.seen == ["/registry.json", "/jump"]
    assert network_guard.connects == ["127.0.0.1", "127.0.0.1"]


def test_registry_on_a_private_address_needs_the_setting(
    sandbox: Sandbox, site: PageServer, network_guard: NetworkGuard
) -> None:
    """A registry on loopback: refused by default, read with web.allow_private_addresses"""
    url = _serve(site, "/registry.json", json.dumps(REGISTRY).encode(), "application/json")
    refused = _registry_search(sandbox, url)
    assert not refused.ok and "loopback address" in refused.content
    assert network_guard.connects == [] and site.seen == []
    allowed = _registry_search(sandbox, url, allow_private_addresses=True)
    assert allowed.ok and "budget-check" in allowed.content


def test_registry_at_a_metadata_address_stays_refused(network_guard: NetworkGuard) -> None:
    """A registry URL at a cloud metadata address: refused even with private addresses on"""
    with pytest.raises(ToolError, match="metadata"):
        fetch_registry("http://169.254.169.254/registry.json", allow_private_addresses=True)
    assert network_guard.connects == []


def test_registry_credentials_are_never_echoed(network_guard: NetworkGuard) -> None:
    """A registry URL carrying a password: refused, and the password is in no message"""
    for url in ("http://user:hunter2@registry.test/r.json", "http://user:hunter2@[bad/r.json"):
        with pytest.raises(ToolError) as caught:
            fetch_registry(url)
        assert "hunter2" not in str(caught.value)
        assert "hunter2" not in repr(caught.value.__cause__)
    assert network_guard.connects == []


# ---------------------------------------------------------------------- charsets

ODD_CHARSETS = [
    "idna",
    "undefined",
    "punycode",
    "base64",
    "rot13",
    "zlib",
    "unicode_escape",
    "raw_unicode_escape",
    "mbcs",
    "no-such-charset",
    "utf-7",
    "utf-16",
    "",
]


@pytest.mark.parametrize("charset", ODD_CHARSETS)
def test_web_fetch_survives_any_declared_charset(charset: str, site: PageServer) -> None:
    """A page declaring an unknown or unusable charset: a result, decoded as UTF-8 if need be"""
    body = "<html><body><p>caf\u00e9 +2AA- \\u0041</p></body></html>".encode() + b"\xff"
    url = _serve(site, "/odd.html", body, f"text/html; charset={charset}")
    result = finishes(15, lambda: web.fetch_url(url, allow_private_addresses=True, timeout=5))
    assert result.ok, result.content
    text = json.loads(result.content)["text"]
    text.encode("utf-8")  # no lone surrogate, whatever the codec made
    if charset not in ("utf-7", "utf-16"):
        assert "caf\u00e9" in text


def test_a_punycode_page_of_megabytes_is_not_decoded_as_punycode(site: PageServer) -> None:
    """charset=punycode on a 3 MB page (a quadratic decoder, not a charset): read as UTF-8

    Python's punycode decoder is quadratic; the page reads as UTF-8 at once."""
    url = _serve(
        site, "/p.txt", b"a" * 3_000_000 + b"-" + b"b" * 10, "text/plain; charset=punycode"
    )
    result = finishes(20, lambda: web.fetch_url(url, 4_000_000, allow_private_addresses=True))
    assert result.ok and json.loads(result.content)["text"].startswith("aaa")


@pytest.mark.parametrize("charset", ["idna", "undefined", "utf-7"])
def test_registry_survives_any_declared_charset(charset: str, site: PageServer) -> None:
    """A registry declaring an unusable charset is still read"""
    body = json.dumps([{**REGISTRY[0], "name": "Caf\u00e9 \\ud800"}]).encode()
    url = _serve(site, "/registry.json", body, f"application/json; charset={charset}")
    (entry,) = fetch_registry(url, allow_private_addresses=True)
    entry.name.encode("utf-8")
    assert entry.id == "budget-check"


# ---------------------------------------------------------------------- compressed bodies


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    """200 MB of zeros, gzip- and deflate-compressed (about 200 kB each)."""
    compressors = {"gzip": zlib.compressobj(9, zlib.DEFLATED, 31), "deflate": zlib.compressobj(9)}
    block = b"\0" * (1 << 20)
    out: dict[str, bytes] = {}
    for name, compressor in compressors.items():
        parts = [compressor.compress(block) for _ in range(200)]
        out[name] = b"".join(parts) + compressor.flush()
    return out


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_web_fetch_inflates_a_bomb_no_further_than_its_cap(
    coding: str, bombs: dict[str, bytes], site: PageServer
) -> None:
    """A 200 MB gzip or deflate bomb sent against Accept-Encoding: identity: cut at max_bytes"""
    url = _serve(site, "/bomb.txt", bombs[coding], "text/plain", **{"Content-Encoding": coding})
    result = finishes(20, lambda: web.fetch_url(url, 100_000, allow_private_addresses=True))
    assert result.ok, result.content
    payload = json.loads(result.content)
    assert payload["truncated"] is True and len(payload["text"]) == 100_000


def test_registry_bomb_is_refused_as_too_large(bombs: dict[str, bytes], site: PageServer) -> None:
    """A registry answering a 200 MB gzip bomb: 'larger than' its cap, never inflated whole"""
    url = _serve(site, "/r.json", bombs["gzip"], "application/json", **{"Content-Encoding": "gzip"})
    with pytest.raises(ToolError, match="larger than"):
        finishes(20, lambda: fetch_registry(url, allow_private_addresses=True))


def test_a_small_compressed_page_reads_as_usual(site: PageServer) -> None:
    """A gzip page the server compressed anyway is inflated and read"""
    body = gzip.compress(b"<p>compressed anyway</p>")
    url = _serve(site, "/gz.html", body, "text/html", **{"Content-Encoding": "gzip"})
    result = web.fetch_url(url, allow_private_addresses=True)
    assert result.ok and json.loads(result.content)["text"] == "compressed anyway"


@pytest.mark.parametrize(
    ("coding", "body"),
    [("br", b"\x1b\x03"), ("gzip, gzip", b"x"), ("gzip", b"not gzip at all")],
    ids=["brotli", "stacked", "damaged"],
)
def test_unreadable_codings_are_one_line_errors(coding: str, body: bytes, site: PageServer) -> None:
    """A body in a coding that is not read, stacked codings or a damaged one: one line"""
    url = _serve(site, "/c.txt", body, "text/plain", **{"Content-Encoding": coding})
    result = web.fetch_url(url, allow_private_addresses=True, timeout=5)
    assert not result.ok and "\n" not in result.content
    assert result.content.startswith("web_fetch: reading ")


# ---------------------------------------------------------------------- lying headers

LIES = {
    "content-length-longer-than-the-body": b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 100000\r\n\r\nshort",
    "content-length-not-a-number": b"HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\nbody",
    "two-content-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 9\r\n\r\nbody",
    "negative-content-length": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nbody",
    "chunked-size-not-hex": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n",
    "header-without-colon": b"HTTP/1.1 200 OK\r\nnot a header\r\n\r\nbody",
    "status-line-of-garbage": b"\x00\x01\x02 garbage\r\n\r\n",
}


@pytest.mark.parametrize("answer", list(LIES.values()), ids=list(LIES))
def test_lying_headers_are_one_line_errors(answer: bytes) -> None:
    """A server whose headers lie about the body: a one-line error, never a hang"""
    with raw_server(answer) as url:
        result = finishes(15, lambda: web.fetch_url(url, allow_private_addresses=True, timeout=5))
        with pytest.raises(ToolError) as caught:
            finishes(15, lambda: fetch_registry(url, timeout=5, allow_private_addresses=True))
    assert not result.ok and "\n" not in result.content
    assert "\n" not in str(caught.value)


def test_content_length_shorter_than_the_body_reads_only_what_it_says() -> None:
    """A Content-Length shorter than the body: only that many bytes are read"""
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nbodyEXTRA"
    with raw_server(answer) as url:
        result = web.fetch_url(url, allow_private_addresses=True, timeout=5)
    assert result.ok and json.loads(result.content)["text"] == "body"


# ---------------------------------------------------------------------- host names and URLs

LOOK_ALIKES = [
    "http://\u0430pple.com/",  # Cyrillic a
    "http://xn--pple-43d.com/",  # the same name in punycode
    "http://g\u043e\u043egle.com/",  # Cyrillic o
    "http://\u03bfpenai.com/",  # Greek omicron
    "https://paypa\u04cf.com/login",  # Cyrillic palochka
]


@pytest.mark.parametrize("url", LOOK_ALIKES)
def test_look_alike_host_names_are_refused_before_any_lookup(
    url: str, network_guard: NetworkGuard
) -> None:
    """A host name mixing Latin with Cyrillic or Greek letters: refused before any lookup

    The refusal shows the name in punycode."""
    result = web.fetch_url(url, allow_private_addresses=True)
    assert not result.ok and "xn--" in result.content and "look-alike" in result.content
    with pytest.raises(ToolError, match="look-alike"):
        fetch_registry(url, allow_private_addresses=True)
    assert network_guard.lookups == [] and network_guard.connects == []


def test_international_names_in_one_script_are_fetched(network_guard: NetworkGuard) -> None:
    """Names in one script (b\u00fccher.de, \u03c0\u03b1\u03c1\u03ac\u03b4\u03b5\u03b9\u03b3\u03bc\u03b1.gr, Japanese with Latin) pass the check"""
    for url in (
        "http://b\u00fccher.de/",
        "http://\u03c0\u03b1\u03c1\u03ac\u03b4\u03b5\u03b9\u03b3\u03bc\u03b1.gr/",
        "http://\u65e5\u672cabc.jp/",
    ):
        result = web.fetch_url(url, allow_private_addresses=True, timeout=2)
        assert "look-alike" not in result.content
    assert network_guard.connects == []


@pytest.mark.parametrize(
    "url",
    ["http://exa\x00mple.com/", "http://example.com/\x00/etc", "http://user:hunter2@[::1/"],
    ids=["nul-in-host", "nul-in-path", "password-in-a-broken-url"],
)
def test_urls_with_nul_or_a_password_are_one_line_refusals(
    url: str, network_guard: NetworkGuard
) -> None:
    """A URL holding NUL, or a password in a URL that does not parse: refused, never echoed"""
    result = web.fetch_url(url, allow_private_addresses=True)
    assert not result.ok and "\n" not in result.content and "hunter2" not in result.content
    assert network_guard.connects == []
