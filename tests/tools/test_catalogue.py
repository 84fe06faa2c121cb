"""The scout's tool registry and its read-only tools."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from supercontext_lab.agents.known_tools import READ_ONLY_TOOLS
from supercontext_lab.errors import ToolError
from supercontext_lab.sources.confined import MAX_DATA_BYTES
from supercontext_lab.sources.flavour import FLAVOUR_FACETS, normalise_facet
from supercontext_lab.sources.skills import RegistryEntry, rank_registry
from supercontext_lab.sources.web_search import WebResult
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import SAMPLE_REGISTRY as REGISTRY
from supercontext_lab.testing import build_workspace, write_file
from supercontext_lab.tools import Tool, ToolRegistry, ToolResult, build_scout_registry, make_tool
from supercontext_lab.tools.base import clean_json_schema


def write(root: Path, rel: str, text: str) -> None:
    write_file(root / rel, text)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = build_workspace(
        tmp_path / "ws",
        {
            "flavour/communication.md": "Short and direct.\n",
            "flavour/coding-style.md": "Type hints everywhere.\n",
            "flavour/anti_preferences.md": "No emoji.\n",
            "skills/figure-polish/SKILL.md": (
                "---\nname: Figure Polisher (local)\ndescription: Polishes figures.\n"
                "tags: [figures]\n---\nSteps.\n"
            ),
            "registry.json": json.dumps(REGISTRY),
            "memory/global/grant-deadline.md": (
                "---\ncategory: deadline\n---\nThe grant renewal is due on 12 December.\n"
            ),
            "memory/global/bike.md": "Replace the brake pads on the bike.\n",
            "memory/skill-figure-polish/palette.md": (
                "---\ncategory: preference\n---\nUse the Okabe-Ito palette for grant figures.\n"
            ),
            "files/notes.md": "0123456789",
            "files/sub/deep.txt": "deep\n",
        },
    )
    return Workspace(root)


@pytest.fixture
def registry(ws: Workspace) -> ToolRegistry:
    return build_scout_registry(ws, allow_private_addresses=False, web_timeout=5)


def ok_json(result: ToolResult) -> Any:
    assert result.ok, result.content
    data = json.loads(result.content)
    assert data == result.data
    return data


# ---------------------------------------------------------------------- the registry


def test_scout_registry_is_exactly_the_read_only_tools(registry: ToolRegistry) -> None:
    assert set(registry.names()) == READ_ONLY_TOOLS
    assert len(registry) == len(READ_ONLY_TOOLS)
    assert all(tool.read_only for tool in registry)


def test_specs_are_clean_openai_schemas(registry: ToolRegistry) -> None:
    specs = registry.specs(sorted(READ_ONLY_TOOLS))
    assert [spec.name for spec in specs] == sorted(READ_ONLY_TOOLS)
    for spec in specs:
        assert spec.description.strip()
        params = spec.parameters
        assert params["type"] == "object"
        assert isinstance(params["properties"], dict)
        assert isinstance(params["required"], list)
        assert params["additionalProperties"] is False
        assert '"title"' not in json.dumps(params)
        assert "$ref" not in json.dumps(params)
    recall = registry.specs(["memory_recall"])[0].parameters
    assert recall["required"] == ["query"]
    assert recall["properties"]["namespace"]["default"] == "global"
    assert registry.specs(["list_workflows"])[0].parameters["properties"] == {}


def test_specs_of_an_unknown_tool_fail(registry: ToolRegistry) -> None:
    with pytest.raises(ToolError, match="unknown tool 'shell'"):
        registry.specs(["memory_recall", "shell"])


def test_clean_json_schema_inlines_refs_and_keeps_a_title_property() -> None:
    class Inner(BaseModel):
        title: str

    class Outer(BaseModel):
        model_config = ConfigDict(title="Ignored")
        inner: Inner
        title: str = "x"

    schema = clean_json_schema(Outer.model_json_schema())
    assert schema == {
        "type": "object",
        "properties": {
            "inner": {
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            },
            "title": {"type": "string", "default": "x"},
        },
        "required": ["inner"],
    }


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("shell", "{}", "unknown tool 'shell'"),
        ("memory_recall", "{not json", "invalid arguments for tool 'memory_recall': not valid JSON"),
        ("memory_recall", "[1, 2]", "invalid arguments for tool 'memory_recall': expected a JSON object, got an array"),
        ("memory_recall", '"text"', "invalid arguments for tool 'memory_recall': expected a JSON object, got a string"),
        ("memory_recall", "null", "invalid arguments for tool 'memory_recall': expected a JSON object, got null"),
        ("memory_recall", "{}", "invalid arguments for tool 'memory_recall': query: Field required"),
        ("memory_recall", '{"query": "x", "limit": "many"}', "invalid arguments for tool 'memory_recall': limit: Input should be a valid integer"),
        ("memory_recall", '{"query": "x", "limit": 0}', "invalid arguments for tool 'memory_recall': limit: Input should be greater than or equal to 1"),
        ("memory_recall", '{"query": 5}', "invalid arguments for tool 'memory_recall': query: Input should be a valid string"),
        ("memory_recall", '{"query": "x", "mode": "write"}', "invalid arguments for tool 'memory_recall': mode: unexpected argument"),
        ("memory_flavour", {"flavour": ["a"]}, "invalid arguments for tool 'memory_flavour': flavour: Input should be a valid string"),
        ("list_workflows", '{"all": true}', "invalid arguments for tool 'list_workflows': all: unexpected argument"),
        ("skill_registry_search", '{"query": ""}', "invalid arguments for tool 'skill_registry_search': query: String should have at least 1 character"),
        ("skill_registry_browse", '{"category": 3}', "invalid arguments for tool 'skill_registry_browse': category: Input should be a valid string"),
        ("workspace_read_file", '{"path": "a", "max_chars": -1}', "invalid arguments for tool 'workspace_read_file': max_chars: Input should be greater than or equal to 1"),
        ("web_fetch", '{"url": 12}', "invalid arguments for tool 'web_fetch': url: Input should be a valid string"),
        ("web_search_tool", '{"q": "x"}', "invalid arguments for tool 'web_search_tool': query: Field required; q: unexpected argument"),
    ],
)  # fmt: skip
def test_bad_calls_are_answered_not_raised(
    registry: ToolRegistry, name: str, arguments: Any, message: str
) -> None:
    result = registry.call(name, arguments)
    assert not result.ok
    assert result.content.startswith(message), result.content
    assert "\n" not in result.content


@pytest.mark.parametrize("arguments", ["", "  ", "{}", {}])
def test_empty_arguments_mean_no_arguments(registry: ToolRegistry, arguments: Any) -> None:
    assert (
        ok_json(registry.call("list_workflows", arguments))["skills"][0]["dir_name"]
        == "figure-polish"
    )


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


def test_handler_failures_become_results() -> None:
    def boom(args: EchoArgs) -> ToolResult:
        raise RuntimeError(f"cannot echo {args.text}\nsecond line")

    def wrong(args: EchoArgs) -> ToolResult:
        return "not a result"  # type: ignore[return-value]

    registry = ToolRegistry(
        [make_tool("boom", "Fails.", EchoArgs, boom), make_tool("wrong", "Bad.", EchoArgs, wrong)]
    )
    result = registry.call("boom", {"text": "hi"})
    assert result == ToolResult(
        False, "tool 'boom' failed: RuntimeError: cannot echo hi second line"
    )
    assert registry.call("wrong", '{"text": "x"}').content == (
        "tool 'wrong' failed: it returned str, not a ToolResult"
    )


def test_registry_lookup_and_duplicates() -> None:
    tool = make_tool("echo", "Echo.", EchoArgs, lambda a: ToolResult.success({"text": a.text}))
    registry = ToolRegistry([tool])
    assert registry.get("echo") is tool
    assert registry.get("nope") is None
    assert "echo" in registry
    assert isinstance(tool, Tool)
    assert tool.spec().parameters == tool.parameters
    assert registry.call("echo", '{"text": "é"}') == ToolResult(True, '{"text":"é"}', {"text": "é"})
    with pytest.raises(ValueError, match="registered twice"):
        ToolRegistry([tool, tool])


# ---------------------------------------------------------------------- memory


def test_memory_recall_searches_one_namespace(registry: ToolRegistry) -> None:
    data = ok_json(registry.call("memory_recall", {"query": "grant renewal"}))
    assert data["namespace"] == "global"
    assert data["query"] == "grant renewal"
    assert [hit["key"] for hit in data["hits"]] == ["grant-deadline"]
    hit = data["hits"][0]
    assert set(hit) == {"namespace", "key", "category", "content", "score"}
    assert hit["category"] == "deadline"
    assert hit["content"] == "The grant renewal is due on 12 December."
    assert hit["score"] == round(hit["score"], 3)


def test_memory_recall_star_searches_every_namespace(registry: ToolRegistry) -> None:
    data = ok_json(registry.call("memory_recall", {"namespace": "*", "query": "grant"}))
    assert {(h["namespace"], h["key"]) for h in data["hits"]} == {
        ("global", "grant-deadline"),
        ("skill-figure-polish", "palette"),
    }


def test_memory_recall_without_hits_says_so(registry: ToolRegistry) -> None:
    data = ok_json(registry.call("memory_recall", {"query": "sourdough"}))
    assert data["hits"] == []
    assert "namespace '*'" in data["note"]


def test_memory_recall_caps_the_limit(registry: ToolRegistry, ws: Workspace) -> None:
    for i in range(12):
        write(ws.root, f"memory/global/pad-{i}.md", f"brake pad note {i}\n")
    data = ok_json(registry.call("memory_recall", {"query": "brake pad", "limit": 50}))
    assert len(data["hits"]) == 8


# ---------------------------------------------------------------------- flavour


@pytest.mark.parametrize(
    ("name", "facet"),
    [
        *[(facet, facet) for facet in FLAVOUR_FACETS],
        ("comms", "communication"), ("communication_style", "communication"),
        ("tone", "communication"), ("Communication Style", "communication"),
        ("coding", "coding_style"), ("code_style", "coding_style"), ("style", "coding_style"),
        ("coding-style", "coding_style"), ("CODING STYLE", "coding_style"),
        ("tech", "stack"), ("tech_stack", "stack"), ("tools", "stack"), ("Tech-Stack", "stack"),
        ("process", "workflow"), ("work", "workflow"),
        ("env", "environment"), ("setup", "environment"), ("machine", "environment"),
        ("rules", "directives"), ("instructions", "directives"),
        ("dislikes", "anti_preferences"), ("avoid", "anti_preferences"),
        ("anti", "anti_preferences"), ("donts", "anti_preferences"),
        ("don'ts", "anti_preferences"), ("anti-preferences", "anti_preferences"),
        ("  Anti Preferences ", "anti_preferences"),
        ("mood", None), ("", None), ("coding_styles", None),
    ],
)  # fmt: skip
def test_normalise_facet(name: str, facet: str | None) -> None:
    assert normalise_facet(name) == facet


@pytest.mark.parametrize(
    ("flavour", "facet", "content"),
    [
        ("tone", "communication", "Short and direct."),
        ("code_style", "coding_style", "Type hints everywhere."),
        ("avoid", "anti_preferences", "No emoji."),
    ],
)
def test_memory_flavour_reads_a_facet(
    registry: ToolRegistry, flavour: str, facet: str, content: str
) -> None:
    assert ok_json(registry.call("memory_flavour", {"flavour": flavour})) == {
        "facet": facet,
        "content": content,
    }


def test_memory_flavour_facet_without_file(registry: ToolRegistry) -> None:
    data = ok_json(registry.call("memory_flavour", {"flavour": "stack"}))
    assert data == {
        "facet": "stack",
        "content": "",
        "note": "no flavour/stack.md in this workspace",
    }


def test_memory_flavour_unknown_facet_lists_the_valid_ones(registry: ToolRegistry) -> None:
    result = registry.call("memory_flavour", '{"flavour": "mood"}')
    assert not result.ok
    assert result.content == (
        "memory_flavour: unknown facet 'mood'; valid facets: communication, coding_style, "
        "stack, workflow, environment, directives, anti_preferences"
    )


# ---------------------------------------------------------------------- skills


def test_list_workflows(registry: ToolRegistry) -> None:
    assert ok_json(registry.call("list_workflows", "{}")) == {
        "skills": [
            {
                "dir_name": "figure-polish",
                "name": "Figure Polisher (local)",
                "description": "Polishes figures.",
                "tags": ["figures"],
            }
        ]
    }


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ("polish my figures for the journal", ["figure-polish", "citation-formatter"]),
        ("journal", ["figure-polish", "citation-formatter"]),
        ("format the references", ["citation-formatter"]),
        ("Email replies", ["inbox-triage"]),
        ("grant budget rules", ["grant-budget-check"]),
        ("writing", ["citation-formatter", "figure-polish"]),
        ("the and of", []),
        ("sourdough", []),
    ],
)
def test_registry_search_ranks_by_word_overlap(
    registry: ToolRegistry, query: str, ids: list[str]
) -> None:
    data = ok_json(registry.call("skill_registry_search", {"query": query}))
    assert data["query"] == query
    assert [r["id"] for r in data["results"]] == ids


def test_registry_search_marks_installed_and_limits(registry: ToolRegistry) -> None:
    data = ok_json(registry.call("skill_registry_search", {"query": "journal", "limit": 1}))
    assert data["results"] == [
        {
            "id": "figure-polish",
            "name": "Journal Figure Polisher",
            "description": "Restyles matplotlib figures to journal style and exports PDF.",
            "tags": ["figures", "matplotlib"],
            "category": "writing",
            "installed": True,
            "score": 1,
        }
    ]
    other = ok_json(registry.call("skill_registry_search", {"query": "citations"}))
    assert other["results"][0]["installed"] is False


def test_rank_registry_is_whole_words() -> None:
    entries = [
        RegistryEntry("a", "Drivers", "", (), "", ""),
        RegistryEntry("b", "Drive sync", "", (), "", ""),
    ]
    assert [(e.id, s) for e, s in rank_registry(entries, "drive", 5)] == [("b", 1)]


def test_registry_browse(registry: ToolRegistry) -> None:
    data = ok_json(registry.call("skill_registry_browse", {}))
    assert [r["id"] for r in data["results"]] == [e["id"] for e in REGISTRY]
    assert data["categories"] == ["productivity", "research", "writing"]
    assert data["category"] is None
    writing = ok_json(registry.call("skill_registry_browse", {"category": "Writing"}))
    assert [r["id"] for r in writing["results"]] == ["figure-polish", "citation-formatter"]
    assert [r["installed"] for r in writing["results"]] == [True, False]
    assert ok_json(registry.call("skill_registry_browse", {"category": "none"}))["results"] == []


# ---------------------------------------------------------------------- remote registry


@pytest.fixture
def registry_server() -> Iterator[tuple[str, dict[str, tuple[int, bytes]]]]:
    pages: dict[str, tuple[int, bytes]] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = pages.get(self.path, (404, b"missing"))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", pages
    finally:
        server.shutdown()
        server.server_close()


def test_remote_registry_is_merged_once(
    ws: Workspace, registry_server: tuple[str, dict[str, tuple[int, bytes]]]
) -> None:
    base, pages = registry_server
    remote = [
        {"id": "lab-notebook", "name": "Lab Notebook", "description": "Journal entries", "category": "research"},
        {"id": "inbox-triage", "name": "Remote duplicate", "tags": ["email"]},
    ]  # fmt: skip
    pages["/registry.json"] = (200, json.dumps(remote).encode())
    registry = build_scout_registry(
        ws, registry_url=f"{base}/registry.json", allow_private_addresses=True
    )
    data = ok_json(registry.call("skill_registry_browse", {}))
    ids = [r["id"] for r in data["results"]]
    assert ids == [*(e["id"] for e in REGISTRY), "lab-notebook"]
    assert next(r for r in data["results"] if r["id"] == "inbox-triage")["name"] == "Inbox Triage"
    pages["/registry.json"] = (500, b"down")
    search = ok_json(registry.call("skill_registry_search", {"query": "journal entries"}))
    assert search["results"][0]["id"] == "lab-notebook"


def test_empty_registry_url_means_no_remote_registry(ws: Workspace) -> None:
    registry = build_scout_registry(ws, registry_url="")
    data = ok_json(registry.call("skill_registry_browse", {}))
    assert [r["id"] for r in data["results"]] == [e["id"] for e in REGISTRY]


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (500, b"[]", "cannot be reached"),
        (200, b"<html>", "did not answer JSON"),
        (200, b'[{"id": "x"}]', "entry 0: name: Field required"),
        (200, b'{"skills": []}', "must hold a JSON list"),
        # Read like registry.json in a workspace: bounded, never held whole.
        (200, b"[" + b" " * MAX_DATA_BYTES + b"]", f"larger than {MAX_DATA_BYTES:,} bytes"),
    ],
)
def test_remote_registry_errors_are_tool_errors(
    ws: Workspace,
    registry_server: tuple[str, dict[str, tuple[int, bytes]]],
    status: int,
    body: bytes,
    message: str,
) -> None:
    base, pages = registry_server
    pages["/registry.json"] = (status, body)
    registry = build_scout_registry(
        ws, registry_url=f"{base}/registry.json", allow_private_addresses=True
    )
    result = registry.call("skill_registry_search", {"query": "x"})
    assert not result.ok
    assert result.content.startswith("tool 'skill_registry_search' failed: ")
    assert message in result.content


# ---------------------------------------------------------------------- files and web


def test_workspace_file_tools(registry: ToolRegistry) -> None:
    assert ok_json(registry.call("workspace_list_files", {})) == {
        "files": ["notes.md", "sub/deep.txt"],
        "count": 2,
    }
    assert ok_json(registry.call("workspace_read_file", {"path": "notes.md"})) == {
        "path": "notes.md",
        "content": "0123456789",
        "truncated": False,
    }
    cut = ok_json(registry.call("workspace_read_file", {"path": "notes.md", "max_chars": 4}))
    assert cut == {"path": "notes.md", "content": "0123", "truncated": True}
    exact = ok_json(registry.call("workspace_read_file", {"path": "notes.md", "max_chars": 10}))
    assert exact["truncated"] is False


@pytest.mark.parametrize(
    ("path", "message"),
    [("../registry.json", "leaves files/"), ("/etc/passwd", "absolute path")],
)
def test_workspace_read_file_refuses_escapes(
    registry: ToolRegistry, path: str, message: str
) -> None:
    result = registry.call("workspace_read_file", {"path": path})
    assert not result.ok
    assert result.content.startswith("tool 'workspace_read_file' failed: ")
    assert message in result.content


def test_web_tools_in_the_registry(ws: Workspace) -> None:
    plain = build_scout_registry(ws, allow_private_addresses=False, web_timeout=5)
    search = plain.call("web_search_tool", {"query": "x"})
    assert not search.ok
    assert search.content.startswith("web search is not configured")
    fetch = plain.call("web_fetch", {"url": "http://127.0.0.1:9/"})
    assert not fetch.ok
    assert "loopback" in fetch.content

    class Provider:
        def search(self, query: str, limit: int) -> list[WebResult]:
            return [WebResult("T", "https://example.org", "S")][:limit]

    configured = build_scout_registry(ws, web_search=Provider())
    data = ok_json(configured.call("web_search_tool", {"query": "x", "limit": 1}))
    assert data["results"] == [{"title": "T", "url": "https://example.org", "snippet": "S"}]
