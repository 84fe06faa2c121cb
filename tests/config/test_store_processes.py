"""The flag and config.toml seen from fresh processes: env overrides, stderr, concurrent writers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tomlkit

REPO_ROOT = Path(__file__).resolve().parents[2]

STATUS_CODE = """
import json
from supercontext_lab.config import super_context_status, get_super_context_enabled
status = super_context_status()
get_super_context_enabled()  # a second read must not repeat the warning
print(json.dumps({"enabled": status.enabled, "source": status.source, "detail": status.detail}))
"""

WRITER_CODE = """
import sys
import tomlkit
from supercontext_lab.config import update_config

worker = sys.argv[1]
flips = int(sys.argv[2])


def flip(document: tomlkit.TOMLDocument) -> None:
    context = document["context"]
    context["super_context_enabled"] = not bool(context["super_context_enabled"])
    stress = document["stress"]
    stress["count"] = int(stress["count"]) + 1
    stress[worker] = int(stress.get(worker, 0)) + 1


for _ in range(flips):
    update_config(flip)
"""

READER_CODE = """
import os
import sys
from supercontext_lab.config import get_super_context_enabled, load_config

stop_file = sys.argv[1]
reads = 0
while True:
    # Checked after a read, so at least one read happens even if the writers are quick.
    done = os.path.exists(stop_file)
    assert isinstance(get_super_context_enabled(), bool)
    data = load_config()
    assert data["other"]["kept"] == "before the storm", data
    assert isinstance(data["stress"]["count"], int), data
    reads += 1
    if done:
        break
print(reads)
"""


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment: no inherited OPENHUMAN_* or SUPERCONTEXT_* variables."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home.parent),
        "PYTHONPATH": str(REPO_ROOT),
        "SUPERCONTEXT_LAB_HOME": str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if "SYSTEMROOT" in os.environ:  # pragma: no cover - Windows needs it to start Python
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    env.update(extra)
    return env


def run_python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def write_flag(home: Path, value: bool) -> Path:
    path = home / "config.toml"
    path.write_text(f"[context]\nsuper_context_enabled = {str(value).lower()}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("overrides", "file_value", "expected"),
    [
        ({}, None, {"enabled": True, "source": "default", "detail": "default"}),
        ({}, False, {"enabled": False, "source": "file", "detail": "<path>"}),
        (
            {"OPENHUMAN_SUPER_CONTEXT": " OFF "},
            True,
            {"enabled": False, "source": "env", "detail": "OPENHUMAN_SUPER_CONTEXT= OFF "},
        ),
        (
            {"OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED": "yes"},
            False,
            {
                "enabled": True,
                "source": "env",
                "detail": "OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED=yes",
            },
        ),
        (
            {"OPENHUMAN_SUPER_CONTEXT": "1", "OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED": "0"},
            False,
            {"enabled": True, "source": "env", "detail": "OPENHUMAN_SUPER_CONTEXT=1"},
        ),
        (
            {"OPENHUMAN_SUPER_CONTEXT": "", "OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED": "off"},
            None,
            {"enabled": True, "source": "default", "detail": "default"},
        ),
    ],
)
def test_env_override_in_a_fresh_process(
    overrides: dict[str, str], file_value: bool | None, expected: dict[str, object], lab_home: Path
) -> None:
    path = write_flag(lab_home, file_value) if file_value is not None else lab_home / "config.toml"
    result = run_python(STATUS_CODE, clean_env(lab_home, **overrides))
    assert result.returncode == 0, result.stderr
    if expected["detail"] == "<path>":
        expected = {**expected, "detail": str(path)}
    assert json.loads(result.stdout) == expected


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("OPENHUMAN_SUPER_CONTEXT", "maybe"),
        ("OPENHUMAN_SUPER_CONTEXT", ""),
        ("OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED", "enable"),
    ],
)
def test_invalid_env_warns_on_stderr_only(variable: str, raw: str, lab_home: Path) -> None:
    write_flag(lab_home, False)
    result = run_python(STATUS_CODE, clean_env(lab_home, **{variable: raw}))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "enabled": False,
        "source": "file",
        "detail": str(lab_home / "config.toml"),
    }
    assert result.stderr == (
        f"supercontext_lab: warning: ignoring {variable}={raw!r} "
        "(use on/off, true/false, yes/no or 1/0); using the config file value.\n"
    )


def test_corrupt_file_fails_loudly_in_a_fresh_process(lab_home: Path) -> None:
    path = lab_home / "config.toml"
    path.write_text("[context\n", encoding="utf-8")
    code = """
    from supercontext_lab.config import set_super_context_enabled
    from supercontext_lab.errors import ConfigError
    try:
        set_super_context_enabled(False)
    except ConfigError as exc:
        print(exc)
    """
    result = run_python(code, clean_env(lab_home))
    assert result.returncode == 0, result.stderr
    assert f"fix or delete {path}" in result.stdout
    assert path.read_text(encoding="utf-8") == "[context\n"


@pytest.mark.slow
def test_concurrent_writers_lose_no_update(lab_home: Path) -> None:
    workers, flips = 8, 100
    path = lab_home / "config.toml"
    path.write_text(
        "# written before the storm\n"
        "[other]\n"
        'kept = "before the storm"  # must survive\n'
        "\n"
        "[context]\n"
        "super_context_enabled = true\n"
        "\n"
        "[stress]\n"
        "count = 0\n",
        encoding="utf-8",
    )
    env = clean_env(lab_home)
    stop_file = lab_home.parent / f"{lab_home.name}.stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(READER_CODE), str(stop_file)],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(WRITER_CODE), f"w{index}", str(flips)],
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(workers)
    ]
    try:
        for writer in writers:
            _, err = writer.communicate(timeout=60)
            assert writer.returncode == 0, err
    finally:
        stop_file.touch()
        reads, reader_err = reader.communicate(timeout=60)
        for process in [*writers, reader]:
            if process.poll() is None:  # pragma: no cover - only after a failure above
                process.kill()
    assert reader.returncode == 0, reader_err
    assert int(reads) >= 1

    text = path.read_text(encoding="utf-8")
    data = tomlkit.parse(text).unwrap()
    # An even number of flips brings the flag back; every increment is present.
    assert data["context"]["super_context_enabled"] is True
    assert data["stress"]["count"] == workers * flips
    assert all(data["stress"][f"w{index}"] == flips for index in range(workers))
    assert data["other"] == {"kept": "before the storm"}
    assert "# written before the storm" in text
    assert "# must survive" in text
    assert {entry.name for entry in lab_home.iterdir()} == {"config.toml", "config.toml.lock"}
