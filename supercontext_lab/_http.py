"""HTTP pieces every client of the package shares: one TLS context, one bounded body read.

Both the model client and ``web_fetch`` verify servers with :func:`tls_context` (so they
agree about ``SSL_CERT_FILE``) and read bodies with :func:`read_body` (so a server
trickling bytes cannot hold either past its deadline).
"""

from __future__ import annotations

import os
import ssl
import threading
import time
from collections.abc import Callable

import httpx

from .errors import ConfigError

__all__ = ["read_body", "tls_context"]

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
    known without trusting ``Content-Length``. httpx's own errors propagate.
    """
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        if time.monotonic() > deadline:
            raise on_deadline()
        chunks.append(chunk)
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:
            break
    body = b"".join(chunks)
    if max_bytes is None:
        return body, False
    return body[:max_bytes], size > max_bytes
