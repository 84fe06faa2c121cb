"""The command line, run in fresh processes like a user would."""

from __future__ import annotations

import json
import os
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
    assert "Do it" in ok.stdout
    bad = _run("bundle", "check", "-", stdin="[context_bundle]\nsummary: x\n")
    assert bad.returncode == 1
    assert "unterminated" in bad.stdout
    as_json = json.loads(_run("bundle", "check", "--json", str(good)).stdout)
    assert as_json["valid"] is True
    assert as_json["bundle"]["proposed_goal"] == "Do it"


@pytest.mark.parametrize(
    "args",
    [
        ("bundle", "check", "/no/such/file"),
        ("config", "set", "maybe"),
        ("scout", "--workspace", "/no/such/dir", "hello there"),
        ("scout", "--agent", "/no/such/agent.toml", "hello there"),
        ("scout", "--base-url", "http://127.0.0.1:9/v1", "hello there"),
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
    assert "(memory)" in bundle["summary"]
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


def test_demo_prints_every_part() -> None:
    out = _run("demo")
    assert out.returncode == 0, out.stderr
    for heading in (
        "== Gate",
        "== Scout trace",
        "== Bundle",
        "== What the orchestrator receives",
        "== Reply",
        "[context_bundle]",
        "## Prepared context (super context)",
    ):
        assert heading in out.stdout
