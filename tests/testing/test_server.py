"""The OpenAI-compatible test server, spoken to with a plain HTTP client."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from supercontext_lab.testing import OpenAITestServer, ScriptedModel, ScriptedResponse

CHAT = "/chat/completions"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(model_name="tiny") as running:
        yield running


def test_scripted_answers_come_in_order_and_every_request_is_recorded(
    server: OpenAITestServer,
) -> None:
    server.enqueue(
        ScriptedResponse.reply("first"),
        ScriptedResponse.error(429, "slow down", retry_after=2),
    )
    assert server.pending == 2
    with httpx.Client(base_url=server.base_url) as client:
        first = client.post(CHAT, json=BODY, headers={"X-Trace": "one"})
        second = client.post(CHAT, json=BODY)
        third = client.post(CHAT, json=BODY)
    assert first.status_code == 200
    assert first.json()["choices"][0]["message"]["content"] == "first"
    assert second.status_code == 429
    assert second.headers["Retry-After"] == "2"
    assert second.json()["error"]["message"] == "slow down"
    # Nothing queued and no model: a 500 that says what to do.
    assert third.status_code == 500
    assert "queue one with enqueue()" in third.json()["error"]["message"]
    assert server.pending == 0
    recorded = server.requests
    assert [(r.method, r.path) for r in recorded] == [("POST", "/v1/chat/completions")] * 3
    assert recorded[0].json == BODY
    assert recorded[0].headers["x-trace"] == "one"


def test_a_model_answers_once_the_queue_is_empty() -> None:
    model = ScriptedModel(["from the model"])
    server = OpenAITestServer([ScriptedResponse.reply("scripted")], model=model)
    with server, httpx.Client(base_url=server.base_url) as client:
        texts = [
            client.post(CHAT, json=BODY).json()["choices"][0]["message"]["content"]
            for _ in range(2)
        ]
    assert texts == ["scripted", "from the model"]
    assert model.calls[0].messages[-1].content == "hi"


def test_a_stream_is_server_sent_events_ending_in_done(server: OpenAITestServer) -> None:
    server.enqueue(ScriptedResponse.stream("streamed text"))
    with httpx.Client(base_url=server.base_url) as client:
        response = client.post(CHAT, json={**BODY, "stream": True})
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = [line for line in response.text.splitlines() if line]
    assert events[-1] == "data: [DONE]"
    assert all(event.startswith("data: ") for event in events)
    assert "streamed" in response.text


def test_models_unknown_routes_and_bodies_that_are_not_objects(server: OpenAITestServer) -> None:
    with httpx.Client(base_url=server.base_url) as client:
        models = client.get("/models")
        missing = client.get("/nothing")
        not_object = client.post(CHAT, content=b"[1, 2]")
    assert [m["id"] for m in models.json()["data"]] == ["tiny"]
    assert missing.status_code == 404
    assert "No route for GET /v1/nothing" in missing.json()["error"]["message"]
    assert not_object.status_code == 400
    assert server.pending == 0


def test_embeddings_are_hashed_vectors_unless_a_response_is_scripted(
    server: OpenAITestServer,
) -> None:
    server.enqueue(ScriptedResponse.error(503, "busy"))
    body = {"model": "e", "input": ["grant budget", "Grant budget!", "sourdough"]}
    with httpx.Client(base_url=server.base_url) as client:
        busy = client.post("/embeddings", json=body)
        answer = client.post("/embeddings", json=body).json()
        short = client.post("/embeddings", json={"input": "one text", "dimensions": 8}).json()
    assert busy.status_code == 503
    vectors = [item["embedding"] for item in answer["data"]]
    assert [item["index"] for item in answer["data"]] == [0, 1, 2]
    assert vectors[0] == vectors[1] != vectors[2]
    assert len(vectors[0]) == 64 and answer["model"] == "e"
    assert len(short["data"][0]["embedding"]) == 8 and short["model"] == "tiny"
    assert server.requests[-1].path == "/v1/embeddings"


def test_closing_releases_the_port_and_may_be_repeated() -> None:
    server = OpenAITestServer()
    port = server.port
    server.close()
    server.close()
    assert "closed" in repr(server)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))
