"""Embeddings from an OpenAI-compatible endpoint, against a real server on 127.0.0.1, and
the embedder ``[memory] semantic`` chooses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from supercontext_lab.config import set_setting
from supercontext_lab.errors import ConfigError, ModelError, ModelTimeoutError
from supercontext_lab.models.embeddings import (
    MAX_TEXTS_PER_REQUEST,
    OpenAIEmbeddings,
    configured_embedder,
)
from supercontext_lab.models.minilm import MiniLMEmbeddings
from supercontext_lab.routes import ModelRoute, set_model_route
from supercontext_lab.sources.memory.embedder import Embedder
from supercontext_lab.testing import OpenAITestServer, ScriptedResponse
from supercontext_lab.testing.embeddings import hashed_vector

from .support import CANARY, KEY_ENV


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(model_name="served") as running:
        yield running


def _embedder(server: OpenAITestServer, **options: object) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(
        base_url=server.base_url,
        model="nomic-embed-text",
        sleep=lambda _: None,
        **options,  # type: ignore[arg-type]
    )


def _one(vector: list[float]) -> ScriptedResponse:
    return ScriptedResponse(json={"data": [{"index": 0, "embedding": vector}]})


def test_texts_are_posted_and_their_vectors_read_in_order(server: OpenAITestServer) -> None:
    embedder = _embedder(server)
    assert isinstance(embedder, Embedder)
    assert embedder.dimension is None
    vectors = embedder.embed(["grant budget", "sourdough"])
    assert vectors == [hashed_vector("grant budget"), hashed_vector("sourdough")]
    assert embedder.dimension == 64
    request = server.requests[-1]
    assert (request.method, request.path) == ("POST", "/v1/embeddings")
    assert request.json == {
        "model": "nomic-embed-text",
        "input": ["grant budget", "sourdough"],
        "encoding_format": "float",
    }
    assert "authorization" not in request.headers


def test_dimensions_are_sent_and_items_are_put_back_in_their_order(
    server: OpenAITestServer,
) -> None:
    server.enqueue(
        ScriptedResponse(
            json={
                "data": [{"index": 1, "embedding": [0.0, 1.0]}, {"index": 0, "embedding": [1, 0]}]
            }
        )
    )
    embedder = _embedder(server, dimensions=2)
    assert embedder.embed(["a", "b"]) == [[1, 0], [0.0, 1.0]]
    assert server.requests[-1].json["dimensions"] == 2
    assert embedder.embed(["c"]) == [hashed_vector("c", 2)]


def test_many_texts_go_in_several_requests(server: OpenAITestServer) -> None:
    texts = [f"text {i}" for i in range(MAX_TEXTS_PER_REQUEST + 3)]
    assert len(_embedder(server).embed(texts)) == len(texts)
    assert [len(r.json["input"]) for r in server.requests] == [MAX_TEXTS_PER_REQUEST, 3]


def test_the_key_goes_only_in_the_authorization_header_and_never_in_errors(
    server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, CANARY)
    embedder = _embedder(server, api_key_env=KEY_ENV)
    embedder.embed(["hello"])
    request = server.requests[-1]
    assert request.headers["Authorization"] == f"Bearer {CANARY}"
    assert CANARY not in request.body.decode()
    assert CANARY not in repr(embedder) and CANARY not in embedder.identity
    server.enqueue(ScriptedResponse.error(401, f"bad key {CANARY}"))
    with pytest.raises(ModelError) as raised:
        embedder.embed(["hello"])
    assert CANARY not in str(raised.value)
    assert f"Check the API key in the environment variable {KEY_ENV}" in str(raised.value)
    monkeypatch.delenv(KEY_ENV)
    embedder.embed(["hello"])  # read at call time: unset now, so no header
    assert "authorization" not in server.requests[-1].headers


def test_busy_servers_are_retried_and_bad_requests_are_not(server: OpenAITestServer) -> None:
    server.enqueue(ScriptedResponse.error(503), ScriptedResponse.error(429, retry_after=0))
    assert _embedder(server).embed(["x"]) == [hashed_vector("x")]
    assert len(server.requests) == 3
    server.enqueue(ScriptedResponse.error(400, "no such model"))
    with pytest.raises(ModelError, match="HTTP 400"):
        _embedder(server).embed(["x"])
    assert len(server.requests) == 4
    server.enqueue(*[ScriptedResponse.error(500)] * 3)
    with pytest.raises(ModelError, match="gave up after 3 attempts"):
        _embedder(server).embed(["x"])


def test_a_slow_server_is_a_timeout(server: OpenAITestServer) -> None:
    server.enqueue(ScriptedResponse(json={}, delay_s=2.0))
    with pytest.raises(ModelTimeoutError, match="did not answer within"):
        _embedder(server, timeout_s=0.3, max_retries=0).embed(["x"])


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (ScriptedResponse.garbage(), "not JSON"),
        (ScriptedResponse(json={"data": []}), "no 'data' list of 1 embeddings"),
        (ScriptedResponse(json={"data": [{"index": 3, "embedding": [1.0]}]}), "wrong index"),
        (ScriptedResponse(json={"data": [{"embedding": "1,2"}]}), "without an embedding list"),
        (
            ScriptedResponse(
                json={"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}
            ),
            "no 'data' list of 1",
        ),
    ],
)
def test_unusable_replies_are_model_errors(
    server: OpenAITestServer, response: ScriptedResponse, message: str
) -> None:
    server.enqueue(response)
    with pytest.raises(ModelError, match=message):
        _embedder(server).embed(["x"])


def test_vectors_of_different_lengths_are_refused(server: OpenAITestServer) -> None:
    server.enqueue(
        ScriptedResponse(
            json={"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1, 2]}]}
        )
    )
    with pytest.raises(ModelError, match="different lengths"):
        _embedder(server).embed(["a", "b"])
    server.enqueue(_one([1.0, 2.0, 3.0]))
    with pytest.raises(ModelError, match="expected 2"):
        _embedder(server, dimensions=2).embed(["a"])


def test_identity_names_the_server_without_credentials() -> None:
    embedder = OpenAIEmbeddings(base_url="http://user:secret@127.0.0.1:9/v1", model="m")
    assert embedder.identity == "openai:http://127.0.0.1:9/v1:m:native"
    assert "secret" not in repr(embedder)


@pytest.mark.parametrize(
    "options",
    [
        {"base_url": "ftp://x/v1", "model": "m"},
        {"base_url": "http://x/v1", "model": " "},
        {"base_url": "http://x/v1", "model": "m", "timeout_s": 0},
        {"base_url": "http://x/v1", "model": "m", "max_retries": -1},
        {"base_url": "http://x/v1", "model": "m", "dimensions": 0},
    ],
)
def test_bad_settings_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        OpenAIEmbeddings(**options)  # type: ignore[arg-type]


def test_semantic_recall_is_off_unless_configured() -> None:
    assert configured_embedder() is None
    set_setting("memory.semantic", "off")
    assert configured_embedder() is None


def test_minilm_is_one_embedder_per_process() -> None:
    set_setting("memory.semantic", "minilm")
    first = configured_embedder()
    assert isinstance(first, MiniLMEmbeddings)
    assert configured_embedder() is first


def test_openai_uses_the_embeddings_route(server: OpenAITestServer) -> None:
    set_setting("memory.semantic", "openai")
    set_model_route("embeddings", ModelRoute(kind="openai", base_url=server.base_url, model="emb"))
    embedder = configured_embedder()
    assert isinstance(embedder, OpenAIEmbeddings)
    assert embedder.embed(["x"]) == [hashed_vector("x")]
    assert server.requests[-1].json["model"] == "emb"


def test_a_provider_id_names_its_usual_local_address() -> None:
    set_setting("memory.semantic", "llamacpp:all-minilm")
    embedder = configured_embedder()
    assert isinstance(embedder, OpenAIEmbeddings)
    assert (embedder.base_url, embedder.model) == ("http://localhost:8080/v1", "all-minilm")


@pytest.mark.parametrize(
    ("value", "message"),
    [("bm25", "is not a choice"), ("openai", 'kind = "openai" route'), ("local:x", "kind")],
)
def test_other_values_are_config_errors(value: str, message: str) -> None:
    set_setting("memory.semantic", value)
    with pytest.raises(ConfigError, match=message):
        configured_embedder()
