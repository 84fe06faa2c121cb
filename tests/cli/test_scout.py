"""``supercontext-lab scout``: the scout alone on one message, its trace, JSON and progress."""

from __future__ import annotations

import json
import re
from pathlib import Path

from supercontext_lab.testing import envelope

from .conftest import run_cli


def test_invalid_agent_toml_is_bad_input(tmp_path: Path) -> None:
    agent = tmp_path / "agent.toml"
    agent.write_text('id = "x"\n[tools]\nnamed = ["shell"]\n', "utf-8")
    out = run_cli("scout", "--agent", str(agent), "hello there")
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
    out = run_cli(
        "scout", "--workspace", str(ws), "--json", "Plan my travel to the Lisbon workshop"
    )
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
        out = run_cli(
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
    out = run_cli("scout", "--model", "ollama:qwen2.5", "--base-url", base_url, "Plan the budget")
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
        out = run_cli("scout", "--base-url", server.base_url, "--model", "scripted", "Plan it")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith(
        f"scout: completed on workspace demo-workspace with scripted at {server.base_url} in "
    )
    assert ", 1 model call, " in first
    assert "   1. model call 1: " in out.stdout and "→ answer" in out.stdout


# ------------------------------------------------------------------------------ progress


def test_scout_shows_its_progress_on_stderr_and_keeps_stdout_for_the_json() -> None:
    from supercontext_lab.testing import OpenAITestServer, ScriptedResponse

    reply = envelope(proposed_goal="Plan it", summary="- budget (memory)")
    # A slow server: the plain progress lines repeat nothing, and say what is waited on.
    with OpenAITestServer([ScriptedResponse.reply(text=reply, delay_s=1.2)]) as server:
        out = run_cli(
            "scout", "--json", "--base-url", server.base_url, "--model", "slow", "Plan it"
        )
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


def test_scout_with_no_progress_keeps_stderr_empty() -> None:
    out = run_cli("scout", "--no-progress", "--json", "Help me finish the budget")
    assert out.returncode == 0
    assert out.stderr == ""
