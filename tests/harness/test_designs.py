"""The pre-flight designs of SPEC §16: scout, pack, cached and cold, and the pre-turn deadline."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from supercontext_lab import Thread
from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.config import config_path
from supercontext_lab.errors import ConfigError
from supercontext_lab.gate import ColdStartReason
from supercontext_lab.harness.cached import (
    CACHE_FILE,
    build_cached,
    cache_fingerprint,
    load_cached,
    recall_counts,
    record_recalls,
    serve_cached,
)
from supercontext_lab.harness.deadline import outstanding, run_before
from supercontext_lab.harness.designs import PreflightSettings, check_design, preflight_settings
from supercontext_lab.harness.pack import PACK_LABEL, fit_facts, run_pack
from supercontext_lab.models.choices import ChoiceFact
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.scout import TraceStep
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import OpenAITestServer, ScriptedModel, build_workspace

REQUEST = "Help me finish the kernel sensitivity analysis for the grant renewal"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {
        "PROFILE.md": "# Profile\n\nMaya is an ecologist. She leads the SEEDSCAPE project.\n",
        "MEMORY.md": "- The grant renewal is due on 2026-12-15.\n",
        "memory/global/kernel.md": (
            "---\ncreated: 2026-11-12\n---\nDecision: the 2Dt kernel is the primary dispersal "
            "kernel. The sensitivity analysis compares it with the exponential kernel.\n"
        ),
        "memory/global/bread.md": (
            "---\ncreated: 2026-01-02\n---\nSourdough starter feeding schedule: every morning.\n"
        ),
    }
    return Workspace(build_workspace(tmp_path / "ws", files))


def _unused_scout() -> ScriptedModel:
    # Any call fails: the designs that use no model must never reach it.
    return ScriptedModel([], name="must-not-be-called")


def _orchestrator() -> ScriptedModel:
    return ScriptedModel(["ok"] * 5, name="orchestrator")


def _write_config(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- settings


def test_settings_default_to_the_scout_without_a_deadline() -> None:
    assert preflight_settings() == PreflightSettings()
    assert PreflightSettings().design == "scout"
    assert PreflightSettings().deadline_ms is None


def test_settings_are_read_from_the_preflight_table() -> None:
    _write_config('[preflight]\ndesign = "pack"\ndeadline_ms = 1500\nfallback = "cold"\n')
    settings = preflight_settings()
    assert (settings.design, settings.deadline_ms, settings.fallback) == ("pack", 1500.0, "cold")


def test_the_prefetch_settings_are_read_from_the_preflight_table() -> None:
    assert (PreflightSettings().prefetch_ttl_s, PreflightSettings().prefetch_pending) == (60.0, 8)
    _write_config('[preflight]\ndesign = "prefetch"\nprefetch_ttl_s = 30\nprefetch_pending = 2\n')
    settings = preflight_settings()
    assert (settings.design, settings.prefetch_ttl_s, settings.prefetch_pending) == (
        "prefetch",
        30.0,
        2,
    )
    assert settings.to_dict()["prefetch_ttl_s"] == 30.0


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('design = "fast"', "preflight.design"),
        ("deadline_ms = -5", "preflight.deadline_ms"),
        ('deadline_ms = "soon"', "preflight.deadline_ms"),
        ('fallback = "scout"', "preflight.fallback"),
        ("pack_tokens = 3", "preflight.pack_tokens"),
        ("prefetch_ttl_s = 0", "preflight.prefetch_ttl_s"),
        ('prefetch_ttl_s = "a minute"', "preflight.prefetch_ttl_s"),
        ("prefetch_pending = 0", "preflight.prefetch_pending"),
        ("prefetch_pending = 2.5", "preflight.prefetch_pending"),
        ("colour = 1", "preflight.colour"),
    ],
)
def test_a_bad_preflight_setting_names_the_file_and_the_key(text: str, named: str) -> None:
    _write_config(f"[preflight]\n{text}\n")
    with pytest.raises(ConfigError) as info:
        preflight_settings()
    message = str(info.value)
    assert str(config_path()) in message and named in message
    assert "\n" not in message


def test_a_thread_overrides_the_config_and_refuses_a_bad_design(workspace: Workspace) -> None:
    _write_config('[preflight]\ndesign = "cold"\n')
    assert Thread(workspace).preflight.design == "cold"
    assert Thread(workspace, design="pack", deadline_ms=250).preflight.deadline_ms == 250.0
    with pytest.raises(
        ConfigError,
        match="design must be one of scout, pack, cached, prefetch, full-context, tool-only, cold",
    ):
        Thread(workspace, design="fast")
    with pytest.raises(ConfigError, match="deadline_ms"):
        Thread(workspace, deadline_ms=float("nan"))
    assert check_design("cached") == "cached"


# --------------------------------------------------------------------------- pack


def test_pack_prepares_without_a_model_call_and_cites_every_fact(workspace: Workspace) -> None:
    orchestrator = _orchestrator()
    thread = Thread(
        workspace,
        design="pack",
        scout_model=_unused_scout(),
        orchestrator_model=orchestrator,
        super_context_enabled=True,
    )
    result = thread.send(REQUEST)
    assert result.prepared, result.reason
    assert (result.design, result.prepared_by) == ("pack", "pack")
    assert result.scout is not None and result.scout.model_calls == 0
    assert result.scout.model_name == PACK_LABEL
    bundle = result.bundle
    assert bundle is not None
    assert bundle.proposed_goal is None
    assert bundle.recommended_tool_calls == [] and bundle.recommended_skills == []
    assert "2Dt kernel" in bundle.summary and "(memory: global/kernel)" in bundle.summary
    assert "Sourdough" not in bundle.summary
    # Every bullet is grounded: the grounding check read it as it reads a scout's.
    assert result.scout.grounding is not None and not result.scout.grounding.changed
    assert all(step.kind in ("tool", "check") for step in result.trace)
    assert any(step.prefetched for step in result.trace)
    sent = orchestrator.calls[0].messages[-1].content or ""
    assert "without a model" in sent
    assert thread.goal is None


def test_pack_has_enough_context_follows_the_relevance_rule(workspace: Workspace) -> None:
    run = run_pack("How do I book the boat for the October dives?", workspace=workspace)
    assert run.bundle is not None
    assert run.bundle.has_enough_context is False
    assert "Missing: nothing found on" in run.bundle.summary
    enough = run_pack("What did we decide about the dispersal kernel?", workspace=workspace)
    assert enough.bundle is not None and enough.bundle.has_enough_context is True


def test_pack_fits_whole_facts_to_its_budget(workspace: Workspace) -> None:
    facts = [ChoiceFact(1, "a" * 200, "memory"), ChoiceFact(2, "b" * 20, "memory")]
    # The first fact does not fit 30 tokens; it is left out whole, the second still fits.
    assert [fact.number for fact in fit_facts(facts, 30)] == [2]
    # The kernel note is about 30 tokens: a budget of 20 leaves it out whole.
    small = run_pack(REQUEST, workspace=workspace, budget=20)
    large = run_pack(REQUEST, workspace=workspace, budget=2000)
    assert small.bundle is not None and large.bundle is not None
    assert len(small.bundle.bullets) < len(large.bundle.bullets)
    assert small.envelope is not None and "…" not in small.envelope


# --------------------------------------------------------------------------- cached


def test_cached_is_served_without_reading_the_request(workspace: Workspace) -> None:
    replies = []
    for message in (REQUEST, "What is the capital of Peru?"):
        thread = Thread(
            workspace,
            design="cached",
            scout_model=_unused_scout(),
            orchestrator_model=_orchestrator(),
            super_context_enabled=True,
        )
        result = thread.send(message)
        assert result.prepared and result.prepared_by == "cached"
        replies.append(result.envelope)
    assert replies[0] == replies[1]
    bundle = parse_context_bundle(replies[0] or "")
    assert bundle is not None
    assert bundle.has_enough_context is None and bundle.proposed_goal is None
    assert "- Maya is an ecologist. (profile)" in bundle.summary
    assert "due on 2026-12-15. (memory)" in bundle.summary
    # The most recent note comes before the older one.
    assert bundle.summary.index("2Dt kernel") < bundle.summary.index("Sourdough")
    assert (workspace.root / ".supercontext" / CACHE_FILE).is_file()


def test_cached_is_served_on_a_greeting_but_not_on_a_later_turn(workspace: Workspace) -> None:
    thread = Thread(
        workspace, design="cached", orchestrator_model=_orchestrator(), super_context_enabled=True
    )
    first = thread.send("hi")
    second = thread.send("Thanks, and the kernel?")
    assert first.prepared and first.prepared_by == "cached"
    assert not second.prepared and second.reason is ColdStartReason.NOT_FIRST_TURN


def test_cached_is_rebuilt_after_a_note_changes(workspace: Workspace) -> None:
    first = serve_cached(workspace)
    assert first.rebuilt
    again = serve_cached(workspace)
    assert not again.rebuilt and again.envelope == first.envelope
    note = workspace.root / "memory" / "global" / "kernel.md"
    note.write_text(
        "---\ncreated: 2026-11-30\n---\nDecision: the lognormal kernel replaces the 2Dt kernel.\n",
        encoding="utf-8",
    )
    stamp = time.time() + 5
    os.utime(note, (stamp, stamp))
    changed = serve_cached(workspace)
    assert changed.rebuilt
    assert "lognormal kernel replaces" in changed.envelope
    assert "2Dt kernel is the primary" not in changed.envelope
    stored = load_cached(workspace)
    assert stored is not None and stored.fingerprint == cache_fingerprint(workspace)
    # A new note is in the next envelope too.
    (workspace.root / "memory" / "global" / "boat.md").write_text(
        "The research boat is booked through the field station.\n", encoding="utf-8"
    )
    added = serve_cached(workspace)
    assert added.rebuilt and "research boat" in added.envelope


def test_cached_ranks_the_notes_pre_flights_read_most(workspace: Workspace) -> None:
    record_recalls(workspace, ["global/bread"])
    record_recalls(workspace, ["global/bread", "global/kernel"])
    assert recall_counts(workspace) == {"global/bread": 2, "global/kernel": 1}
    cached = build_cached(workspace)
    assert cached.envelope.index("Sourdough") < cached.envelope.index("2Dt kernel")


def test_a_thread_counts_the_notes_its_pre_flight_read(workspace: Workspace) -> None:
    Thread(workspace, design="pack", orchestrator_model=_orchestrator()).send(REQUEST)
    assert recall_counts(workspace).get("global/kernel") == 1
    Thread(workspace, design="pack", orchestrator_model=_orchestrator(), record_recalls=False).send(
        REQUEST
    )
    assert recall_counts(workspace).get("global/kernel") == 1


def test_cached_never_reads_or_writes_through_a_linked_index_folder(
    workspace: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    forged = build_cached(workspace, store=False)
    (outside / CACHE_FILE).write_text(
        json.dumps(
            {**forged.to_dict(), "envelope": "[context_bundle]\nsummary: FORGED\n[/context_bundle]"}
        ),
        encoding="utf-8",
    )
    (workspace.root / ".supercontext").symlink_to(outside, target_is_directory=True)
    served = serve_cached(workspace)
    assert served.rebuilt and "FORGED" not in served.envelope and "2Dt kernel" in served.envelope
    assert load_cached(workspace) is None
    assert sorted(p.name for p in outside.iterdir()) == [CACHE_FILE]


def test_cached_in_an_empty_workspace_goes_on_cold(tmp_path: Path) -> None:
    empty = Workspace(build_workspace(tmp_path / "empty", {"README.md": "nothing\n"}))
    result = Thread(
        empty, design="cached", orchestrator_model=_orchestrator(), super_context_enabled=True
    ).send(REQUEST)
    assert not result.prepared
    assert result.reason is ColdStartReason.NO_CACHED_ENVELOPE


# --------------------------------------------------------------------------- cold


def test_cold_sends_the_message_as_typed(workspace: Workspace) -> None:
    orchestrator = _orchestrator()
    result = Thread(
        workspace,
        design="cold",
        scout_model=_unused_scout(),
        orchestrator_model=orchestrator,
        super_context_enabled=True,
    ).send(REQUEST)
    assert not result.prepared and result.reason is ColdStartReason.DESIGN_COLD
    assert result.reason.skipped
    assert orchestrator.calls[0].messages[-1].content == REQUEST
    assert "agent_prepare_context" in result.orchestrator_tools or not result.orchestrator_tools
    assert "design: cold" in result.describe()


def test_the_flag_off_wins_over_every_design(workspace: Workspace) -> None:
    for design in ("pack", "cached", "cold"):
        result = Thread(
            workspace,
            design=design,
            orchestrator_model=_orchestrator(),
            super_context_enabled=False,
        ).send(REQUEST)
        assert result.reason is ColdStartReason.SUPER_CONTEXT_DISABLED


# --------------------------------------------------------------------------- deadline


def test_run_before_returns_on_time_and_the_late_worker_ends_by_itself() -> None:
    def work(left: float) -> str:
        time.sleep(min(left, 0.3) + 0.05)
        return "late"

    started = time.perf_counter()
    outcome = run_before(work, 100)
    waited = (time.perf_counter() - started) * 1000
    assert outcome.missed and outcome.value is None
    assert 100 <= waited < 180
    assert outcome.late is not None and outcome.late.join(2.0)
    quick = run_before(lambda left: left, 500)
    assert not quick.missed and quick.value is not None and 0 < quick.value <= 0.5


@pytest.fixture
def slow_server() -> OpenAITestServer:
    # The offline scout behind HTTP, answering each request after three seconds.
    with OpenAITestServer(model=OfflineScoutModel(), delay_s=3.0) as server:
        yield server


def _slow_scout(server: OpenAITestServer) -> OpenAICompatibleModel:
    return OpenAICompatibleModel(base_url=server.base_url, model="slow", max_retries=0)


def _no_orphans(within_s: float) -> bool:
    ends = time.monotonic() + within_s
    while outstanding() and time.monotonic() < ends:
        time.sleep(0.01)
    return not outstanding()


def test_a_missed_deadline_falls_back_to_the_pack_on_time(
    workspace: Workspace, slow_server: OpenAITestServer
) -> None:
    steps: list[TraceStep] = []
    thread = Thread(
        workspace,
        scout_model=_slow_scout(slow_server),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
        deadline_ms=300,
    )
    result = thread.send(REQUEST, on_step=steps.append)
    preparation = result.timings_ms["preparation_ms"]
    assert 300 <= preparation < 400
    assert result.prepared and (result.design, result.prepared_by) == ("scout", "pack")
    assert result.deadline_missed
    assert result.preflight_note is not None and "300 ms deadline" in result.preflight_note
    first = result.trace[0]
    assert first.kind == "deadline" and first.started_ms == 300 and "300 ms" in first.result_preview
    assert result.scout is not None and "300 ms" in result.scout.problems[0]
    assert "deadline: 300 ms (missed)" in result.describe()
    assert result.to_dict()["deadline_missed"] is True
    # The abandoned scout leaves nothing behind: its worker ends by itself, bounded by the
    # same deadline, and its HTTP request was given up (the server saw one request).
    assert _no_orphans(1.0)
    assert len(slow_server.requests) == 1
    # None of the abandoned scout's steps reached the caller after the deadline.
    assert not any(step.kind == "model" for step in steps)


def test_a_missed_deadline_without_the_pack_goes_on_cold(
    workspace: Workspace, slow_server: OpenAITestServer
) -> None:
    _write_config('[preflight]\nfallback = "cold"\n')
    orchestrator = _orchestrator()
    result = Thread(
        workspace,
        scout_model=_slow_scout(slow_server),
        orchestrator_model=orchestrator,
        super_context_enabled=True,
        deadline_ms=200,
    ).send(REQUEST)
    assert result.timings_ms["preparation_ms"] < 300
    assert not result.prepared and result.reason is ColdStartReason.DEADLINE_MISSED
    assert result.reason_detail is not None and "200 ms deadline" in result.reason_detail
    assert [step.kind for step in result.trace] == ["deadline"]
    assert orchestrator.calls[0].messages[-1].content == REQUEST
    assert _no_orphans(1.0)


def test_a_scout_within_its_deadline_prepares_the_turn(workspace: Workspace) -> None:
    result = Thread(
        workspace,
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
        deadline_ms=10_000,
    ).send(REQUEST)
    assert result.prepared and result.prepared_by == "scout" and not result.deadline_missed
    assert "deadline: 10000 ms (met)" in result.describe()
    assert threading.active_count() >= 1


def test_a_local_route_prepares_with_the_pack_unless_a_design_is_chosen(
    workspace: Workspace,
) -> None:
    from supercontext_lab.harness.designs import PreflightSettings, design_for_route
    from supercontext_lab.routes import ModelRoute, set_model_route

    assert design_for_route(PreflightSettings(), "local").design == "pack"
    assert design_for_route(PreflightSettings(), "openai").design == "scout"
    chosen = PreflightSettings().with_overrides(design="scout")
    assert design_for_route(chosen, "local").design == "scout"
    # A thread on a configured local route: the pack, and no model is started for it.
    set_model_route("burst", ModelRoute(kind="local"))
    thread = Thread(workspace, super_context_enabled=True)
    assert thread.preflight.design == "pack"
    assert not thread.scout_model_built
    assert Thread(workspace, design="scout", super_context_enabled=True).preflight.design == "scout"
    # A scout model handed in is the one to run.
    handed = Thread(workspace, scout_model=ScriptedModel(["x"]), super_context_enabled=True)
    assert handed.preflight.design == "scout"


def test_the_cached_envelope_quotes_no_label_as_a_fact(tmp_path: Path) -> None:
    root = build_workspace(
        tmp_path / "labels",
        {
            "PROFILE.md": "# Profile\n\nDeadlines:\n\n- The thesis is due on 30 June 2027.\n",
            "memory/global/note.md": "Next steps:\n\n- Pilot the survey with five students.\n",
        },
    )
    cached = build_cached(Workspace(root), store=False)
    assert "The thesis is due on 30 June 2027. (profile)" in cached.envelope
    assert "Deadlines:" not in cached.envelope
    assert "Next steps:" not in cached.envelope
