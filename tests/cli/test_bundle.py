"""``supercontext-lab bundle check``: valid, accepted, warnings, --strict and --workspace."""

from __future__ import annotations

import json
from pathlib import Path

from supercontext_lab.testing import envelope

from .conftest import run_cli


def test_bundle_check_accepts_and_rejects(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("prose\n" + envelope(proposed_goal="Do it", summary="x (memory)"), "utf-8")
    ok = run_cli("bundle", "check", str(good))
    assert ok.returncode == 0
    assert ok.stdout.splitlines()[0] == "accepted: the harness would use this envelope"
    assert "warning" not in ok.stdout
    assert "Do it" in ok.stdout
    assert run_cli("bundle", "check", "--strict", str(good)).returncode == 0
    bad = run_cli("bundle", "check", "-", stdin="[context_bundle]\nsummary: x\n")
    assert bad.returncode == 1
    assert bad.stdout.startswith("rejected: ")
    assert "unterminated" in bad.stdout
    as_json = json.loads(run_cli("bundle", "check", "--json", str(good)).stdout)
    assert as_json["valid"] is True and as_json["accepted"] is True
    assert as_json["warnings"] == []
    assert as_json["bundle"]["proposed_goal"] == "Do it"
    rejected = json.loads(run_cli("bundle", "check", "--json", "-", stdin="no envelope").stdout)
    assert rejected["valid"] is False and rejected["accepted"] is False


EMPTYISH = "[context_bundle]\nhas_enough_context: maybe\nfoo: bar\n[/context_bundle]\n"


EMPTYISH_WARNINGS = [
    "has_enough_context: 'maybe' is not true or false; it is read as unknown",
    "unknown key 'foo' after has_enough_context is ignored: 'foo: bar'",
    "proposed_goal is missing; it is read as none",
    "summary is missing: the bundle gives the orchestrator no context",
]


def test_bundle_check_accepts_an_envelope_with_nothing_in_it_but_says_why_it_is_thin() -> None:
    out = run_cli("bundle", "check", "-", stdin=EMPTYISH)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "accepted, with 4 warnings: the harness would use it"
    assert lines[1:5] == [f"warning: {w}" for w in EMPTYISH_WARNINGS]
    assert lines[5:8] == [
        "ContextBundle",
        "  has_enough_context: unknown",
        "  proposed_goal: none",
    ]
    data = json.loads(run_cli("bundle", "check", "--json", "-", stdin=EMPTYISH).stdout)
    assert (data["valid"], data["accepted"]) == (True, True)
    assert data["warnings"] == EMPTYISH_WARNINGS


def test_bundle_check_strict_fails_on_warnings() -> None:
    out = run_cli("bundle", "check", "--strict", "-", stdin=EMPTYISH)
    assert out.returncode == 1
    assert out.stdout.splitlines()[0] == "rejected (--strict): 4 warnings"
    assert "warning: summary is missing" in out.stdout
    data = json.loads(run_cli("bundle", "check", "--strict", "--json", "-", stdin=EMPTYISH).stdout)
    assert (data["valid"], data["accepted"]) == (True, False)
    one = EMPTYISH.replace("maybe", "true").replace("foo: bar", "proposed_goal: none\nsummary: x")
    single = run_cli("bundle", "check", "--strict", "-", stdin=one)
    assert single.returncode == 0, single.stdout
    odd = one.replace(
        "summary: x", "summary: x\nrecommended_skills:\n  - skill: a\n    installed: perhaps"
    )
    strict = run_cli("bundle", "check", "--strict", "-", stdin=odd)
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
    data = json.loads(run_cli("bundle", "check", "--json", "--strict", "-", stdin=output).stdout)
    calls = data["bundle"]["recommended_tool_calls"]
    assert calls[0]["args"] == {"workflow": "grant-budget-check", "year": 2}
    assert calls[1]["args"] == "the email from Jonas"


def test_bundle_check_help_explains_valid_and_accepted() -> None:
    text = " ".join(run_cli("bundle", "check", "--help").stdout.split())
    assert "valid means the output holds exactly one well-formed [context_bundle] envelope" in text
    assert "accepted means valid and not refused by the options" in text
    assert '"valid": true, "accepted": false' in text


def test_bundle_check_with_a_workspace_names_what_it_lacks(tmp_path: Path) -> None:
    from supercontext_lab import open_workspace
    from supercontext_lab.testing import envelope

    demo = str(open_workspace(None).root)
    output = envelope(
        summary="- x (memory)",
        recommended_tool_calls=[("seedscape-pipeline", "{}", "made up"), ("web_search", "{}", "y")],
        recommended_skills=[("seedscape-pipeline", True, "made up")],
    )
    out = run_cli("bundle", "check", "-", "--workspace", demo, stdin=output)
    assert out.returncode == 1, out.stdout
    assert "unknown name: tool 'seedscape-pipeline': not in the orchestrator's tool catalogue" in (
        out.stdout
    )
    assert "rejected: 2 names not found in the workspace" in out.stdout
    data = json.loads(
        run_cli("bundle", "check", "-", "--json", "--workspace", demo, stdin=output).stdout
    )
    assert data["accepted"] is False
    assert [(n["kind"], n["item"]) for n in data["names"]] == [
        ("tool", "seedscape-pipeline"),
        ("skill", "seedscape-pipeline"),
    ]
    assert run_cli("bundle", "check", "-", stdin=output).returncode == 0
