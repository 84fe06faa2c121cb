"""The shared TLS context: one per certificate setting, and a clear error for a bad one."""

from __future__ import annotations

import ssl
from pathlib import Path

import certifi
import httpx
import pytest

from supercontext_lab import _http as http_helpers
from supercontext_lab._http import tls_context
from supercontext_lab.errors import ConfigError
from supercontext_lab.models.openai import OpenAICompatibleModel


@pytest.fixture
def ssl_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A fresh context cache and no certificate variables; counts the contexts built."""
    monkeypatch.setattr(http_helpers, "_SSL_CONTEXTS", {})
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    built: list[int] = []
    real_build = httpx.create_ssl_context

    def counting_build() -> ssl.SSLContext:
        built.append(1)
        return real_build()

    monkeypatch.setattr(httpx, "create_ssl_context", counting_build)
    return built


def test_a_new_cert_variable_gets_its_own_context(
    ssl_builds: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    built = ssl_builds
    default = tls_context()
    assert tls_context() is default
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    changed = tls_context()
    assert changed is not default and tls_context() is changed
    assert len(built) == 2


def test_unreadable_certificates_are_a_config_error(
    ssl_builds: list[int],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-such-bundle.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))
    with pytest.raises(ConfigError, match=r"SSL_CERT_FILE=.*no-such-bundle\.pem.*unset it"):
        OpenAICompatibleModel(base_url="https://llm.test/v1", model="m")


def test_model_client_is_the_one_handed_in_else_owned() -> None:
    import httpx

    from supercontext_lab._http import model_client

    given = httpx.Client()
    try:
        assert model_client(given, None) == (given, False)
    finally:
        given.close()
    transport = httpx.MockTransport(lambda request: httpx.Response(204))
    over_transport, owned = model_client(None, transport)
    with over_transport:
        assert owned and over_transport.get("http://127.0.0.1:9/").status_code == 204
    verifying, owned = model_client(None, None)
    with verifying:
        assert owned
