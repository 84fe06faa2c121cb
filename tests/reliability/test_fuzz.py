"""Fuzzing: every parser of untrusted text, fed by hypothesis, raises nothing but its
documented errors, and what it accepts keeps the promises the harness relies on.

The example counts are sized so that the whole reliability suite stays near a minute and
a half; ``count_cases.py`` reads them from the ``@settings`` of each test.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import tomlkit
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from supercontext_lab.agents.definition import (
    AgentDefinition,
    default_agent_toml,
    load_agent_definition,
)
from supercontext_lab.agents.known_tools import KNOWN_TOOLS, READ_ONLY_TOOLS
from supercontext_lab.agents.toml_edit import edit_agent_toml
from supercontext_lab.bundle import (
    CLOSE_TAG,
    OPEN_TAG,
    ContextBundle,
    extract_context_bundle,
    fit_bundle,
    parse_context_bundle,
)
from supercontext_lab.config import config_path, get_setting, get_super_context_enabled
from supercontext_lab.errors import (
    AgentDefinitionError,
    ConfigError,
    ModelError,
    WorkspaceError,
)
from supercontext_lab.gate import SKIP_REASONS, super_context_skip_reason
from supercontext_lab.harness import Thread
from supercontext_lab.models.base import ModelReply
from supercontext_lab.models.sse import StreamAccumulator
from supercontext_lab.models.wire import completion_from_openai, parse_tool_call_blocks
from supercontext_lab.routes import ModelRoute, get_model_route
from supercontext_lab.sources import address_guard
from supercontext_lab.sources import web as fetcher
from supercontext_lab.sources.memory import MAX_RECALL_LIMIT, MemoryHit, MemoryTree
from supercontext_lab.sources.skills import RegistryEntry
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.tools import ToolResult, build_scout_registry, web

from .support import hostile_workspace, write


def fuzz(examples: int) -> settings:
    """``examples`` examples, no per-example deadline (CI machines stall) and no example
    database written into the repository."""
    return settings(max_examples=examples, deadline=None, database=None)


T = TypeVar("T")


def attempt(action: Callable[[], T], *errors: type[Exception]) -> tuple[T | None, Exception | None]:
    """Run ``action``: its result and ``None``, or ``None`` and one of the documented
    ``errors`` it raised (anything else propagates and fails the test)."""
    try:
        return action(), None
    except errors as exc:
        return None, exc


# ---------------------------------------------------------------------- strategies


def assembled(fragments: list[str], *, max_size: int = 40) -> st.SearchStrategy[str]:
    """Text made of grammar fragments and arbitrary text, so inputs are often *almost*
    valid, where parsers break."""
    piece = st.one_of(st.sampled_from(fragments), st.text(max_size=12))
    return st.lists(piece, max_size=max_size).map("".join)


BUNDLE_BITS = [
    OPEN_TAG, CLOSE_TAG, "[Context_Bundle]", "has_enough_context:", "proposed_goal:",
    "summary:", "recommended_tool_calls:", "recommended_skills:", "  - tool:", "    args:",
    "    why:", "  - skill:", "    installed:", "true", "false", "none", "[]", "{", "}",
    '{"path": "files/x.md"}', "```", "```json", "[...truncated]", "\n", "\r\n", "\n    ",
    "\t", " ", "…", "\u2028", "\x00", "<script>", "Missing:",
]  # fmt: skip

TOML_BITS = [
    'id = "context_scout"', "temperature = ", "max_iterations = ", "max_result_chars = ",
    'iteration_policy = "strict"', 'sandbox_mode = "workspace_write"', 'agent_tier = ',
    "[tools]", "named = [", '"shell"', '"memory_recall"', '"memory_tree"', '"web_fetch"',
    "]", "[model]", "hint = ", '"burst"', "[subagents]", "[[tools]]", "=", ",", "\n",
    "1", "-1", "0.5", "3", "1e400", "nan", "inf", "true", '"""', "'''", "#", "[", "{",
    "}", "omit_profile = ", "display_name = ", '"\\u0000"', "2026-01-01T00:00:00Z",
]  # fmt: skip

GATE_BITS = [
    "hi", "Hello", "thanks", "thank you", "good morning", "ok", "create folder",
    "make a directory", "mkdir", "crea una cartella", "nuova cartella", "can you please",
    "per favore", "ciao", "please", "email", "calendar", "github", "drive", "driver",
    "event", "prevent", "remember", "we talked", "!", "?", "...", " ", "\n", "\t", "\u00a0",
    "İ", "ß", "ﬁ",
]  # fmt: skip

FTS_BITS = [
    '"', "*", "NEAR(", ")", "(", "AND", "OR", "NOT", "^", ":", "-", "+", "budget",
    "grant", "travel", "\x00", "'", "%", "_", "\\", "key_terms:", "{", "}", "body_terms",
    "sourdough", "ümlaut", "東京", "🙂",
]  # fmt: skip

FRONT_BITS = [
    "---\n", "...\n", "name: ", "description: ", "tags: [", "]", "- ", '"', "'", "#",
    "\n", "key: ", "category: ", "created: ", "\ufeff", "\r\n", "  ", ": ", "\\n", "\\",
    "budget", "[/context_bundle]",
]  # fmt: skip

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)

registry_like = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "id": st.one_of(st.text(max_size=8), st.integers(), st.none()),
                "name": st.one_of(st.text(max_size=8), st.none()),
            },
            optional={
                "description": json_values,
                "tags": st.one_of(st.lists(st.text(max_size=5), max_size=3), json_values),
                "category": json_values,
                "source": json_values,
                "extra": json_values,
            },
        ),
        json_values,
    ),
    max_size=6,
)

# ---------------------------------------------------------------------- the envelope


@fuzz(600)
@given(assembled(BUNDLE_BITS))
def test_parse_context_bundle_never_raises(text: str) -> None:
    """parse_context_bundle and fit_bundle on near-envelopes."""
    bundle = parse_context_bundle(text)
    extracted = extract_context_bundle(text)
    assert (bundle is None) == (extracted is None)
    if bundle is None:
        return
    assert isinstance(bundle, ContextBundle)
    assert bundle.envelope == extracted
    assert bundle.envelope.count(OPEN_TAG) == bundle.envelope.count(CLOSE_TAG) == 1
    json.dumps(bundle.to_dict())
    assert set(bundle._repr_mimebundle_()) == {"text/plain", "text/markdown"}
    for limit in (200, 777, 5000):
        fitted = fit_bundle(bundle.envelope, limit)
        assert len(fitted) <= limit
        assert extract_context_bundle(fitted) == fitted


# ---------------------------------------------------------------------- agent.toml


def _check_loaded(definition: AgentDefinition) -> None:
    """What any definition that loads guarantees, whatever text it came from."""
    assert 0 <= definition.temperature <= 2
    assert definition.max_iterations >= 1
    assert definition.max_result_chars >= 500
    assert len(set(definition.tools.named)) == len(definition.tools.named)
    assert set(definition.tools.named) <= set(KNOWN_TOOLS)
    if definition.sandbox_mode == "read_only":
        assert set(definition.tools.named) <= READ_ONLY_TOOLS
    if definition.agent_tier == "worker":
        assert definition.subagents is None


@fuzz(400)
@given(assembled(TOML_BITS))
def test_load_agent_definition_from_any_text(text: str) -> None:
    """load_agent_definition on TOML-ish text."""
    definition, error = attempt(lambda: load_agent_definition(text), AgentDefinitionError)
    if definition is None:
        assert str(error).strip()
        return
    _check_loaded(definition)


_KEYS = st.sampled_from(
    [
        "id", "display_name", "when_to_use", "temperature", "max_iterations",
        "iteration_policy", "max_result_chars", "sandbox_mode", "agent_tier",
        "omit_identity", "omit_memory_context", "omit_safety_preamble", "omit_profile",
        "omit_memory_md", "model", "tools", "subagents", "hint", "named", "extra",
    ]
) | st.text(min_size=1, max_size=6)  # fmt: skip
_SCALARS = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats()
    | st.text(max_size=10)
    | st.sampled_from(["context_scout", "read_only", "worker", "extended", "burst"])
    | st.sampled_from(sorted(KNOWN_TOOLS))
)
_TOML_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=10,
)


@fuzz(200)
@given(st.dictionaries(_KEYS, _TOML_VALUES, max_size=8))
def test_load_agent_definition_from_any_table(data: dict[str, Any]) -> None:
    """load_agent_definition on random tables dumped with tomlkit."""
    try:
        text = tomlkit.dumps(data)
    except Exception:  # a value tomlkit itself cannot write is not an agent.toml
        reject()
    try:
        definition = load_agent_definition(text)
    except AgentDefinitionError:
        return
    _check_loaded(definition)


_EDIT_KEYS = [
    "temperature", "max_iterations", "max_result_chars", "iteration_policy", "sandbox_mode",
    "agent_tier", "model.hint", "tools.named", "subagents.named", "omit_profile",
    "unknown_key", "model.extra", "tools",
]  # fmt: skip
_EDITS = st.dictionaries(
    st.sampled_from(_EDIT_KEYS),
    st.none() | _SCALARS | st.lists(st.sampled_from(sorted(KNOWN_TOOLS)), max_size=4),
    max_size=3,
)


@fuzz(150)
@given(_EDITS)
def test_agent_toml_edits_are_validated_and_keep_comments(changes: dict[str, Any]) -> None:
    """edit_agent_toml with random changes: validated, comments kept."""
    original = default_agent_toml()
    try:
        edited = edit_agent_toml(original, changes)
    except AgentDefinitionError:
        return
    _check_loaded(load_agent_definition(edited))
    assert "# Low randomness" in edited  # the comments of the file survive an edit


# ---------------------------------------------------------------------- the gate


@fuzz(600)
@given(assembled(GATE_BITS, max_size=12), st.booleans())
def test_skip_reason_is_one_of_the_documented_reasons(message: str, native: bool) -> None:
    """super_context_skip_reason on greetings, folder phrases and noise."""
    reason = super_context_skip_reason(message, native_tool_calling=native)
    assert reason is None or reason in SKIP_REASONS
    assert super_context_skip_reason(message, native_tool_calling=native) == reason
    if native:
        assert reason != "non_native_provider_no_explicit_intent"


# ---------------------------------------------------------------------- memory


@pytest.fixture(scope="module")
def memory_tree() -> Iterator[MemoryTree]:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-memory-"))
    for index, word in enumerate(["budget", "grant", "travel", "sourdough", "東京", "ümlaut"]):
        write(folder / "memory" / "global" / f"note-{index}.md", f"A note about {word}.\n")
        write(folder / "memory" / f"skill-{index}" / "n.md", f"{word} {word} details\n")
    tree = MemoryTree(folder)
    yield tree
    tree.close()
    shutil.rmtree(folder, ignore_errors=True)


@fuzz(400)
@given(
    st.one_of(st.sampled_from(["global", "*", "skill-1", "nope"]), st.text(max_size=8)),
    assembled(FTS_BITS, max_size=10),
    st.integers(min_value=-3, max_value=50),
)
def test_memory_recall_takes_any_query(
    memory_tree: MemoryTree, namespace: str, query: str, limit: int
) -> None:
    """MemoryTree.recall with any namespace, FTS5 syntax and limit."""
    try:
        hits = memory_tree.recall(namespace, query, limit=limit)
    except ValueError:
        assert limit < 1 or not namespace.strip()
        return
    assert limit >= 1
    assert len(hits) <= min(limit, MAX_RECALL_LIMIT)
    assert all(isinstance(hit, MemoryHit) and hit.score > 0 for hit in hits)
    if namespace != "*":
        assert all(hit.namespace == namespace for hit in hits)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-workspace-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _fresh(scratch: Path, name: str) -> Path:
    folder = scratch / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    return folder


@fuzz(60)
@given(
    st.one_of(assembled(FRONT_BITS, max_size=25), st.binary(max_size=200)),
    st.one_of(assembled(FRONT_BITS, max_size=25), st.binary(max_size=200)),
)
def test_workspace_front_matter_of_any_shape(
    scratch: Path, skill: str | bytes, memory: str | bytes
) -> None:
    """SKILL.md and memory files with any front matter, text or bytes."""
    root = _fresh(scratch, "front")
    write(root / "skills" / "fuzzed" / "SKILL.md", skill)
    write(root / "memory" / "global" / "fuzzed.md", memory)
    skills, error = attempt(lambda: Workspace(root).skills, WorkspaceError)
    if skills is None:
        assert isinstance(skill, bytes)  # only bytes that are not UTF-8 are refused
        assert "SKILL.md" in str(error)
    else:
        assert [s.dir_name for s in skills] == ["fuzzed"]
        assert skills[0].name
    with MemoryTree(root) as tree:
        assert tree.count("global") == 1
        tree.recall("*", "budget fuzzed")


@fuzz(200)
@given(st.one_of(registry_like, json_values, st.text(max_size=30)))
def test_registry_json_of_any_shape(scratch: Path, data: Any) -> None:
    """registry.json of any JSON shape, or not JSON at all."""
    root = scratch / "registry"
    root.mkdir(exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data)
    write(root / "registry.json", text)
    workspace = Workspace(root)
    entries, error = attempt(lambda: workspace.registry, WorkspaceError)
    if entries is None:
        assert "registry.json" in str(error)
    else:
        assert all(isinstance(entry, RegistryEntry) for entry in entries)
        ids = [entry.id for entry in entries]
        assert len(ids) == len(set(ids))
        assert all(i == i.strip() and i for i in ids)
    result = build_scout_registry(workspace).call("skill_registry_search", {"query": "budget"})
    assert isinstance(result, ToolResult)


# ---------------------------------------------------------------------- model output


@fuzz(500)
@given(json_values)
def test_completion_parser_takes_any_json(data: Any) -> None:
    """chat.completion bodies of any JSON shape."""
    try:
        reply = completion_from_openai(data)
    except ModelError:
        return
    assert isinstance(reply, ModelReply)
    assert reply.message.role == "assistant"
    assert all(call.name.strip() for call in reply.message.tool_calls)


@fuzz(300)
@given(st.lists(json_values, max_size=6))
def test_stream_accumulator_takes_any_chunks(chunks: list[Any]) -> None:
    """Streamed chunks of any JSON shape."""
    received = StreamAccumulator()
    try:
        for chunk in chunks:
            received.feed(chunk)
        reply = received.build()
    except ModelError:
        return
    assert all(call.name for call in reply.message.tool_calls)


@fuzz(300)
@given(
    assembled(
        [
            "<tool_call>",
            "</tool_call>",
            '{"name": "shell"',
            ', "arguments": ',
            "{}",
            "}",
            '"',
            "```json\n",
            "```",
        ]
    )
)
def test_text_tool_calls_parse_from_any_text(text: str) -> None:
    """<tool_call> blocks in any text (servers without native tools)."""
    rest, calls = parse_tool_call_blocks(text)
    assert all(call.name == call.name.strip() and call.name for call in calls)
    assert (rest == text) == (not calls)


# ---------------------------------------------------------------------- tools and web


@pytest.fixture(scope="module")
def hostile_registry() -> Iterator[Any]:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-tools-"))
    root = hostile_workspace(folder / "ws", folder / "outside")
    yield build_scout_registry(Workspace(root), allow_private_addresses=False, web_timeout=2)
    shutil.rmtree(folder, ignore_errors=True)


@fuzz(300)
@given(
    st.sampled_from(sorted(READ_ONLY_TOOLS)),
    st.one_of(
        st.text(max_size=40),
        st.dictionaries(
            st.sampled_from(
                [
                    "query",
                    "namespace",
                    "limit",
                    "flavour",
                    "path",
                    "url",
                    "category",
                    "max_bytes",
                    "max_chars",
                    "x",
                ]
            ),
            json_values,
            max_size=4,
        ),
    ),
)
def test_any_tool_arguments_give_a_tool_result(
    hostile_registry: Any, name: str, arguments: Any
) -> None:
    """Every read-only tool called with any arguments."""
    with pytest.MonkeyPatch.context() as patch:
        # No fetch ever connects here: the address policy is fuzzed, not the network.
        patch.setattr(fetcher, "_request", _refuse_to_connect)
        result = hostile_registry.call(name, arguments)
    assert isinstance(result, ToolResult)
    assert "OUTSIDE-SECRET" not in result.content


def _refuse_to_connect(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a fuzzed call reached the network layer")


URL_BITS = [
    "http://", "https://", "HTTP://", "file://", "//", "@", ":", "/", "[", "]", "%25",
    "127.0.0.1", "0x7f.1", "2130706433", "169.254.169.254", "2852039166", "10.0.0.1",
    "::1", "::ffff:", "fd00:ec2::254", "localhost", "metadata.google.internal", ".",
    "0", "017700000001", "#", "?", "\\", "user:pw", "\t", " ", "intranet.corp",
]  # fmt: skip


@fuzz(500)
@given(assembled(URL_BITS, max_size=10))
def test_web_fetch_only_ever_connects_to_public_addresses(url: str) -> None:
    """web_fetch with any URL connects to public addresses only."""
    vetted: list[list[str]] = []

    def record(target: Any, addresses: list[str], *args: Any) -> tuple[int, str, bytes, bool]:
        vetted.append(list(addresses))
        return 200, "text/plain", b"fine", False

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fetcher, "_request", record)
        result = web.fetch_url(url, allow_private_addresses=False, timeout=2)
    assert isinstance(result, ToolResult)
    for addresses in vetted:
        assert all(address_guard.classify_address(ip) is None for ip in addresses), (url, addresses)
    assert result.ok == bool(vetted)


# ---------------------------------------------------------------------- files on disk


@fuzz(150)
@given(st.one_of(st.text(max_size=60), st.binary(max_size=60), assembled(TOML_BITS, max_size=10)))
def test_config_toml_of_any_content(content: str | bytes) -> None:
    """config.toml of any content: read, reported, never rewritten."""
    write(config_path(), content)
    before = config_path().read_bytes()
    for read in (
        get_super_context_enabled,
        lambda: get_model_route("burst"),
        lambda: get_setting("web.allow_private_addresses", False),
    ):
        value, error = attempt(read, ConfigError)
        if value is None:
            assert str(config_path()) in str(error)
        else:
            assert isinstance(value, (bool, ModelRoute))
    assert config_path().read_bytes() == before  # reading never rewrites the file


@fuzz(40)
@given(st.binary(max_size=4096))
def test_memory_index_of_any_content_is_rebuilt(scratch: Path, garbage: bytes) -> None:
    """A memory index file of any bytes is rebuilt from memory/."""
    root = scratch / "index"
    write(root / "memory" / "global" / "budget.md", "The grant budget is capped.\n")
    write(root / ".supercontext" / "memory.sqlite3", garbage)
    with MemoryTree(root) as tree:  # rebuilt from memory/, never an error
        assert [hit.key for hit in tree.recall("global", "grant budget")] == ["budget"]


@fuzz(150)
@given(st.one_of(json_values, st.text(max_size=40)))
def test_saved_thread_of_any_content(scratch: Path, data: Any) -> None:
    """Saved thread files of any content."""
    path = scratch / "thread.json"
    write(path, data if isinstance(data, str) else json.dumps(data))
    thread, error = attempt(
        lambda: Thread.load(path, workspace=str(scratch), super_context_enabled=False),
        WorkspaceError,
    )
    if thread is None:
        assert str(path) in str(error)
    else:
        assert isinstance(thread, Thread)
