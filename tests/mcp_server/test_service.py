"""The MCP server's answers without MCP: the thread's gate and pre-flight, the bounds on a
message, recall, the confined notes and profile, masking, and nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from supercontext_lab.config import set_super_context_enabled
from supercontext_lab.errors import ConfigError, PathRefusedError, ToolError, WorkspaceError
from supercontext_lab.harness import AGENT_CONTEXT_STATUS_HEADER, PREPARED_CONTEXT_HEADER
from supercontext_lab.mcp_server import ContextService
from supercontext_lab.mcp_server.service import MAX_MESSAGE_CHARS, PREFLIGHT_CHARS
from supercontext_lab.models.boundary import SECRET_MARKER
from supercontext_lab.routes import ModelRoute, set_model_route
from supercontext_lab.testing import build_workspace

MESSAGE = "What is the travel cap of the grant renewal budget?"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return build_workspace(tmp_path / "ws")


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file below ``root`` with its size and modification time."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            stat = path.stat()
            found[path.relative_to(root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return found


def test_a_first_message_is_prepared_by_the_pack_with_cited_facts(workspace: Path) -> None:
    done = ContextService(workspace, design="pack").prepare(MESSAGE)
    assert done.prepared
    data = done.payload()
    assert (data["design"], data["prepared_by"], data["reason"]) == ("pack", "pack", None)
    assert "(memory: global/grant-budget)" in done.text()
    assert done.text() == data["envelope"]
    assert "250k EUR" in " ".join(data["bundle"]["summary"].splitlines())
    assert data["read_chars"] == data["message_chars"] == len(MESSAGE)


def test_first_turn_is_the_harness_message_with_the_bundle_in_front(workspace: Path) -> None:
    done = ContextService(workspace, design="pack").prepare(MESSAGE)
    sent = done.first_turn()
    assert sent.startswith(AGENT_CONTEXT_STATUS_HEADER)
    assert PREPARED_CONTEXT_HEADER in sent
    assert sent.endswith("\n" + MESSAGE)
    assert "(memory: global/grant-budget)" in sent


def test_the_gate_holds_back_a_greeting_and_the_message_goes_alone(workspace: Path) -> None:
    done = ContextService(workspace, design="pack").prepare("thank you!")
    assert not done.prepared
    assert done.payload()["reason"] == "context_free_greeting"
    assert done.text().startswith("No context prepared: context_free_greeting")
    assert done.first_turn() == "thank you!"


def test_the_flag_off_is_honoured_as_in_a_thread(workspace: Path) -> None:
    set_super_context_enabled(False)
    done = ContextService(workspace, design="pack").prepare(MESSAGE)
    assert done.payload()["reason"] == "super_context_disabled"


def test_the_request_design_overrides_the_server_default(workspace: Path) -> None:
    service = ContextService(workspace, design="pack")
    done = service.prepare(MESSAGE, design="cold")
    assert (done.payload()["design"], done.payload()["reason"]) == ("cold", "design_cold")
    with pytest.raises(ConfigError, match="design must be one of"):
        service.prepare(MESSAGE, design="warm")


def test_the_offline_scout_prepares_by_default(workspace: Path) -> None:
    done = ContextService(workspace).prepare(MESSAGE, deadline_ms=20_000)
    assert (done.payload()["design"], done.payload()["prepared_by"]) == ("scout", "scout")
    assert done.payload()["deadline_missed"] is False


def test_a_one_megabyte_message_is_read_up_to_the_bound(workspace: Path) -> None:
    message = MESSAGE + " " + "the travel budget of the grant " * 33_000
    assert len(message) > 1_000_000
    done = ContextService(workspace, design="pack").prepare(message)
    data = done.payload()
    assert data["read_chars"] == PREFLIGHT_CHARS
    assert data["message_chars"] == len(message)
    assert any("first 8,000" in note for note in data["notes"])
    assert done.prepared
    assert done.first_turn().endswith(message)  # the whole message is still sent


def test_a_message_past_the_limit_is_refused(workspace: Path) -> None:
    service = ContextService(workspace, design="pack")
    with pytest.raises(ToolError, match="at most"):
        service.prepare("x" * (MAX_MESSAGE_CHARS + 1))


def test_recall_is_the_scouts_memory_recall(workspace: Path) -> None:
    service = ContextService(workspace)
    hits = service.recall("grant budget travel")["hits"]
    assert hits[0]["key"] == "grant-budget"
    assert service.recall("sourdough", namespace="*", limit=1)["hits"][0]["key"] == "sourdough"
    with pytest.raises(ToolError, match="characters"):
        service.recall("word " * 1000)


def test_a_note_and_the_profile_are_read(workspace: Path) -> None:
    build_workspace(workspace, {"memory/loose.md": "A loose note.\n"})
    service = ContextService(workspace)
    assert "capped at 250k EUR" in service.note("global", "grant-budget")
    assert service.note("global", "loose") == "A loose note.\n"
    assert service.note("skill-grant-budget-check", "usage") == "Last run: March.\n"
    assert service.profile().startswith("# Dr. Ada Test")
    with pytest.raises(WorkspaceError, match="no note"):
        service.note("global", "missing")


@pytest.mark.parametrize(
    ("namespace", "key"),
    [("..", "PROFILE"), ("global", ".."), ("global", "../sourdough"), (".", "x"),
     ("global", ".hidden"), ("a\\b", "x"), ("global", "x\ny"), ("", "x")],
)  # fmt: skip
def test_a_name_that_is_not_one_plain_component_is_refused(
    workspace: Path, namespace: str, key: str
) -> None:
    with pytest.raises(PathRefusedError, match="not a memory namespace or key"):
        ContextService(workspace).note(namespace, key)


def test_links_out_of_the_workspace_are_refused(workspace: Path, tmp_path: Path) -> None:
    outside = build_workspace(tmp_path / "outside", {"secret.md": "outside text\n"})
    os.symlink(outside / "secret.md", workspace / "memory" / "global" / "leak.md")
    os.symlink(outside, workspace / "memory" / "elsewhere")
    service = ContextService(workspace)
    with pytest.raises(PathRefusedError, match="outside the workspace"):
        service.note("global", "leak")
    with pytest.raises(PathRefusedError, match="outside the workspace"):
        service.note("elsewhere", "secret")
    (workspace / "PROFILE.md").unlink()
    os.symlink(outside / "secret.md", workspace / "PROFILE.md")
    with pytest.raises(PathRefusedError, match=r"PROFILE\.md"):
        service.profile()


def test_configured_keys_are_masked_in_everything_returned(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-test-0123456789abcdef"
    monkeypatch.setenv("MCP_TEST_KEY", key)
    set_model_route(
        "elsewhere",
        ModelRoute(
            kind="openai", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="MCP_TEST_KEY"
        ),
    )
    build_workspace(
        workspace,
        {"memory/global/grant-budget.md": f"The grant renewal budget key is {key} for travel.\n"},
    )
    service = ContextService(workspace, design="pack")
    done = service.prepare(MESSAGE)
    shown = [done.text(), done.first_turn(), str(done.payload())]
    shown += [service.note("global", "grant-budget"), str(service.recall("grant budget"))]
    for text in shown:
        assert key not in text
    assert all(SECRET_MARKER in text for text in shown)


def test_nothing_in_the_workspace_is_written_but_the_memory_index(workspace: Path) -> None:
    before = _files(workspace)
    service = ContextService(workspace, design="pack")
    service.prepare(MESSAGE)
    service.prepare(MESSAGE, design="scout")
    service.recall("grant", namespace="*")
    service.note("global", "grant-budget")
    service.profile()
    after = _files(workspace)
    written = {name for name in after if name.startswith(".supercontext/")}
    # The memory index and its SQLite journal; no archived turn, no recall counts.
    assert {name.split("-")[0] for name in written} == {".supercontext/memory.sqlite3"}
    assert {k: v for k, v in after.items() if k not in written} == before


def test_a_missing_workspace_is_said_at_once(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        ContextService(tmp_path / "nowhere")
