"""The command line as a whole: its parser of every command and main's exit codes, run in
fresh processes like a user would."""

from __future__ import annotations

import pytest

from .conftest import run_cli


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
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_help_names_every_command_and_version_names_the_program() -> None:
    out = run_cli("--help")
    assert out.returncode == 0, out.stderr
    commands = out.stdout.split("{", 1)[1].split("}", 1)[0].split(",")
    assert commands == [
        "bundle",
        "demo",
        "scout",
        "config",
        "eval",
        "memory",
        "workspace",
        "cache",
        "mcp",
    ]
    version = run_cli("--version")
    assert version.returncode == 0
    assert version.stdout.startswith("supercontext-lab ")
