"""Fixtures of the reliability suite: the hostile workspace, the canary key and a spy on
every tool the scout actually executes."""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from supercontext_lab.sources import address_guard
from supercontext_lab.tools import ToolRegistry, ToolResult

from .support import (
    CANARY_KEY,
    KEY_ENV,
    NetworkGuard,
    PageServer,
    Sandbox,
    addrinfo,
    hostile_workspace,
)


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """A hand-built workspace full of traps, with a secret folder next to it."""
    base = tmp_path / "sandbox"
    root = hostile_workspace(base / "ws", base / "outside")
    return Sandbox(base=base, root=root, outside=base / "outside")


@pytest.fixture
def canary_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """Put the canary key in the variable the test routes name."""
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    return CANARY_KEY


@pytest.fixture
def executed_tools(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tools the scout's registry was asked to run, in call order.

    The scout refuses forbidden calls before they reach the registry, so a forbidden name
    here means a forbidden tool ran.
    """
    calls: list[str] = []
    real = ToolRegistry.call

    def spy(self: ToolRegistry, name: str, arguments: str | Mapping[str, Any]) -> ToolResult:
        calls.append(name)
        return real(self, name, arguments)

    monkeypatch.setattr(ToolRegistry, "call", spy)
    return calls


@pytest.fixture(autouse=True)
def network_guard(monkeypatch: pytest.MonkeyPatch) -> Iterator[NetworkGuard]:
    """No test of this suite may send a packet beyond loopback or ask a real resolver."""
    guard = NetworkGuard()
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> None:
        guard.check_connect(self.family, address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        guard.check_connect(self.family, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if host is None:
            return real_getaddrinfo(host, port, *args, **kwargs)
        name = host.decode() if isinstance(host, bytes) else str(host)
        addresses = guard.resolve(name)
        if addresses is None:
            raise socket.gaierror(socket.EAI_NONAME, f"test network guard: {name!r} is unknown")
        return addrinfo(addresses, port)

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield guard
    assert guard.violations == [], f"connections beyond loopback were attempted: {guard.violations}"


@pytest.fixture(scope="session")
def http_client() -> Iterator[httpx.Client]:
    """One HTTP client for the test models: building one loads the CA bundle (~0.1 s).

    ``trust_env=False``: it is made before the per-test fixture clears proxy variables.
    """
    with httpx.Client(trust_env=False) as client:
        yield client


@pytest.fixture(scope="package")
def shared_site() -> Iterator[PageServer]:
    """One loopback web site for the whole suite (starting and stopping one per test
    costs more than most tests)."""
    with PageServer() as server:
        yield server


@pytest.fixture
def site(shared_site: PageServer) -> PageServer:
    """The suite's web site, with no pages and no requests seen yet."""
    shared_site.routes.clear()
    shared_site.seen.clear()
    return shared_site


@pytest.fixture
def loopback_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let 127.0.0.1 pass the default policy, so a loopback site can play a public one."""
    real = address_guard.classify_address

    def classify(ip: str) -> str | None:
        return None if ip == "127.0.0.1" else real(ip)

    monkeypatch.setattr(address_guard, "classify_address", classify)
