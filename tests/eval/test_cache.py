"""The response cache: hits and misses, what the key depends on, replay, damage, concurrency."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from supercontext_lab import CacheError
from supercontext_lab._hashing import package_revision
from supercontext_lab.models import local
from supercontext_lab.models.base import Message, ModelReply, ToolCall, ToolSpec, Usage
from supercontext_lab.models.cache import (
    CachedModel,
    ResponseCache,
    cache_key,
    default_cache_path,
    reply_from_json,
    reply_to_json,
)
from supercontext_lab.models.local import (
    LOCAL_CONTEXT_TOKENS,
    LOCAL_RUN_TIMEOUT_S,
    LocalModel,
    LocalServer,
)
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.testing import OpenAITestServer, ScriptedModel, ScriptedResponse

MESSAGES = (Message(role="system", content="be brief"), Message(role="user", content="hi"))
TOOL = ToolSpec("memory_recall", "Search memory.", {"type": "object", "properties": {}})


def _cache(tmp_path: Path) -> ResponseCache:
    return ResponseCache(tmp_path / "responses.sqlite3")


def test_default_path_is_under_the_lab_home(lab_home: Path) -> None:
    assert default_cache_path() == lab_home / "cache" / "responses.sqlite3"
    with ResponseCache() as cache:
        assert cache.path.is_file()
        assert len(cache) == 0


def test_miss_then_hit(tmp_path: Path) -> None:
    inner = ScriptedModel(["hello"])  # one step: a second call to it would fail
    model = CachedModel(inner, cache=_cache(tmp_path))
    first = model.complete(MESSAGES, temperature=0.3)
    second = model.complete(MESSAGES, temperature=0.3)
    assert first.message.content == second.message.content == "hello"
    assert second.usage == first.usage
    assert (model.hits, model.misses, model.writes) == (1, 1, 1)
    assert len(inner.calls) == 1
    assert model.name == "scripted"
    assert model.key_for(MESSAGES, temperature=0.3) in model.cache
    assert model.cache.clear() == 1
    assert len(model.cache) == 0


def test_a_new_cache_object_on_the_same_file_serves_the_entry(tmp_path: Path) -> None:
    CachedModel(ScriptedModel(["stored"]), cache=_cache(tmp_path)).complete(MESSAGES)
    again = CachedModel(ScriptedModel([]), cache=_cache(tmp_path))
    assert again.complete(MESSAGES).message.content == "stored"


def test_on_text_receives_the_cached_text(tmp_path: Path) -> None:
    model = CachedModel(ScriptedModel(["streamed text"]), cache=_cache(tmp_path))
    model.complete(MESSAGES)
    pieces: list[str] = []
    model.complete(MESSAGES, on_text=pieces.append)
    assert pieces == ["streamed text"]


BASE = {
    "model": "openai:m",
    "base_url": "http://127.0.0.1:1/v1",
    "messages": MESSAGES,
    "tools": (TOOL,),
    "tool_choice": None,
    "temperature": 0.3,
    "settings": {"native_tool_calling": True},
}


@pytest.mark.parametrize(
    ("change", "same"),
    [
        ({}, True),
        ({"temperature": 0.7}, False),
        ({"temperature": None}, False),
        ({"tools": ()}, False),
        ({"tools": (ToolSpec("memory_recall", "Search memory!"),)}, False),
        ({"tool_choice": "none"}, False),
        ({"messages": (*MESSAGES, Message(role="user", content="more"))}, False),
        ({"messages": (MESSAGES[0], Message(role="user", content="hi "))}, False),
        ({"model": "openai:other"}, False),
        ({"base_url": "http://127.0.0.1:2/v1"}, False),
        ({"settings": {"native_tool_calling": False}}, False),
        ({"settings": {"native_tool_calling": True, "sample": 1}}, False),
        # Credentials in a URL are never part of the key.
        ({"base_url": "http://user:secret@127.0.0.1:1/v1"}, True),
    ],
)
def test_what_the_key_depends_on(change: dict[str, object], same: bool) -> None:
    assert (cache_key(**{**BASE, **change}) == cache_key(**BASE)) is same  # type: ignore[arg-type]


def test_the_api_key_is_neither_in_the_key_nor_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache(tmp_path)
    with OpenAITestServer([ScriptedResponse.reply("from the server")]) as server:
        monkeypatch.setenv("EVAL_TEST_KEY", "sk-first-secret-1234")
        first = CachedModel(
            OpenAICompatibleModel(base_url=server.base_url, model="m", api_key_env="EVAL_TEST_KEY"),
            cache=cache,
        )
        assert first.complete(MESSAGES, tools=[TOOL]).message.content == "from the server"
        monkeypatch.setenv("EVAL_TEST_KEY", "sk-second-secret-5678")
        second = CachedModel(
            OpenAICompatibleModel(base_url=server.base_url, model="m", api_key_env="EVAL_TEST_KEY"),
            cache=cache,
        )
        assert second.complete(MESSAGES, tools=[TOOL]).message.content == "from the server"
        assert len(server.requests) == 1
        assert second.hits == 1
        assert second.base_url == server.base_url
    cache.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"sk-first-secret" not in stored
    assert b"sk-second-secret" not in stored


def test_replay_serves_recorded_replies_and_names_a_missing_key(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    CachedModel(ScriptedModel(["recorded"]), cache=cache).complete(MESSAGES, temperature=0.3)
    replay = CachedModel(ScriptedModel([]), cache=cache, mode="replay")
    assert replay.complete(MESSAGES, temperature=0.3).message.content == "recorded"
    key = replay.key_for(MESSAGES, temperature=0.9)
    with pytest.raises(CacheError) as info:
        replay.complete(MESSAGES, temperature=0.9)
    assert key in str(info.value)
    assert "readwrite" in str(info.value)
    assert (replay.hits, replay.misses) == (1, 1)


def test_off_never_reads_nor_writes(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    inner = ScriptedModel(["one", "two"])
    model = CachedModel(inner, cache=cache, mode="off")
    assert [model.complete(MESSAGES).message.content for _ in range(2)] == ["one", "two"]
    assert len(cache) == 0
    assert (model.hits, model.misses) == (0, 0)


def test_unknown_mode_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="readwrite, replay, off"):
        CachedModel(ScriptedModel([]), cache=_cache(tmp_path), mode="sometimes")  # type: ignore[arg-type]


def test_samples_are_cached_separately(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    first = CachedModel(ScriptedModel(["sample 0"]), cache=cache, sample=0)
    second = CachedModel(ScriptedModel(["sample 1"]), cache=cache, sample=1)
    assert first.complete(MESSAGES).message.content == "sample 0"
    assert second.complete(MESSAGES).message.content == "sample 1"
    assert len(cache) == 2


def test_in_process_models_are_keyed_on_their_code(tmp_path: Path) -> None:
    model = CachedModel(OfflineScoutModel(), cache=_cache(tmp_path))
    assert model.settings["implementation"].endswith("OfflineScoutModel")
    assert len(model.settings["revision"]) == 16
    assert (
        "revision"
        not in CachedModel(
            OpenAICompatibleModel(base_url="http://127.0.0.1:9/v1", model="m"), cache=model.cache
        ).settings
    )


def test_the_package_s_own_models_are_keyed_on_the_whole_package(tmp_path: Path) -> None:
    # The offline scout is built from helpers outside its folder (the stemmer, the
    # envelope writer): an edit to any of them must retire its cached replies too.
    model = CachedModel(OfflineScoutModel(), cache=_cache(tmp_path))
    assert model.settings["revision"] == package_revision()[:16]


def test_a_constrained_bundle_format_is_part_of_the_key(tmp_path: Path) -> None:
    cache = _cache(tmp_path)

    def cached(bundle_format: str) -> CachedModel:
        inner = OpenAICompatibleModel(
            base_url="http://127.0.0.1:9/v1", model="m", bundle_format=bundle_format
        )
        return CachedModel(inner, cache=cache)

    keys = {fmt: cached(fmt).key_for(MESSAGES) for fmt in ("text", "grammar", "json_schema")}
    assert len(set(keys.values())) == 3
    # Free text, the format every model had before formats existed, keeps its old key.
    assert "bundle_format" not in cached("text").settings


def test_a_local_model_is_keyed_on_its_file_not_its_port(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    keys = set()
    for port in (9, 10):
        inner = LocalModel(
            base_url=f"http://127.0.0.1:{port}/v1", model="m", cache_identity="local:/models/m.gguf"
        )
        keys.add(CachedModel(inner, cache=cache).key_for(MESSAGES))
    assert len(keys) == 1


def test_a_local_model_file_replaced_at_its_path_gets_new_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF first weights")
    idle = LocalServer(weights)  # never started: the keys need only its file
    monkeypatch.setattr(local, "local_server", lambda gguf: idle)
    cache = _cache(tmp_path)

    def key() -> str:
        model = local.local_chat_model(str(weights), timeout_s=5.0)
        return CachedModel(model, cache=cache).key_for(MESSAGES)

    first = key()
    assert key() == first
    weights.write_bytes(b"GGUF other weights")
    os.utime(weights, ns=(1, 2_000_000_000))
    assert key() != first


def test_the_cache_shows_the_run_budget_and_window_the_model_declares(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    local = CachedModel(LocalModel(base_url="http://127.0.0.1:9/v1", model="m"), cache=cache)
    assert local.info.run_timeout_s == LOCAL_RUN_TIMEOUT_S
    assert local.info.context_tokens == LOCAL_CONTEXT_TOKENS
    plain = CachedModel(ScriptedModel([]), cache=cache)
    assert (plain.info.run_timeout_s, plain.info.context_tokens) == (None, None)


def test_a_reply_with_tool_calls_round_trips() -> None:
    reply = ModelReply(
        Message(
            role="assistant",
            content=None,
            tool_calls=(ToolCall("call_1", "memory_recall", '{"query": "2Dt"}'),),
        ),
        Usage(120, 8),
        "tool_calls",
        "offline:scout",
    )
    assert reply_from_json(reply_to_json(reply)) == reply
    with pytest.raises(ValueError, match="not a stored reply"):
        reply_from_json('{"message": {}}')


@pytest.mark.parametrize(
    "damage",
    [
        b"this is not a database at all, just some text" * 100,
        b"SQLite format 3\x00" + b"\x00" * 50,
    ],
)
def test_a_damaged_file_names_itself_and_says_to_delete_it(tmp_path: Path, damage: bytes) -> None:
    path = tmp_path / "responses.sqlite3"
    path.write_bytes(damage)
    with pytest.raises(CacheError) as info:
        ResponseCache(path)
    message = str(info.value)
    assert str(path) in message
    assert "delete" in message


def test_a_foreign_table_layout_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE responses(key TEXT PRIMARY KEY, value TEXT)")
    conn.close()
    with pytest.raises(CacheError, match="unexpected layout"):
        ResponseCache(path)


def test_a_damaged_entry_is_reported(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    model = CachedModel(ScriptedModel(["x"]), cache=cache)
    model.complete(MESSAGES)
    with sqlite3.connect(cache.path) as conn:
        conn.execute("UPDATE responses SET reply = 'garbage'")
    conn.close()
    with pytest.raises(CacheError, match="damaged entry"):
        model.complete(MESSAGES)


def test_a_closed_cache_says_so(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    cache.close()
    cache.close()
    with pytest.raises(CacheError, match="closed"):
        cache.get("k")


def _reply(text: str) -> ModelReply:
    return ModelReply(Message(role="assistant", content=text), Usage(1, 1), "stop", "m")


@pytest.mark.parametrize("shared", [True, False])
def test_threads_share_one_file(tmp_path: Path, shared: bool) -> None:
    path = tmp_path / "responses.sqlite3"
    one = ResponseCache(path)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        cache = one if shared else ResponseCache(path)
        try:
            for item in range(40):
                key = f"{worker}-{item}"
                cache.put(key, _reply(key), model="m", base_url="")
                stored = cache.get(key)
                assert stored is not None and stored.message.content == key
        except BaseException as exc:  # collected: assertions in threads do not fail tests
            errors.append(exc)
        finally:
            if not shared:
                cache.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(one) == 8 * 40


def test_processes_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite3"
    code = textwrap.dedent(
        """
        import sys
        from supercontext_lab.models.base import Message, ModelReply, Usage
        from supercontext_lab.models.cache import ResponseCache
        worker = sys.argv[1]
        with ResponseCache(sys.argv[2]) as cache:
            for item in range(60):
                key = f"{worker}-{item}"
                reply = ModelReply(Message(role="assistant", content=key), Usage(1, 1), "stop")
                cache.put(key, reply, model="m", base_url="")
                assert cache.get(key).message.content == key
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(n), str(path)], stderr=subprocess.PIPE)
        for n in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    with ResponseCache(path) as cache:
        assert len(cache) == 4 * 60
        assert cache.get("3-59") is not None


def test_a_reply_built_from_a_past_conversation_is_erased_with_it(tmp_path: Path) -> None:
    """The request quoted a turn (its key in a tool result): the reply is tagged with its
    conversation and erased when that is forgotten; a reply quoting none stays."""
    from supercontext_lab._erasure import conversation_tag
    from supercontext_lab._sqlite import erase_tagged
    from supercontext_lab.conversations.store_file import turn_key

    tag = conversation_tag("vault-chat")
    quoting = (
        *MESSAGES,
        Message(role="tool", content=f'{{"key": "{turn_key(tag, 1)}", "content": "hunter2"}}'),
    )
    cache = _cache(tmp_path)
    model = CachedModel(ScriptedModel(["The password is hunter2.", "unrelated"]), cache=cache)
    model.complete(quoting)
    model.complete(MESSAGES)
    assert len(cache) == 2
    assert erase_tagged(cache.path, [tag]) == 1
    assert model.key_for(quoting) not in cache
    assert model.key_for(MESSAGES) in cache
