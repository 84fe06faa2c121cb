"""The baselines beside the pre-flight designs (full-context, tool-only) and the
``system-tail`` placement of the prepared block (SPEC §16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supercontext_lab import Thread
from supercontext_lab.config import config_path
from supercontext_lab.errors import ConfigError
from supercontext_lab.gate import ColdStartReason
from supercontext_lab.harness.baselines import (
    RECALL_TOOL,
    full_context_envelope,
    recall_tools,
    workspace_notes,
)
from supercontext_lab.harness.designs import preflight_settings
from supercontext_lab.harness.turn import PREPARED_CONTEXT_HEADER
from supercontext_lab.models.base import ChatModel, Message, ModelInfo, ToolCall
from supercontext_lab.models.offline import OfflineOrchestratorModel
from supercontext_lab.models.window import ContextBudget, conversation_bytes
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace

REQUEST = "Help me finish the kernel sensitivity analysis for the grant renewal"
KEY = "sk-test1234567890abcdefghijklmnop"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {
        "PROFILE.md": "# Profile\n\nMaya is an ecologist. She leads the SEEDSCAPE project.\n",
        "MEMORY.md": "- The grant renewal is due on 2026-12-15.\n",
        "memory/global/kernel.md": (
            "---\ncreated: 2026-11-12\n---\nDecision: the 2Dt kernel is the primary dispersal "
            "kernel. The sensitivity analysis compares it with the exponential kernel.\n"
        ),
        "memory/global/deploy.md": f"The deploy token for the cluster is {KEY} (rotate it).\n",
        "memory/global/long.md": "A long field log. " + "Seeds counted in plot 7. " * 400,
    }
    return Workspace(build_workspace(tmp_path / "ws", files))


def _unused_scout() -> ScriptedModel:
    return ScriptedModel([], name="must-not-be-called")


def _design_thread(
    workspace: Workspace, design: str, orchestrator: ChatModel | None = None
) -> Thread:
    """A thread in ``design`` whose scout must never be asked, not archived."""
    return Thread(
        workspace,
        scout_model=_unused_scout(),
        orchestrator_model=orchestrator or OfflineOrchestratorModel(),
        design=design,
        archive=False,
    )


def _write_config(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- full-context


def test_full_context_sends_every_note_whole_in_a_stable_order(workspace: Workspace) -> None:
    thread = _design_thread(workspace, "full-context")
    turn = thread.send(REQUEST)
    assert turn.prepared and turn.prepared_by == "full-context"
    assert turn.envelope is not None
    sources = [source for source, _ in workspace_notes(workspace)]
    assert sources == [
        "profile",
        "memory",
        "memory: global/deploy",
        "memory: global/kernel",
        "memory: global/long",
    ]
    for source in sources:
        assert f"Note ({source}):" in turn.envelope
    # Whole notes: the long log is there to its last sentence.
    assert turn.envelope.count("Seeds counted in plot 7.") == 400
    assert "Left out" not in turn.envelope
    # The model that would have run the scout was never asked.
    assert thread.scout_model_built and not thread.scout_model.calls  # type: ignore[attr-defined]


def test_full_context_masks_keys(workspace: Workspace) -> None:
    thread = Thread(workspace, orchestrator_model=OfflineOrchestratorModel(), design="full-context")
    turn = thread.send(REQUEST)
    assert turn.envelope is not None and "rotate it" in turn.envelope
    assert KEY not in turn.envelope and KEY not in turn.sent_message
    assert all(KEY not in (m.content or "") for m in turn.orchestrator_messages)


def test_full_context_fits_the_orchestrators_declared_window(workspace: Workspace) -> None:
    # A window too small for the long log: it is left out whole and named, the rest sent.
    small = ModelInfo(context_tokens=3_000)
    orchestrator = ScriptedModel(["ok"], name="small-window", info=small)
    thread = _design_thread(workspace, "full-context", orchestrator)
    turn = thread.send(REQUEST)
    assert turn.envelope is not None and turn.prepared_by == "full-context"
    assert "Seeds counted" not in turn.envelope
    assert "Left out to fit the orchestrator's context window: 1 of 5 notes" in turn.envelope
    assert "memory: global/long" in turn.envelope and "2Dt kernel" in turn.envelope
    sent = orchestrator.calls[0].messages
    assert conversation_bytes(sent) <= ContextBudget.of(small).prompt_bytes


def test_full_context_cuts_at_note_boundaries_and_keeps_the_order(workspace: Workspace) -> None:
    full = full_context_envelope(workspace, 400)
    assert full.left_out == ["memory: global/long"] or "memory: global/long" in full.left_out
    assert full.sent == [s for s, _ in workspace_notes(workspace) if s not in full.left_out]
    assert full_context_envelope(workspace, 0).sent == []


def test_full_context_with_no_note_goes_on_cold(tmp_path: Path) -> None:
    empty = Workspace(build_workspace(tmp_path / "empty", {}))
    thread = Thread(empty, orchestrator_model=OfflineOrchestratorModel(), design="full-context")
    turn = thread.send(REQUEST)
    assert not turn.prepared and turn.reason is ColdStartReason.NO_ENVELOPE


# --------------------------------------------------------------------------- tool-only


def test_tool_only_prepares_nothing_and_the_orchestrator_recalls_itself(
    workspace: Workspace,
) -> None:
    thread = _design_thread(workspace, "tool-only")
    turn = thread.send(REQUEST)
    assert not turn.prepared and turn.reason is ColdStartReason.DESIGN_TOOL_ONLY
    assert turn.sent_message == REQUEST
    assert RECALL_TOOL in turn.orchestrator_tools
    assert turn.orchestrator_tool_calls == [RECALL_TOOL]
    tool = next(m for m in turn.orchestrator_messages if m.role == "tool")
    hits = json.loads(tool.content or "")["hits"]
    assert any(hit["key"] == "kernel" for hit in hits)
    # The stand-in answered from what the tool returned.
    assert "2Dt kernel" in turn.reply and "memory_recall" in turn.reply


def test_tool_only_runs_no_tool_but_memory_recall(workspace: Workspace) -> None:
    registry = recall_tools(workspace, "thread-1")
    assert registry.names() == [RECALL_TOOL]
    assert all(tool.read_only for tool in registry)
    calls = (
        ToolCall(id="1", name="memory_write", arguments='{"key": "x", "content": "y"}'),
        ToolCall(id="2", name="file_read", arguments='{"path": "PROFILE.md"}'),
        ToolCall(id="3", name=RECALL_TOOL, arguments='{"namespace": "*", "query": "kernel"}'),
    )
    orchestrator = ScriptedModel(
        [Message(role="assistant", content="", tool_calls=calls), "done"], name="orchestrator"
    )
    thread = Thread(workspace, orchestrator_model=orchestrator, design="tool-only", archive=False)
    turn = thread.send(REQUEST)
    answers = [m.content or "" for m in turn.orchestrator_messages if m.role == "tool"]
    assert "was not executed" in answers[0] and "was not executed" in answers[1]
    assert '"hits"' in answers[2]
    assert not (workspace.root / "memory/global/x.md").exists()
    assert turn.reply == "done"


def test_tool_only_calls_are_bounded(workspace: Workspace) -> None:
    again = Message(
        role="assistant",
        content="",
        tool_calls=(ToolCall(id="r", name=RECALL_TOOL, arguments='{"query": "kernel"}'),),
    )
    orchestrator = ScriptedModel([again] * 10, name="orchestrator")
    thread = Thread(workspace, orchestrator_model=orchestrator, design="tool-only", archive=False)
    turn = thread.send(REQUEST)
    assert turn.orchestrator_tool_calls == [RECALL_TOOL] * 3
    assert len(orchestrator.calls) == 4 and not orchestrator.calls[-1].tools


def test_other_designs_run_no_memory_recall(workspace: Workspace) -> None:
    # The catalogue's memory_recall is shown with free arguments and never run: the
    # stand-in does not call it, and a call to it is answered as not executed.
    thread = Thread(workspace, orchestrator_model=OfflineOrchestratorModel(), design="cold")
    turn = thread.send(REQUEST)
    assert turn.orchestrator_tools.count(RECALL_TOOL) == 1 and not turn.orchestrator_tool_calls
    call = ToolCall(id="1", name=RECALL_TOOL, arguments='{"query": "kernel"}')
    scripted = ScriptedModel(
        [Message(role="assistant", content="", tool_calls=(call,)), "done"], name="o"
    )
    cold = Thread(workspace, orchestrator_model=scripted, design="cold", archive=False)
    answers = [m for m in cold.send(REQUEST).orchestrator_messages if m.role == "tool"]
    assert "was not executed" in (answers[0].content or "")


def test_tool_only_offers_one_runnable_memory_recall(workspace: Workspace) -> None:
    orchestrator = ScriptedModel(["ok"], name="orchestrator")
    thread = Thread(workspace, orchestrator_model=orchestrator, design="tool-only")
    turn = thread.send(REQUEST)
    assert turn.orchestrator_tools.count(RECALL_TOOL) == 1
    offered = {spec.name: spec for spec in orchestrator.calls[0].tools or ()}
    assert "query" in offered[RECALL_TOOL].parameters["properties"]


# --------------------------------------------------------------------------- placement


def test_system_tail_sends_the_block_at_the_tail_and_never_stores_it(
    workspace: Workspace,
) -> None:
    thread = Thread(
        workspace,
        scout_model=_unused_scout(),
        orchestrator_model=OfflineOrchestratorModel(),
        design="pack",
        placement="system-tail",
        archive=False,
    )
    first = thread.send(REQUEST)
    assert first.prepared and first.placement == "system-tail"
    assert first.sent_message == REQUEST
    sent = first.orchestrator_messages
    user = max(i for i, m in enumerate(sent) if m.role == "user")
    assert sent[user + 1].role == "system"
    assert PREPARED_CONTEXT_HEADER in (sent[user + 1].content or "")
    assert first.tail_context == sent[user + 1].content
    # The stand-in read the block where it was.
    assert "2Dt kernel" in first.reply
    assert all(PREPARED_CONTEXT_HEADER not in (m.content or "") for m in thread.transcript)
    second = thread.send("And what did we decide about the exponential kernel?")
    assert second.tail_context is None
    assert all(
        PREPARED_CONTEXT_HEADER not in (m.content or "") for m in second.orchestrator_messages
    )
    # The request up to the new message is what the first turn sent, less the block.
    assert [m.content for m in second.orchestrator_messages[:2]] == [
        sent[0].content,
        REQUEST,
    ]


def test_prepend_keeps_the_block_in_the_thread(workspace: Workspace) -> None:
    thread = Thread(
        workspace, orchestrator_model=OfflineOrchestratorModel(), design="pack", archive=False
    )
    first = thread.send(REQUEST)
    assert first.placement == "prepend" and first.tail_context is None
    assert PREPARED_CONTEXT_HEADER in first.sent_message
    assert PREPARED_CONTEXT_HEADER in (thread.transcript[0].content or "")


def test_placement_is_read_from_the_preflight_table() -> None:
    assert preflight_settings().placement == "prepend"
    _write_config('[preflight]\nplacement = "system-tail"\n')
    assert preflight_settings().placement == "system-tail"
    assert preflight_settings().to_dict()["placement"] == "system-tail"
    _write_config('[preflight]\nplacement = "middle"\n')
    with pytest.raises(ConfigError, match="placement"):
        preflight_settings()


def test_a_thread_refuses_an_unknown_placement(workspace: Workspace) -> None:
    with pytest.raises(ConfigError, match="placement must be one of prepend, system-tail"):
        Thread(workspace, placement="middle")
