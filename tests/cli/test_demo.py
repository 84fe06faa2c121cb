"""``supercontext-lab demo``: one first turn on the demo workspace, printed top to bottom."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import run_cli


def test_demo_reads_top_to_bottom_and_prints_the_bundle_once() -> None:
    out = run_cli("demo")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    headings = [line.split(" ", 2)[1] for line in text.splitlines() if line.startswith("== ")]
    assert headings == [
        "Message,",
        "Gate",
        "Scout",
        "Bundle:",
        "What",
        "Orchestrator",
        "Timing:",
    ]
    assert text.count("has_enough_context: true") == 1
    assert "[context_bundle] … [/context_bundle]   (the bundle above)" in text
    assert "## Prepared context (super context)" in text
    assert re.search(
        r"^== Orchestrator \(offline:orchestrator\): 20 tools offered, "
        r"agent_prepare_context withheld: the harness has just prepared the context$",
        text,
        re.MULTILINE,
    )
    scout = re.search(r"^== Scout .*, ([\d.]+) ms$", text, re.MULTILINE)
    timing = re.search(
        r"^== Timing: preparation ([\d.]+) ms \(the scout's run ([\d.]+) ms, plus ([\d.]+) ms "
        r"for the gate, the model route and opening the scout's tools\), orchestrator [\d.]+ ms, "
        r"total [\d.]+ ms$",
        text,
        re.MULTILINE,
    )
    assert scout and timing
    assert timing.group(2) == scout.group(1)
    assert float(timing.group(1)) == pytest.approx(
        float(timing.group(2)) + float(timing.group(3)), abs=0.15
    )


def test_demo_summary_quotes_whole_sentences() -> None:
    from supercontext_lab import open_workspace

    memory = " ".join(
        " ".join(path.read_text("utf-8").split())
        for path in (open_workspace(None).root / "memory").rglob("*.md")
    )
    out = run_cli("demo")
    quoted = re.findall(r"^- (.+) \(memory: [^()]+\)$", out.stdout, re.MULTILINE)
    assert quoted, "the demo's bundle quotes memory notes"
    for fact in quoted:
        # Never cut: the fact is in the note as it stands and ends where a sentence does.
        assert "…" not in fact, fact
        assert fact in memory, fact
        assert fact.endswith((".", "!", "?", ")")), fact


def test_the_demo_keeps_no_past_conversation_and_prints_the_same_twice() -> None:
    from supercontext_lab import open_workspace

    first, second = run_cli("demo"), run_cli("demo")
    bundle = first.stdout.partition("== Bundle")[2].partition("== What the orchestrator")[0]
    assert bundle and bundle in second.stdout
    assert not (open_workspace(None).root / ".supercontext" / "conversations.sqlite3").exists()


def test_demo_prints_every_part() -> None:
    out = run_cli("demo")
    assert out.returncode == 0, out.stderr
    for heading in (
        "== Gate",
        "== Scout (",
        "== Bundle",
        "== What the orchestrator receives",
        "== Orchestrator (",
        "[context_bundle]",
        "## Prepared context (super context)",
    ):
        assert heading in out.stdout
    # The grounding check is a step of its own in the trace, not a nameless tool.
    assert re.search(r"^ +\d+\. grounding check \[ok\] [\d.]+ ms: grounded ", out.stdout, re.M)
    assert "tool (" not in out.stdout


def test_demo_says_where_it_copied_its_workspace() -> None:
    out = run_cli("demo")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.endswith(" (the shipped demo, copied there)")
    copied = Path(
        first.split(" on workspace ", 1)[1].removesuffix(" (the shipped demo, copied there)")
    )
    assert copied.is_absolute()
    assert (copied / "memory").is_dir() and (copied / "README.md").is_file()


# ------------------------------------------------------------------------------ progress


def test_demo_progress_names_the_scout_then_the_orchestrator() -> None:
    out = run_cli("demo")
    phases = [line.split(": ", 1)[1].rsplit(" (", 1)[0] for line in out.stderr.splitlines()]
    assert phases[0] == "asking the model offline:scout (call 1 of up to 8)"
    assert phases[-1] == "asking the orchestrator offline:orchestrator"
    assert "checking the bundle" in phases


def test_demo_with_no_progress_keeps_stderr_empty() -> None:
    out = run_cli("demo", "--no-progress")
    assert out.returncode == 0
    assert out.stderr == ""


def test_demo_runs_the_scout_and_the_reply_on_the_configured_model() -> None:
    """config model ID --base-url URL, then demo: the scout and the reply come from it"""
    from supercontext_lab.models.offline import OfflineScoutModel
    from supercontext_lab.testing import OpenAITestServer

    with OpenAITestServer(model=OfflineScoutModel(), model_name="served") as server:
        saved = run_cli("config", "model", "qwen-test", "--base-url", server.base_url)
        assert saved.returncode == 0, saved.stderr
        done = run_cli("demo", "--no-progress")
        requests = server.requests
    assert done.returncode == 0, done.stderr
    assert re.search(r"^== Scout \(openai:qwen-test, ", done.stdout, re.MULTILINE)
    assert re.search(r"^== Orchestrator \(openai:qwen-test\): ", done.stdout, re.MULTILINE)
    assert len(requests) >= 2


def test_demo_model_sets_both_for_one_run() -> None:
    done = run_cli("demo", "--no-progress", "--model", "baseline:rank")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^== Scout \(baseline:rank, ", done.stdout, re.MULTILINE)
    # A baseline has no reply of its own: the offline orchestrator stands in for it.
    assert re.search(r"^== Orchestrator \(offline:orchestrator\): ", done.stdout, re.MULTILINE)
    assert run_cli("config", "model").stdout.startswith("scout: offline")  # nothing saved
