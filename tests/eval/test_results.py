"""The result cache: an unchanged case is reused whole; any change to its inputs reruns it."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from supercontext_lab import CacheError
from supercontext_lab.agents import AgentDefinition, default_agent_definition
from supercontext_lab.config import set_setting
from supercontext_lab.eval import EvalCase, EvalReport, Expectations, Variant, evaluate
from supercontext_lab.eval.keys import (
    case_result_key,
    model_identity,
    package_revision,
    workspace_fingerprint,
)
from supercontext_lab.eval.results import ResultStore
from supercontext_lab.models.cache import ResponseCache
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.routes import ModelRoute, set_model_route
from supercontext_lab.sources.demo import demo_workspace_path
from supercontext_lab.testing import OpenAITestServer, ScriptedResponse, envelope
from supercontext_lab.tools import ToolRegistry

KERNEL = "What did we decide about the dispersal kernel?"
GRANT = "Help me get the grant renewal ready."


@pytest.fixture
def tool_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every tool call any scout makes in this test, by name."""
    calls: list[str] = []
    real = ToolRegistry.call

    def counting(self: ToolRegistry, name: str, arguments: Any) -> Any:
        calls.append(name)
        return real(self, name, arguments)

    monkeypatch.setattr(ToolRegistry, "call", counting)
    return calls


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    """The offline scout model behind an OpenAI-compatible server on 127.0.0.1."""
    with OpenAITestServer(model=OfflineScoutModel()) as served:
        yield served


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A private copy of the demo workspace (its files may be edited)."""
    target = tmp_path / "ws"
    shutil.copytree(demo_workspace_path(), target, ignore=shutil.ignore_patterns(".supercontext"))
    return target


@dataclass
class Setup:
    """One evaluation's inputs; each test changes one of them between two runs."""

    server: OpenAITestServer
    workspace: Path
    store: Path
    cases: list[EvalCase]
    variant: Variant
    repeats: int = 1

    def run(self, **options: Any) -> EvalReport:
        options = {"progress": False, "cache_path": self.store, **options}
        return evaluate(
            self.cases,
            [self.variant],
            workspace=self.workspace,
            repeats=self.repeats,
            **options,
        )


def _route(server: OpenAITestServer, model: str = "scout-a") -> ModelRoute:
    return ModelRoute(kind="openai", base_url=server.base_url, model=model, timeout_s=10.0)


@pytest.fixture
def setup(server: OpenAITestServer, workspace: Path, tmp_path: Path) -> Setup:
    cases = [
        EvalCase("kernel", KERNEL, expect=Expectations(mentions=("2Dt",))),
        EvalCase("grant", GRANT, expect=Expectations(has_goal=True)),
    ]
    variant = Variant("v", default_agent_definition(), route=_route(server))
    return Setup(server, workspace, tmp_path / "cache.sqlite3", cases, variant)


@pytest.mark.parametrize("executor", ["sequential", "local"])
def test_a_rerun_makes_no_model_and_no_tool_calls(
    setup: Setup, tool_calls: list[str], executor: str
) -> None:
    first = setup.run(executor=executor)
    requests, tools = len(setup.server.requests), len(tool_calls)
    assert requests == sum(r.model_calls for r in first.results) > 0
    assert tools > 0
    assert not any(r.from_cache for r in first.results)

    second = setup.run(executor=executor)
    assert len(setup.server.requests) == requests
    assert len(tool_calls) == tools
    assert all(r.from_cache for r in second.results)
    assert second.reused_runs == len(second.results) == 2
    assert second.cache_misses == 0
    assert second.cache_hits == sum(r.model_calls for r in first.results)
    for old, new in zip(first.results, second.results, strict=True):
        # The stored run, latencies included, with only the cache provenance changed.
        assert (
            dataclasses.replace(
                new, from_cache=False, cache_hits=old.cache_hits, cache_misses=old.cache_misses
            )
            == old
        )
        assert new.to_dict()["from_cache"] is True
    assert second.to_text() == first.to_text()
    assert "0 ran the scout, 2 reused from the cache" in second.footer()
    assert "model replies: 0 from the model" in second.footer()
    assert "2 ran the scout, 0 reused from the cache" in first.footer()


def _definition(setup: Setup) -> None:
    changed = default_agent_definition().model_copy(update={"temperature": 0.9})
    setup.variant = replace(setup.variant, definition=changed)


def _prompt(setup: Setup) -> None:
    definition = setup.variant.definition
    changed = definition.with_prompt(definition.prompt + "\nBe brief.")
    setup.variant = replace(setup.variant, definition=changed)


def _memory_file(setup: Setup) -> None:
    path = next((setup.workspace / "memory" / "global").glob("*.md"))
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")


def _touched_file(setup: Setup) -> None:
    path = setup.workspace / "PROFILE.md"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def _new_file(setup: Setup) -> None:
    (setup.workspace / "files" / "notes" / "new.md").write_text("A new note.\n", "utf-8")


def _route_model(setup: Setup) -> None:
    setup.variant = replace(setup.variant, route=_route(setup.server, model="scout-b"))


def _route_stream(setup: Setup) -> None:
    route = setup.variant.route
    assert route is not None
    setup.variant = replace(setup.variant, route=route.model_copy(update={"stream": True}))


def _route_format(bundle_format: str) -> Callable[[Setup], None]:
    def change(setup: Setup) -> None:
        route = setup.variant.route
        assert route is not None
        changed = route.model_copy(update={"bundle_format": bundle_format})
        setup.variant = replace(setup.variant, route=changed)

    change.__name__ = f"_route_{bundle_format}"
    return change


def _semantic_recall(setup: Setup) -> None:
    # Recall by meaning changes what the scout reads: a result stored without it is not
    # one with it.
    set_setting("memory.semantic", "openai")
    route = ModelRoute(kind="openai", base_url=setup.server.base_url, model="e")
    set_model_route("embeddings", route)


def _message(setup: Setup) -> None:
    setup.cases = [replace(setup.cases[0], message=KERNEL + " Again?"), setup.cases[1]]


def _focus(setup: Setup) -> None:
    setup.cases = [replace(setup.cases[0], focus="grant Section 3.2"), setup.cases[1]]


@pytest.mark.parametrize(
    ("change", "reran"),
    [
        (_definition, {"kernel", "grant"}),
        (_prompt, {"kernel", "grant"}),
        (_memory_file, {"kernel", "grant"}),
        (_touched_file, {"kernel", "grant"}),
        (_new_file, {"kernel", "grant"}),
        (_route_model, {"kernel", "grant"}),
        (_route_stream, {"kernel", "grant"}),
        (_route_format("grammar"), {"kernel", "grant"}),
        (_route_format("json_schema"), {"kernel", "grant"}),
        (_semantic_recall, {"kernel", "grant"}),
        (_message, {"kernel"}),
        (_focus, {"kernel"}),
    ],
)
def test_a_changed_input_reruns_the_cases_it_affects(
    setup: Setup, tool_calls: list[str], change: Callable[[Setup], None], reran: set[str]
) -> None:
    first = setup.run()
    tools = len(tool_calls)
    change(setup)
    second = setup.run()
    assert {r.id for r in second.results if not r.from_cache} == reran
    # The scout really ran again (its model replies may still come from the response
    # cache when the change does not reach the prompt, as a file's time does not).
    rerun_tools = sum(r.trace_summary["tool_calls"] for r in first.results if r.id in reran)
    assert len(tool_calls) - tools == rerun_tools > 0


def test_runs_in_other_bundle_formats_ask_the_model_again(setup: Setup) -> None:
    setup.run()
    for bundle_format in ("json_schema", "grammar"):
        asked = len(setup.server.requests)
        _route_format(bundle_format)(setup)
        report = setup.run()
        assert report.reused_runs == 0, bundle_format
        assert len(setup.server.requests) > asked, bundle_format


def _with_every_field_changed(definition: AgentDefinition) -> list[tuple[str, AgentDefinition]]:
    """``definition`` with one field changed, for every field that has a value."""

    def changed(value: Any) -> Any:
        if isinstance(value, bool):
            return not value
        if isinstance(value, int | float):
            return value + 1
        if isinstance(value, str):
            return value + " changed"
        if isinstance(value, list):
            return value[:-1]
        assert isinstance(value, BaseModel), value
        first = next(iter(type(value).model_fields))
        return value.model_copy(update={first: changed(getattr(value, first))})

    return [
        (name, definition.model_copy(update={name: changed(getattr(definition, name))}))
        for name in type(definition).model_fields
        if getattr(definition, name) is not None
    ]


def test_the_definition_fingerprint_covers_every_setting() -> None:
    # Settings agent.toml gains (prefetch, grounding, ...) are covered as they come: the
    # result key holds the fingerprint of every field, whatever its name (the prompt's
    # own case is in the table above).
    definition = default_agent_definition()
    variants = _with_every_field_changed(definition)
    assert len(variants) >= 15
    for name, variant in variants:
        assert variant.fingerprint() != definition.fingerprint(), name


def test_a_model_file_replaced_at_its_path_gets_a_new_identity(tmp_path: Path) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF first weights")
    route = ModelRoute(kind="local", model=str(weights)).model_dump()
    first = model_identity(route)
    assert model_identity(route) == first
    weights.write_bytes(b"GGUF other weights")  # the same size, a new time and content
    os.utime(weights, ns=(1, 2_000_000_000))
    second = model_identity(route)
    assert second != first
    assert second["file"].endswith(hashlib.sha256(b"GGUF other weights").hexdigest())
    assert {key: value for key, value in second.items() if key != "file"} == {
        "kind": "local",
        "base_url": "",
        "model": str(weights),
        "native_tool_calling": True,
        "stream": False,
        "bundle_format": "extractive",
        "small_model": True,
    }


def test_a_new_repeat_is_a_run_of_its_own(setup: Setup) -> None:
    setup.run()
    setup.repeats = 2
    second = setup.run()
    assert [(r.repeat, r.from_cache) for r in second.results] == [
        (0, True),
        (0, True),
        (1, False),
        (1, False),
    ]


def test_edited_expectations_and_ids_are_rescored_without_a_run(setup: Setup) -> None:
    first = setup.run()
    assert first.result("kernel", "v").scores.missed_mentions == ()
    requests = len(setup.server.requests)
    setup.cases = [
        replace(setup.cases[0], id="kernel-renamed", expect=Expectations(mentions=("Lofoten",))),
        replace(setup.cases[1], expect=Expectations(has_goal=False)),
    ]
    second = setup.run()
    assert len(setup.server.requests) == requests
    kernel = second.result("kernel-renamed", "v")
    assert kernel.from_cache and kernel.envelope == first.result("kernel", "v").envelope
    assert kernel.scores.missed_mentions == ("Lofoten",)
    assert second.metrics("v")["mention_rate"] == 0.0
    assert first.metrics("v")["goal_accuracy"] == 1.0
    assert second.metrics("v")["goal_accuracy"] == 0.0


def test_a_rebuilt_memory_index_still_hits(setup: Setup) -> None:
    setup.run()
    shutil.rmtree(setup.workspace / ".supercontext")
    assert all(r.from_cache for r in setup.run().results)


def test_no_cache_neither_reads_nor_writes_results(setup: Setup) -> None:
    setup.run(cache=False)
    assert not setup.store.exists()
    requests = len(setup.server.requests)
    setup.run()
    assert len(setup.server.requests) == 2 * requests
    again = setup.run(cache=False)
    assert not any(r.from_cache for r in again.results)
    assert len(setup.server.requests) == 3 * requests
    assert again.settings["cache_path"] is None


def test_replay_serves_recorded_results_and_raises_on_a_miss(setup: Setup) -> None:
    with pytest.raises(CacheError, match="No recorded response"):
        setup.run(cache="replay")
    setup.run()
    requests = len(setup.server.requests)
    replayed = setup.run(cache="replay")
    assert all(r.from_cache for r in replayed.results)
    assert len(setup.server.requests) == requests
    _prompt(setup)
    with pytest.raises(CacheError, match="No recorded response"):
        setup.run(cache="replay")
    assert len(setup.server.requests) == requests


def test_replay_falls_back_on_recorded_responses(setup: Setup) -> None:
    setup.run()
    with ResultStore(setup.store) as store:
        assert len(store) == 2
        assert store.clear() == 2
    requests = len(setup.server.requests)
    replayed = setup.run(cache="replay")
    assert not any(r.from_cache for r in replayed.results)
    assert replayed.cache_misses == 0 and replayed.cache_hits > 0
    assert len(setup.server.requests) == requests
    with ResultStore(setup.store) as store:
        assert len(store) == 0  # replay never writes


def test_failed_runs_are_not_stored(setup: Setup) -> None:
    setup.cases = setup.cases[:1]
    setup.server.enqueue(ScriptedResponse.error(400, "bad request"))
    first = setup.run()
    assert first.results[0].status == "failed"
    with ResultStore(setup.store) as store:
        assert len(store) == 0
    second = setup.run()
    assert second.results[0].status == "completed" and not second.results[0].from_cache


def test_runs_that_read_the_web_are_not_stored(setup: Setup) -> None:
    setup.cases = setup.cases[:1]
    setup.server.enqueue(
        ScriptedResponse.reply(tool_calls=[("web_fetch", {"url": "http://127.0.0.1:9/x"})]),
        ScriptedResponse.reply(envelope(summary="Nothing found on the web.")),
    )
    first = setup.run()
    assert first.results[0].ok
    assert first.results[0].trace_summary["tool_calls"] == 1
    with ResultStore(setup.store) as store:
        assert len(store) == 0


def test_model_factory_variants_are_not_reused(setup: Setup) -> None:
    setup.variant = Variant("v", default_agent_definition(), model_factory=OfflineScoutModel)
    setup.run()
    with ResultStore(setup.store) as store:
        assert len(store) == 0
    assert not any(r.from_cache for r in setup.run().results)


def test_a_damaged_file_is_named(setup: Setup) -> None:
    setup.store.write_bytes(b"not a database, just text " * 100)
    with pytest.raises(CacheError) as info:
        setup.run()
    assert str(setup.store) in str(info.value) and "delete" in str(info.value)


@pytest.mark.parametrize(
    "stored",
    ["garbage", "[1, 2]", '{"status": "completed"}', '{"status": 5}'],
)
def test_a_damaged_result_is_named(setup: Setup, stored: str) -> None:
    setup.run()
    with sqlite3.connect(setup.store) as conn:
        conn.execute("UPDATE case_results SET result = ?", (stored,))
    conn.close()
    with pytest.raises(CacheError, match="damaged entry") as info:
        setup.run()
    assert str(setup.store) in str(info.value)


def test_a_foreign_results_table_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE case_results(key TEXT PRIMARY KEY, value TEXT)")
    conn.close()
    with pytest.raises(CacheError, match="case_results table has an unexpected layout"):
        ResultStore(path)
    # The response cache owns only its own table of the file.
    with ResponseCache(path) as cache:
        assert len(cache) == 0


def test_each_store_clears_only_its_own_table(setup: Setup) -> None:
    setup.run()
    with ResponseCache(setup.store) as cache, ResultStore(setup.store) as store:
        replies, results = len(cache), len(store)
        assert replies > 0 and results == 2
        assert store.clear() == results
        assert len(cache) == replies
        assert cache.clear() == replies
        assert len(cache) == 0 and len(store) == 0


# --- the key's parts ------------------------------------------------------------------


def test_the_workspace_fingerprint_ignores_the_index_only(workspace: Path) -> None:
    before = workspace_fingerprint(workspace)
    (workspace / ".supercontext").mkdir()
    (workspace / ".supercontext" / "index.sqlite3").write_bytes(b"x")
    assert workspace_fingerprint(workspace) == before
    renamed = workspace.with_name("other")
    workspace.rename(renamed)
    assert workspace_fingerprint(renamed) != before  # the folder's name is in the prompt


def test_the_model_identity_never_holds_the_key_variable() -> None:
    route = ModelRoute(
        kind="openai",
        base_url="http://user:secret@127.0.0.1:8000/v1",
        model="m",
        api_key_env="MY_KEY",
        timeout_s=3.0,
    )
    identity = model_identity(route.model_dump())
    assert identity == {
        "kind": "openai",
        "base_url": "http://127.0.0.1:8000/v1",
        "model": "m",
        "native_tool_calling": True,
        "stream": False,
        "bundle_format": "text",
        "small_model": False,
    }
    assert model_identity(ModelRoute().model_dump()) == {"kind": "offline"}


def test_a_declared_window_is_part_of_the_model_identity() -> None:
    # Another window cuts what the model is sent: another run.
    route = ModelRoute(kind="openai", base_url="http://127.0.0.1:8000/v1", model="m")
    plain = model_identity(route.model_dump())
    assert "context_tokens" not in plain
    sized = model_identity({**route.model_dump(), "context_tokens": 32_768})
    assert sized == {**plain, "context_tokens": 32_768}


BASE_KEY: dict[str, Any] = {
    "definition": "d",
    "model": {"kind": "offline"},
    "message": "m",
    "focus": None,
    "workspace": "w",
    "repeat": 0,
}


@pytest.mark.parametrize(
    ("change", "same"),
    [
        ({}, True),
        ({"definition": "e"}, False),
        ({"model": {"kind": "openai"}}, False),
        ({"message": "m "}, False),
        ({"focus": ""}, False),
        ({"workspace": "x"}, False),
        ({"repeat": 1}, False),
    ],
)
def test_what_the_result_key_depends_on(change: dict[str, Any], same: bool) -> None:
    assert (case_result_key(**{**BASE_KEY, **change}) == case_result_key(**BASE_KEY)) is same


def test_the_package_revision_changes_with_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    key = case_result_key(**BASE_KEY)
    assert len(package_revision()) == 64
    monkeypatch.setattr("supercontext_lab.eval.keys.package_revision", lambda: "edited code")
    assert case_result_key(**BASE_KEY) != key


def test_a_result_quoting_a_past_conversation_is_erased_with_it(tmp_path: Path) -> None:
    """What the run gathered held a turn's key: the result is tagged with its
    conversation, so forgetting it erases the result; another result stays."""
    from supercontext_lab._erasure import conversation_tag
    from supercontext_lab._sqlite import erase_tagged
    from supercontext_lab.conversations.store_file import turn_key

    tag = conversation_tag("vault-chat")
    path = tmp_path / "responses.sqlite3"
    with ResultStore(path) as store:
        store.put("quoting", {"gathered": f'{{"key": "{turn_key(tag, 0)}"}}', "bundle": None})
        store.put("other", {"gathered": "The budget is 40k.", "bundle": None})
        assert erase_tagged(path, [tag]) == 1
        assert store.get("quoting") is None
        assert store.get("other") is not None
