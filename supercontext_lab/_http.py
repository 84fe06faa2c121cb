"""HTTP pieces every client of the package shares: one TLS context, one bounded body read,
one way to turn a body into text.

The model client, ``web_fetch`` and the remote skill registry verify servers with
:func:`tls_context` (so they agree about ``SSL_CERT_FILE``), read bodies with
:func:`read_body` (so a server trickling bytes cannot hold them past their deadline, nor a
compressed body expand past their cap) and decode them with :func:`body_text` (so a
charset a server names can never make decoding fail).
"""

from __future__ import annotations

import codecs
import os
import re
import ssl
import threading
import time
import zlib
from collections.abc import Callable

import httpx

from ._text import without_surrogates
from .errors import ConfigError

__all__ = ["body_text", "charset_of", "model_client", "read_body", "tls_context"]

_SSL_LOCK = threading.Lock()
_SSL_CONTEXTS: dict[tuple[str, str], ssl.SSLContext] = {}
_SSL_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR")


def tls_context() -> ssl.SSLContext:
    """The verifying TLS context every HTTP client of the package uses.

    It trusts what httpx trusts by default (``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else
    certifi's bundle), verifies certificates and host names, and is built once per process
    and per value of those two variables: loading a certificate store takes about 20 ms of
    CPU, which an evaluation creating a model per run, or a fetch per redirect hop, would
    otherwise pay every time. An ``ssl.SSLContext`` holds settings and certificates, never
    connections, so sharing it between hosts and threads shares nothing else. Raises
    :class:`ConfigError` when the certificates named by those variables cannot be loaded.
    """
    env = (os.environ.get(_SSL_ENV[0], ""), os.environ.get(_SSL_ENV[1], ""))
    with _SSL_LOCK:
        context = _SSL_CONTEXTS.get(env)
        if context is None:
            try:
                context = httpx.create_ssl_context()
            except (OSError, ssl.SSLError) as exc:
                named = [
                    f"{name}={value}" for name, value in zip(_SSL_ENV, env, strict=True) if value
                ]
                source = ", ".join(named) if named else "certifi's bundle"
                raise ConfigError(
                    f"Cannot load the TLS certificates from {source} ({exc}); point the "
                    "variable at a readable PEM file or folder, or unset it."
                ) from exc
            _SSL_CONTEXTS[env] = context
        return context


def model_client(
    client: httpx.Client | None, transport: httpx.BaseTransport | None
) -> tuple[httpx.Client, bool]:
    """The client a model's requests go through, and whether the model owns it (and so
    closes it): the one handed in, else one over ``transport`` (tests), else a verifying
    client of :func:`tls_context`."""
    if client is not None:
        return client, False
    if transport is not None:
        return httpx.Client(transport=transport), True
    return httpx.Client(verify=tls_context()), True


def read_body(
    response: httpx.Response,
    *,
    deadline: float,
    on_deadline: Callable[[], Exception],
    max_bytes: int | None = None,
) -> tuple[bytes, bool]:
    """The streamed body of ``response`` (up to ``max_bytes``) and whether more was there.

    Each read is bounded by the client's read timeout; ``deadline`` (a
    ``time.monotonic()`` value) bounds the whole body: past it, the exception made by
    ``on_deadline`` is raised. Reading one chunk past the cap is how "more was there" is
    known without trusting ``Content-Length``. With ``max_bytes``, a gzip or deflate body
    is inflated here, never more than the cap at a time (a few kilobytes of zeros inflate
    to gigabytes), and a body in any other coding raises ``httpx.DecodingError``.
    httpx's own errors propagate.
    """
    if max_bytes is None:
        chunks = []
        for chunk in response.iter_bytes():
            if time.monotonic() > deadline:
                raise on_deadline()
            chunks.append(chunk)
        return b"".join(chunks), False
    inflate = _inflater(response.headers.get("content-encoding", ""))
    capped: list[bytes] = []
    size = 0
    for raw in response.iter_raw():
        if time.monotonic() > deadline:
            raise on_deadline()
        chunk = inflate(raw, max_bytes + 1 - size)
        capped.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            break
    body = b"".join(capped)
    return body[:max_bytes], size > max_bytes


def _inflater(coding: str) -> Callable[[bytes, int], bytes]:
    """A function giving at most ``room`` bytes of the decoded body for each raw chunk."""
    names = [name.strip().lower() for name in coding.split(",") if name.strip()]
    names = [name for name in names if name != "identity"]
    if not names:
        return lambda raw, room: raw
    if len(names) > 1 or names[0] not in ("gzip", "x-gzip", "deflate"):
        raise httpx.DecodingError(f"the body is in the '{coding}' coding, which is not read")
    state = {"inflater": zlib.decompressobj(zlib.MAX_WBITS | (16 if "gzip" in names[0] else 0))}
    raw_deflate = names[0] == "deflate"

    def inflate(raw: bytes, room: int) -> bytes:
        inflater = state["inflater"]
        try:
            # max_length bounds the output of this call; what is left of the input waits
            # in unconsumed_tail, and is dropped once the cap is reached.
            return inflater.decompress(inflater.unconsumed_tail + raw, max(room, 1))
        except zlib.error as exc:
            if raw_deflate and not inflater.unconsumed_tail and not inflater.eof:
                # "deflate" is often sent without its zlib header: read it raw.
                state["inflater"] = zlib.decompressobj(-zlib.MAX_WBITS)
                return inflate(raw, room)
            raise httpx.DecodingError(f"the compressed body is damaged ({exc})") from exc

    return inflate


# Codecs that are no charset a document can be in: they decode host names (idna,
# punycode, whose decoder is quadratic), Python escapes, or nothing at all.
_NOT_CHARSETS = frozenset({"idna", "punycode", "undefined", "unicode_escape", "raw_unicode_escape"})
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)


def charset_of(content_type: str) -> str | None:
    """The charset a ``Content-Type`` value names, or ``None``."""
    _, _, params = content_type.partition(";")
    match = _CHARSET.search(params[:1000])
    return match.group(1) if match else None


def body_text(body: bytes, charset: str | None) -> str:
    """``body`` decoded in ``charset`` when that is a usable text encoding, else as UTF-8;
    bytes that do not decode become U+FFFD, and so do lone surrogates (UTF-7 and UTF-16
    can produce them), so the text always encodes as UTF-8. Never raises."""
    if charset:
        try:
            if codecs.lookup(charset).name.replace("-", "_") not in _NOT_CHARSETS:
                return without_surrogates(body.decode(charset, errors="replace"))
        except (LookupError, UnicodeError, ValueError, TypeError):
            # Unknown, not a text encoding ("base64"), or a decoder that fails anyway.
            pass
    return without_surrogates(body.decode("utf-8", errors="replace"))
