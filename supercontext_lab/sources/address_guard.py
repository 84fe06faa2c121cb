"""The address guard of ``web_fetch``: which hosts and addresses may be fetched.

``web_fetch`` is reachable by a model that may be reading injected text, so every URL is
hostile: no connection to loopback, private, link-local, multicast or reserved addresses
unless the user allows private addresses, and never one to a cloud-metadata endpoint (it
hands out credentials). The check runs on the literal host and on every address the host
name resolves to; the fetcher runs it again on each redirect hop and connects to the
vetted address only. Host names whose labels mix look-alike scripts (a Cyrillic "а" in
"аpple.com") are refused before any lookup, as browsers show such names in punycode.
"""

from __future__ import annotations

import ipaddress
import socket
import unicodedata

import httpx

from ..errors import ToolError

__all__ = ["ascii_host", "check_host_name", "classify_address", "vetted_addresses"]

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


def vetted_addresses(url: httpx.URL, allow_private: bool) -> list[str]:
    """Addresses ``url``'s host resolves to, all of which passed the policy."""
    host = ascii_host(url).rstrip(".").lower()
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
        # Refused whatever the setting (see vetted_addresses).
        raise ToolError(f"refusing to fetch {shown}: cloud metadata address.")
    raise ToolError(
        f"refusing to fetch {shown}: {category.replace('_', '-')} address "
        "(set web.allow_private_addresses to allow it)."
    )


def ascii_host(url: httpx.URL) -> str:
    # International names travel as punycode (xn--...) in DNS, SNI and the Host header.
    return url.raw_host.decode("ascii")


# Scripts whose letters pass for one another ("а" and "a", "ο" and "o", "Ꭺ" and "A"): a
# label mixing two of them is how a look-alike of another site's name is made.
_LOOK_ALIKE_SCRIPTS = frozenset({"LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC"})


def check_host_name(url: httpx.URL) -> None:
    """Refuse a host name one of whose labels mixes letters of two look-alike scripts
    (Latin, Cyrillic, Greek, Armenian, Cherokee, Coptic); the refusal shows the name as
    it travels (punycode). Other mixes (Latin with Han or Kana) are ordinary."""
    host = url.host
    for label in host.split("."):
        scripts = {unicodedata.name(ch, "?").split(" ", 1)[0] for ch in label if ch.isalpha()}
        mixed = sorted(scripts & _LOOK_ALIKE_SCRIPTS)
        if len(mixed) > 1:
            raise ToolError(
                f"refusing to fetch {host} (sent as {ascii_host(url)}): the name '{label}' "
                f"mixes {' and '.join(s.title() for s in mixed)} letters, as look-alikes "
                "of other sites' names do."
            )
