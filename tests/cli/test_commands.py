"""The command line, run in fresh processes like a user would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from supercontext_lab.testing import envelope


def _run(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "supercontext_lab", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_config_get_and_set() -> None:
    out = _run("config", "get")
    assert out.returncode == 0
    assert out.stdout.startswith("super_context_enabled: on (from the default")
    assert _run("config", "set", "off").returncode == 0
    assert _run("config", "get").stdout.startswith(
        "super_context_enabled: off (from the config file"
    )
    overridden = _run("config", "get", env={"OPENHUMAN_SUPER_CONTEXT": "on"})
    assert overridden.stdout.startswith("super_context_enabled: on (from the environment")


def test_bundle_check_accepts_and_rejects(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("prose\n" + envelope(proposed_goal="Do it", summary="x (memory)"), "utf-8")
    ok = _run("bundle", "check", str(good))
    assert ok.returncode == 0
    assert ok.stdout.splitlines()[0] == "accepted: the harness would use this envelope"
    assert "warning" not in ok.stdout
    assert "Do it" in ok.stdout
    assert _run("bundle", "check", "--strict", str(good)).returncode == 0
    bad = _run("bundle", "check", "-", stdin="[context_bundle]\nsummary: x\n")
    assert bad.returncode == 1
    assert bad.stdout.startswith("rejected: ")
    assert "unterminated" in bad.stdout
    as_json = json.loads(_run("bundle", "check", "--json", str(good)).stdout)
    assert as_json["valid"] is True and as_json["accepted"] is True
    assert as_json["warnings"] == []
    assert as_json["bundle"]["proposed_goal"] == "Do it"
    rejected = json.loads(_run("bundle", "check", "--json", "-", stdin="no envelope").stdout)
    assert rejected["valid"] is False and rejected["accepted"] is False


EMPTYISH = "[context_bundle]\nhas_enough_context: maybe\nfoo: bar\n[/context_bundle]\n"
EMPTYISH_WARNINGS = [
    "has_enough_context: 'maybe' is not true or false; it is read as unknown",
    "unknown key 'foo' after has_enough_context is ignored: 'foo: bar'",
    "proposed_goal is missing; it is read as none",
    "summary is missing: the bundle gives the orchestrator no context",
]


def test_bundle_check_accepts_an_envelope_with_nothing_in_it_but_says_why_it_is_thin() -> None:
    out = _run("bundle", "check", "-", stdin=EMPTYISH)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "accepted, with 4 warnings: the harness would use it"
    assert lines[1:5] == [f"warning: {w}" for w in EMPTYISH_WARNINGS]
    assert lines[5:8] == [
        "ContextBundle",
        "  has_enough_context: unknown",
        "  proposed_goal: none",
    ]
    data = json.loads(_run("bundle", "check", "--json", "-", stdin=EMPTYISH).stdout)
    assert (data["valid"], data["accepted"]) == (True, True)
    assert data["warnings"] == EMPTYISH_WARNINGS


def test_bundle_check_strict_fails_on_warnings() -> None:
    out = _run("bundle", "check", "--strict", "-", stdin=EMPTYISH)
    assert out.returncode == 1
    assert out.stdout.splitlines()[0] == "rejected (--strict): 4 warnings"
    assert "warning: summary is missing" in out.stdout
    data = json.loads(_run("bundle", "check", "--strict", "--json", "-", stdin=EMPTYISH).stdout)
    assert (data["valid"], data["accepted"]) == (True, False)
    one = EMPTYISH.replace("maybe", "true").replace("foo: bar", "proposed_goal: none\nsummary: x")
    single = _run("bundle", "check", "--strict", "-", stdin=one)
    assert single.returncode == 0, single.stdout
    odd = one.replace(
        "summary: x", "summary: x\nrecommended_skills:\n  - skill: a\n    installed: perhaps"
    )
    strict = _run("bundle", "check", "--strict", "-", stdin=odd)
    assert strict.stdout.splitlines()[:2] == [
        "rejected (--strict): 1 warning",
        "warning: recommended_skills 'a': installed 'perhaps' is not true or false; "
        "it is read as unknown",
    ]


def test_bundle_check_json_gives_tool_args_as_an_object_and_a_sketch_as_text() -> None:
    output = envelope(
        proposed_goal="Check the budget",
        summary="x (memory)",
        recommended_tool_calls=[
            ("run_workflow", {"workflow": "grant-budget-check", "year": 2}, "checks it"),
            ("delegate_gmail", "the email from Jonas", "find it"),
        ],
    )
    data = json.loads(_run("bundle", "check", "--json", "--strict", "-", stdin=output).stdout)
    calls = data["bundle"]["recommended_tool_calls"]
    assert calls[0]["args"] == {"workflow": "grant-budget-check", "year": 2}
    assert calls[1]["args"] == "the email from Jonas"


def test_bundle_check_help_explains_valid_and_accepted() -> None:
    text = " ".join(_run("bundle", "check", "--help").stdout.split())
    assert "valid means the output holds exactly one well-formed [context_bundle] envelope" in text
    assert "accepted means valid and not refused by the options" in text
    assert '"valid": true, "accepted": false' in text


@pytest.mark.parametrize(
    "args",
    [
        ("bundle", "check", "/no/such/file"),
        ("config", "set", "maybe"),
        ("scout", "--workspace", "/no/such/dir", "hello there"),
        ("scout", "--agent", "/no/such/agent.toml", "hello there"),
        ("scout", "--base-url", "http://127.0.0.1:9/v1", "hello there"),
        ("scout", "--model", "local:/no/such/model.gguf", "hello there"),
        ("frobnicate",),
        (),
    ],
)
def test_bad_input_exits_2_with_one_line(args: tuple[str, ...]) -> None:
    out = _run(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_invalid_agent_toml_is_bad_input(tmp_path: Path) -> None:
    agent = tmp_path / "agent.toml"
    agent.write_text('id = "x"\n[tools]\nnamed = ["shell"]\n', "utf-8")
    out = _run("scout", "--agent", str(agent), "hello there")
    assert out.returncode == 2
    assert "shell" in out.stderr
    assert out.stdout == ""


def test_scout_json_on_a_hand_written_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory" / "global").mkdir(parents=True)
    (ws / "memory" / "global" / "budget.md").write_text(
        "---\ncategory: fact\n---\nThe travel budget for the Lisbon workshop is 1,200 EUR.\n",
        "utf-8",
    )
    (ws / "memory" / "global" / "cat.md").write_text("The cat likes tuna.\n", "utf-8")
    (ws / "skills" / "travel-planner").mkdir(parents=True)
    (ws / "skills" / "travel-planner" / "SKILL.md").write_text(
        "---\nname: Trip Planner\ndescription: Plans workshop travel within a budget.\n"
        "tags: [travel, budget]\n---\nPlans trips.\n",
        "utf-8",
    )
    (ws / "orchestrator_tools.toml").write_text(
        '[[tool]]\nname = "run_workflow"\ndescription = "Run an installed skill by slug."\n'
        '[[tool]]\nname = "web_search"\ndescription = "Search the web."\n',
        "utf-8",
    )
    out = _run("scout", "--workspace", str(ws), "--json", "Plan my travel to the Lisbon workshop")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) >= {"envelope", "bundle", "problems", "trace", "elapsed_ms"}
    bundle = data["bundle"]
    assert "1,200 EUR" in bundle["summary"]
    assert "(memory: global/budget)" in bundle["summary"]
    assert data["grounding"]["grounded"] == data["grounding"]["checked"] >= 1
    assert "tuna" not in bundle["summary"]
    assert [s["skill"] for s in bundle["recommended_skills"]] == ["travel-planner"]
    assert bundle["recommended_skills"][0]["installed"] is True
    assert {c["tool"] for c in bundle["recommended_tool_calls"]} <= {"run_workflow", "web_search"}
    assert data["trace"][0]["kind"] == "model"


def test_scout_with_no_envelope_exits_1(tmp_path: Path) -> None:
    from supercontext_lab.testing import OpenAITestServer, ScriptedResponse

    with OpenAITestServer([ScriptedResponse.reply(text="I refuse to use the format.")]) as server:
        out = _run(
            "scout",
            "--json",
            "--base-url",
            server.base_url,
            "--model",
            "scripted",
            "Plan my travel to the workshop",
        )
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert data["envelope"] is None
    assert any("no valid envelope" in p for p in data["problems"])


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_failed_model_call_is_labelled_as_named_and_marked_failed() -> None:
    base_url = f"http://127.0.0.1:{_closed_port()}/v1"
    out = _run("scout", "--model", "ollama:qwen2.5", "--base-url", base_url, "Plan the budget")
    assert out.returncode == 1
    first, call, *rest = out.stdout.splitlines()
    assert first.startswith(
        f"scout: failed on workspace demo-workspace with ollama:qwen2.5 at {base_url} in "
    )
    assert first.endswith(" ms, 1 model call (1 failed), 0 tokens")
    assert "openai:" not in out.stdout
    assert call.startswith("   1. model call 1: FAILED after ")
    assert "Cannot reach the model server" in call
    assert "→ answer" not in out.stdout
    assert rest[0] == "(no envelope)"


def test_one_successful_call_is_singular() -> None:
    from supercontext_lab.testing import OpenAITestServer, ScriptedResponse

    reply = envelope(proposed_goal="Plan it", summary="- budget (memory)")
    with OpenAITestServer([ScriptedResponse.reply(text=reply)]) as server:
        out = _run("scout", "--base-url", server.base_url, "--model", "scripted", "Plan it")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith(
        f"scout: completed on workspace demo-workspace with scripted at {server.base_url} in "
    )
    assert ", 1 model call, " in first
    assert "   1. model call 1: " in out.stdout and "→ answer" in out.stdout


def test_demo_reads_top_to_bottom_and_prints_the_bundle_once() -> None:
    out = _run("demo")
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
    out = _run("demo")
    quoted = re.findall(r"^- (.+) \(memory: [^()]+\)$", out.stdout, re.MULTILINE)
    assert quoted, "the demo's bundle quotes memory notes"
    for fact in quoted:
        # Never cut: the fact is in the note as it stands and ends where a sentence does.
        assert "…" not in fact, fact
        assert fact in memory, fact
        assert fact.endswith((".", "!", "?", ")")), fact


def test_the_demo_keeps_no_past_conversation_and_prints_the_same_twice() -> None:
    from supercontext_lab import open_workspace

    first, second = _run("demo"), _run("demo")
    bundle = first.stdout.partition("== Bundle")[2].partition("== What the orchestrator")[0]
    assert bundle and bundle in second.stdout
    assert not (open_workspace(None).root / ".supercontext" / "conversations.sqlite3").exists()


def test_demo_prints_every_part() -> None:
    out = _run("demo")
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


def test_bundle_check_with_a_workspace_names_what_it_lacks(tmp_path: Path) -> None:
    from supercontext_lab import open_workspace
    from supercontext_lab.testing import envelope

    demo = str(open_workspace(None).root)
    output = envelope(
        summary="- x (memory)",
        recommended_tool_calls=[("seedscape-pipeline", "{}", "made up"), ("web_search", "{}", "y")],
        recommended_skills=[("seedscape-pipeline", True, "made up")],
    )
    out = _run("bundle", "check", "-", "--workspace", demo, stdin=output)
    assert out.returncode == 1, out.stdout
    assert "unknown name: tool 'seedscape-pipeline': not in the orchestrator's tool catalogue" in (
        out.stdout
    )
    assert "rejected: 2 names not found in the workspace" in out.stdout
    data = json.loads(
        _run("bundle", "check", "-", "--json", "--workspace", demo, stdin=output).stdout
    )
    assert data["accepted"] is False
    assert [(n["kind"], n["item"]) for n in data["names"]] == [
        ("tool", "seedscape-pipeline"),
        ("skill", "seedscape-pipeline"),
    ]
    assert _run("bundle", "check", "-", stdin=output).returncode == 0


# ------------------------------------------------------------------------------ progress


def test_scout_shows_its_progress_on_stderr_and_keeps_stdout_for_the_json() -> None:
    from supercontext_lab.testing import OpenAITestServer, ScriptedResponse

    reply = envelope(proposed_goal="Plan it", summary="- budget (memory)")
    # A slow server: the plain progress lines repeat nothing, and say what is waited on.
    with OpenAITestServer([ScriptedResponse.reply(text=reply, delay_s=1.2)]) as server:
        out = _run("scout", "--json", "--base-url", server.base_url, "--model", "slow", "Plan it")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["envelope"].startswith("[context_bundle]")
    lines = out.stderr.splitlines()
    said = [re.fullmatch(r"supercontext-lab: (.+) \((\d+\.\d) s\)", line) for line in lines]
    assert all(said), lines
    assert [m.group(1) for m in said if m] == [
        "asking the model slow (call 1 of up to 8)",
        "checking the bundle",
        "done",
    ]
    # The model's answer took the server's 1.2 s: the line after it says so.
    assert float(said[1].group(2)) >= 1.2 if said[1] else False
    assert "\r" not in out.stderr and "\x1b" not in out.stderr


def test_no_progress_keeps_stderr_empty() -> None:
    out = _run("scout", "--no-progress", "--json", "Help me finish the budget")
    assert out.returncode == 0
    assert out.stderr == ""
    out = _run("demo", "--no-progress")
    assert out.returncode == 0
    assert out.stderr == ""


def test_demo_progress_names_the_scout_then_the_orchestrator() -> None:
    out = _run("demo")
    phases = [line.split(": ", 1)[1].rsplit(" (", 1)[0] for line in out.stderr.splitlines()]
    assert phases[0] == "asking the model offline:scout (call 1 of up to 8)"
    assert phases[-1] == "asking the orchestrator offline:orchestrator"
    assert "checking the bundle" in phases


def test_on_a_terminal_the_progress_is_one_line_rewritten_then_cleared() -> None:
    import io

    from supercontext_lab.cli.common import ProgressLine
    from supercontext_lab.harness.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    line = ProgressLine(stream)
    line(Progress("asking the model", "local:smollm2 (call 1 of up to 8)", 3.2))
    line(Progress("asking the model", "local:smollm2 (call 1 of up to 8)", 4.4))
    line(Progress("evil \x1b]0;title\x07", "", 5.0))
    line.close()
    text = stream.getvalue()
    assert text.count("\n") == 0
    parts = text.split(ProgressLine.CLEAR)
    assert parts[1:] == [
        "supercontext-lab: asking the model local:smollm2 (call 1 of up to 8) · 3 s",
        "supercontext-lab: asking the model local:smollm2 (call 1 of up to 8) · 4 s",
        "supercontext-lab: evil \\x1b]0;title\\x07 · 5 s",
        "",
    ]


def test_off_a_terminal_a_long_phase_repeats_its_line_now_and_then() -> None:
    import io

    from supercontext_lab.cli.common import ProgressLine
    from supercontext_lab.harness.progress import Progress

    stream = io.StringIO()
    line = ProgressLine(stream, heartbeat_s=15)
    for second in range(40):
        line(Progress("asking the model", "m", float(second)))
    line.close()
    assert stream.getvalue().splitlines() == [
        "supercontext-lab: asking the model m (0.0 s)",
        "supercontext-lab: asking the model m (15.0 s)",
        "supercontext-lab: asking the model m (30.0 s)",
    ]
