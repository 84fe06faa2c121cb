"""An HTTP transport whose every network operation ends by one wall-clock deadline.

httpx's timeouts apply to each operation: a server sending one response-header line every
half second never trips a 3 s read timeout, and holds the calling thread for as long as
it likes. Here each connect, TLS handshake, read and write gets the time left until the
deadline (or its own timeout when shorter), and fails with a timeout once none is left,
so connect, headers and body together are bounded, and an abandoned call gives its thread
back by the deadline.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["deadline_transport"]


def _left(deadline: float, timeout: float | None, error: type[Exception]) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(self._deadline, timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(self._deadline, timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(self._deadline, timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, left), self._deadline
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, deadline: float) -> None:
        self._inner = httpcore.SyncBackend()
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(self._deadline, timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, left, local_address, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(self._deadline, timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_unix_socket(path, left, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(min(seconds, max(self._deadline - time.monotonic(), 0.0)))


def deadline_transport(deadline: float, *, verify: ssl.SSLContext) -> httpx.HTTPTransport:
    """An ``httpx.HTTPTransport`` (no proxies, HTTP/1.1) bounded by ``deadline``, a
    ``time.monotonic()`` value."""
    transport = httpx.HTTPTransport(verify=verify, trust_env=False)
    # httpx has no public way to pass a network backend; its transport keeps the
    # httpcore pool it wraps in ``_pool``, which is replaced by an equivalent one.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=verify, network_backend=_DeadlineBackend(deadline)
    )
    return transport
