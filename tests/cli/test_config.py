"""``supercontext-lab config``: the Super Context flag read and set, and where it comes from."""

from __future__ import annotations

from .conftest import run_cli


def test_config_get_and_set() -> None:
    out = run_cli("config", "get")
    assert out.returncode == 0
    assert out.stdout.startswith("super_context_enabled: on (from the default")
    assert run_cli("config", "set", "off").returncode == 0
    assert run_cli("config", "get").stdout.startswith(
        "super_context_enabled: off (from the config file"
    )
    overridden = run_cli("config", "get", env={"OPENHUMAN_SUPER_CONTEXT": "on"})
    assert overridden.stdout.startswith("super_context_enabled: on (from the environment")


def test_config_model_sets_the_scout_and_the_reply_and_a_thread_uses_both() -> None:
    """config model ID: one switch; both routes saved, a new thread runs both on ID"""
    from supercontext_lab.harness import Thread
    from supercontext_lab.routes import get_model_route

    assert run_cli("config", "model").stdout.splitlines() == [
        "scout: offline  ([models.burst])",
        "reply: offline  ([models.agentic])",
    ]
    saved = run_cli("config", "model", "ollama:qwen-test")
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout.splitlines() == [
        "scout: ollama:qwen-test  ([models.burst])",
        "reply: ollama:qwen-test  ([models.agentic])",
    ]
    thread = Thread()
    assert thread.scout_model.name == "ollama:qwen-test"
    assert thread.orchestrator_model.name == "ollama:qwen-test"

    apart = run_cli("config", "model", "--only", "scout", "baseline:rank")
    assert apart.stdout.splitlines() == [
        "scout: baseline:rank  ([models.burst])",
        "reply: ollama:qwen-test  ([models.agentic])",
    ]
    assert run_cli("config", "model", "offline").returncode == 0
    assert get_model_route("burst").kind == get_model_route("agentic").kind == "offline"


def test_config_model_refuses_options_without_an_id_and_a_bad_id() -> None:
    bare = run_cli("config", "model", "--only", "reply")
    assert bare.returncode == 2 and "need ID" in bare.stderr
    bad = run_cli("config", "model", "no-provider-model")
    assert bad.returncode != 0 and "no provider prefix" in bad.stderr
    assert run_cli("config", "model").stdout.splitlines()[0] == "scout: offline  ([models.burst])"
