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
