"""``memory_recall`` with semantic recall: off by default; when ``[memory] semantic`` names
an embedder, BM25's hits with the units closest in meaning beside them (``by_meaning``);
BM25 alone, said in the note, when the embedder fails."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.config import set_setting
from supercontext_lab.routes import ModelRoute, set_model_route
from supercontext_lab.sources.memory.embedder import MAX_QUERY_CHARS
from supercontext_lab.sources.memory.vectors import VECTORS_FILE
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import OpenAITestServer, ScriptedResponse, build_workspace
from supercontext_lab.tools.context import ToolContext
from supercontext_lab.tools.memory import MemoryRecallArgs, memory_recall

NOTES = {
    "memory/global/clinic.md": "The doctor moved my check-up to 9 March.\n",
    "memory/global/garage.md": "The car goes to the garage on Friday; the doctor said walk.\n",
    "memory/global/bread.md": "Feed the sourdough starter at 8am.\n",
}


class Fixed:
    """An embedder that finds the clinic note closest to every query."""

    identity = "fixed:1"
    dimension = 2

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        # The queries here are short; of the notes only the clinic's is near them.
        return [[1.0, 0.0] if "check-up" in t or len(t.split()) < 4 else [0.0, 1.0] for t in texts]


class Spy(Fixed):
    """:class:`Fixed`, keeping the texts it was last asked to embed."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen = list(texts)
        return super().embed(texts)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(build_workspace(tmp_path / "ws", NOTES))


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as running:
        yield running


def _recall(context: ToolContext, query: str = "doctor", request: str = "") -> dict[str, Any]:
    args = MemoryRecallArgs(namespace="*", query=query, request=request)
    result = memory_recall(context, args)
    assert result.ok
    payload: dict[str, Any] = result.data
    return payload


def _keys(payload: dict[str, Any], part: str = "hits") -> list[str]:
    return [hit["key"] for hit in payload[part]]


def _configure(server: OpenAITestServer) -> None:
    set_setting("memory.semantic", "openai")
    set_model_route("embeddings", ModelRoute(kind="openai", base_url=server.base_url, model="e"))


def test_recall_is_bm25_alone_by_default(workspace: Workspace) -> None:
    payload = _recall(ToolContext(workspace))
    assert _keys(payload) == ["clinic", "garage"]
    assert "note" not in payload
    assert not (workspace.root / ".supercontext" / VECTORS_FILE).exists()


def test_a_given_embedder_adds_the_units_closest_in_meaning(workspace: Workspace) -> None:
    embedder = Fixed()
    payload = _recall(ToolContext(workspace, embedder=embedder), "doctor walk")
    assert _keys(payload) == ["garage", "clinic"]  # the hits are BM25's, unchanged
    # Only the clinic's unit is near the query; the others are under the floor.
    assert payload["by_meaning"] == [
        {
            "namespace": "global",
            "key": "clinic",
            "category": "note",
            "content": "The doctor moved my check-up to 9 March.",
            "score": 1.0,
        }
    ]
    assert embedder.calls == 2  # the three notes in one batch, then the query


def test_the_request_is_read_by_meaning_and_the_query_by_words(workspace: Workspace) -> None:
    embedder = Spy()
    context = ToolContext(workspace, embedder=embedder)
    payload = _recall(context, "sourdough", request="When is my annual medical appointment?")
    assert _keys(payload) == ["bread"]
    assert embedder.seen == ["When is my annual medical appointment?"]
    # The stand-in puts a long text beside the long notes, away from the clinic's.
    assert sorted(_keys(payload, "by_meaning")) == ["bread", "garage"]


def test_the_configured_endpoint_embeds_notes_and_query(
    workspace: Workspace, server: OpenAITestServer
) -> None:
    _configure(server)
    payload = _recall(ToolContext(workspace))
    assert "note" not in payload and "clinic" in _keys(payload)
    inputs = [request.json["input"] for request in server.requests]
    assert inputs[-1] == ["doctor"]
    assert sorted(inputs[0]) == sorted(text.strip() for text in NOTES.values())
    assert (workspace.root / ".supercontext" / VECTORS_FILE).is_file()
    # A second run embeds only its query.
    _recall(ToolContext(workspace), "starter")
    assert [request.json["input"] for request in server.requests[2:]] == [["starter"]]


def test_a_failing_endpoint_leaves_bm25_and_is_asked_once_per_run(
    workspace: Workspace, server: OpenAITestServer
) -> None:
    _configure(server)
    server.enqueue(ScriptedResponse.error(400, "model not found"))
    context = ToolContext(workspace)
    first = _recall(context)
    assert _keys(first) == ["clinic", "garage"]
    assert first["note"].startswith("semantic recall failed, BM25 only:")
    assert "HTTP 400" in first["note"]
    second = _recall(context)
    assert second["note"] == first["note"]
    assert len(server.requests) == 1


def test_a_broken_setting_is_said_and_recall_goes_on(workspace: Workspace) -> None:
    set_setting("memory.semantic", "bm42")
    payload = _recall(ToolContext(workspace))
    assert _keys(payload) == ["clinic", "garage"]
    assert payload["note"].startswith("semantic recall is off for this run:")
    assert "'bm42' is not a choice" in payload["note"]


def test_embedder_none_is_bm25_whatever_the_setting(
    workspace: Workspace, server: OpenAITestServer
) -> None:
    _configure(server)
    assert _keys(_recall(ToolContext(workspace, embedder=None))) == ["clinic", "garage"]
    assert server.requests == []


def test_the_hashed_vectors_rank_shared_words_first(
    workspace: Workspace, server: OpenAITestServer
) -> None:
    _configure(server)
    payload = _recall(ToolContext(workspace), "sourdough starter")
    assert _keys(payload)[0] == "bread"
    assert _keys(payload, "by_meaning")[0] == "bread"


def test_a_huge_request_is_read_by_meaning_only_as_far_as_a_query_goes(
    workspace: Workspace,
) -> None:
    embedder = Spy()
    request = "When is the check-up? " * 50_000  # about a megabyte
    payload = _recall(ToolContext(workspace, embedder=embedder), "doctor", request=request)
    assert [len(text) for text in embedder.seen] == [MAX_QUERY_CHARS]
    assert _keys(payload, "by_meaning") == ["clinic"]


def test_two_units_of_one_note_are_each_quoted_by_meaning(tmp_path: Path) -> None:
    note = "The annual check-up is on 9 March.\n\nBring the blood test form.\n\nDentist: Monday.\n"
    workspace = Workspace(build_workspace(tmp_path / "two", {"memory/global/health.md": note}))
    payload = _recall(ToolContext(workspace, embedder=Fixed()), "form")
    # The stand-in puts the check-up's unit and the short one near the query, each
    # quoted as itself, best first.
    assert [hit["content"] for hit in payload["by_meaning"]] == [
        "The annual check-up is on 9 March.",
        "Dentist: Monday.",
    ]
