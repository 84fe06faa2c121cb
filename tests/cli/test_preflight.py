"""The pre-flight designs on the command line: ``scout --design``, ``--deadline-ms``,
``cache build`` and ``demo --design``, run in fresh processes like a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.testing import OpenAITestServer, build_workspace

from .conftest import run_cli

MESSAGE = "What did we decide about the dispersal kernel?"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return build_workspace(
        tmp_path / "ws",
        {
            "PROFILE.md": "Maya is an ecologist.\n",
            "memory/global/kernel.md": "Decision: the 2Dt kernel is the primary dispersal kernel.\n",
        },
    )


def test_scout_design_pack_prepares_without_a_model(workspace: Path) -> None:
    out = run_cli("scout", "--workspace", str(workspace), "--design", "pack", "--json", MESSAGE)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["design"], data["prepared_by"]) == ("pack", "pack")
    assert data["model_calls"] == 0
    assert "2Dt kernel" in data["envelope"]
    assert data["bundle"]["proposed_goal"] is None
    text = run_cli("scout", "--workspace", str(workspace), "--design", "pack", MESSAGE)
    assert text.stdout.startswith("pre-flight: design pack, prepared by pack")


def test_scout_design_cold_and_cached(workspace: Path) -> None:
    cold = run_cli("scout", "--workspace", str(workspace), "--design", "cold", "--json", MESSAGE)
    assert cold.returncode == 1
    data = json.loads(cold.stdout)
    assert data["envelope"] is None and data["design"] == "cold"
    assert data["problems"][0].startswith("design_cold")
    cached = run_cli(
        "scout", "--workspace", str(workspace), "--design", "cached", "--json", MESSAGE
    )
    assert cached.returncode == 0
    served = json.loads(cached.stdout)
    assert served["prepared_by"] == "cached" and "(profile)" in served["envelope"]


def test_scout_design_prefetch_has_no_earlier_turn_and_prepares_nothing(workspace: Path) -> None:
    out = run_cli("scout", "--workspace", str(workspace), "--design", "prefetch", "--json", MESSAGE)
    assert out.returncode == 1, out.stderr
    data = json.loads(out.stdout)
    assert data["envelope"] is None and data["design"] == "prefetch"
    assert data["problems"][0].startswith("no_earlier_lookup")


def test_the_design_choices_are_the_harness_designs() -> None:
    from supercontext_lab.cli.preflight import DESIGN_CHOICES
    from supercontext_lab.harness.designs import DESIGNS

    assert DESIGN_CHOICES == DESIGNS


def test_the_placement_choices_are_the_harness_placements() -> None:
    from supercontext_lab.cli.preflight import PLACEMENT_CHOICES
    from supercontext_lab.harness.designs import PLACEMENTS

    assert PLACEMENT_CHOICES == PLACEMENTS


def test_cache_build_stores_the_envelope_in_the_workspace(workspace: Path) -> None:
    out = run_cli("cache", "build", "--workspace", str(workspace), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    stored = workspace / ".supercontext" / "preflight-cache.json"
    assert data["path"] == str(stored.resolve()) and stored.is_file()
    assert "Maya is an ecologist." in data["envelope"]
    assert json.loads(stored.read_text("utf-8"))["fingerprint"] == data["fingerprint"]


@pytest.mark.parametrize(
    "args",
    [
        ("cache", "build", "--workspace", "/no/such/folder"),
        ("cache", "build", "--tokens", "3"),
        ("scout", "--design", "fast", "x"),
        ("scout", "--deadline-ms", "0", "x"),
        ("scout", "--deadline-ms", "nan", "x"),
    ],
)
def test_bad_preflight_input_is_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1


def test_scout_deadline_falls_back_to_the_pack_against_a_slow_server(workspace: Path) -> None:
    with OpenAITestServer(model=OfflineScoutModel(), delay_s=5.0) as server:
        out = run_cli(
            "scout",
            "--workspace",
            str(workspace),
            "--model",
            "slow",
            "--base-url",
            server.base_url,
            "--deadline-ms",
            "400",
            "--json",
            MESSAGE,
        )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["design"], data["prepared_by"], data["deadline_missed"]) == ("scout", "pack", True)
    assert "400 ms deadline" in data["preflight_note"]
    assert data["trace"][0]["kind"] == "deadline"
    # The pre-flight's measured time, and a pack that read everything in time.
    assert data["preflight_ms"] > 0 and data["fallback_cut"] is False
    assert "the pack prepared the turn from" in data["preflight_note"]


def test_demo_says_which_design_prepared_the_turn() -> None:
    out = run_cli("demo", "--design", "pack")
    assert out.returncode == 0, out.stderr
    assert "  pre-flight prepared by: pack" in out.stdout
    cold = run_cli("demo", "--design", "cold")
    assert "no scout: design_cold" in cold.stdout
