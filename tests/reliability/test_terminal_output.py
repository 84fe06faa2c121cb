"""What the command line writes: no control character from content reaches the terminal,
undecodable input is one line and exit 2, JSON is JSON in UTF-8, and files, stdin and
arguments that are too large, not files or not text are refused at once.

Every command runs in a fresh interpreter, as a user would run it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.testing import envelope

from .support import REPO, assert_one_line_exit_2, run_cli, write

# Clear the screen, home the cursor, ring, back over the line, a one-character CSI
# (U+009B) that erases the display, a right-to-left override, then a fake verdict.
HOSTILE = "\x1b[2J\x1b[H\x07\x08\x08\x9b2Jaccepted\u202e txet \x1b]0;pwned\x07 done\x7f"
# What must never be written raw: C0 but newline and tab, DEL, C1, bidirectional controls.
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
STRICT = {"PYTHONIOENCODING": "utf-8:strict", "LC_ALL": "C.UTF-8"}


def _hostile_output(tmp_path: Path) -> Path:
    text = (
        "model prose "
        + HOSTILE
        + "\n"
        + envelope(proposed_goal="Finish " + HOSTILE, summary=f"{HOSTILE} (memory)")
    )
    return write(tmp_path / "output.txt", text)


def _shown(done: Any) -> str:
    out = done.stdout + done.stderr
    return out.decode("utf-8") if isinstance(out, bytes) else str(out)


def _assert_no_raw_controls(done: Any) -> None:
    shown = _shown(done)
    found = sorted({f"U+{ord(c):04X}" for c in RAW_CONTROL.findall(shown)})
    assert found == [], f"raw control characters reached the terminal: {found}"
    assert "\\x1b[2J" in shown  # shown, as visible text


def _hostile_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write(root / "PROFILE.md", f"# Dr. Test {HOSTILE}\nWorks on the grant renewal.\n")
    write(
        root / "memory" / "global" / "grant.md",
        f"The grant renewal budget is capped {HOSTILE} at 250k EUR.\n",
    )
    return root


@pytest.mark.parametrize("mode", ["file", "stdin"])
def test_bundle_check_never_writes_control_characters(mode: str, tmp_path: Path) -> None:
    """bundle check (file and stdin) of an envelope full of escapes: every one shown as text"""
    output = _hostile_output(tmp_path)
    if mode == "file":
        done = run_cli("bundle", "check", str(output))
    else:
        done = run_cli("bundle", "check", "-", input=output.read_text("utf-8"))
    assert done.returncode == 0, done.stderr
    _assert_no_raw_controls(done)
    assert done.stdout.splitlines()[0] == "accepted: the harness would use this envelope"


def test_bundle_check_json_round_trips_the_escapes(tmp_path: Path) -> None:
    """bundle check --json: valid JSON, no raw control character, the same text inside"""
    done = run_cli("bundle", "check", "--json", str(_hostile_output(tmp_path)), input=b"")
    assert done.returncode == 0
    assert not RAW_CONTROL.search(done.stdout.decode("utf-8"))
    report = json.loads(done.stdout)
    assert report["bundle"]["proposed_goal"] == "Finish " + HOSTILE.strip()


def test_scout_never_writes_control_characters(tmp_path: Path) -> None:
    """scout on a workspace whose profile and memory hold escapes: text and --json safe"""
    root = _hostile_workspace(tmp_path)
    message = "Help me check the grant renewal budget " + HOSTILE
    text = run_cli("scout", "--workspace", str(root), message)
    assert text.returncode == 0, text.stderr
    _assert_no_raw_controls(text)
    as_json = run_cli("scout", "--json", "--workspace", str(root), message, input=b"")
    assert not RAW_CONTROL.search(as_json.stdout.decode("utf-8"))
    assert json.loads(as_json.stdout)["status"]


def test_demo_never_writes_control_characters(tmp_path: Path) -> None:
    """demo with a hostile message and workspace: every escape shown as text"""
    root = _hostile_workspace(tmp_path)
    done = run_cli(
        "demo", "--workspace", str(root), "--message", "Plan the grant renewal budget " + HOSTILE
    )
    assert done.returncode == 0, done.stderr
    _assert_no_raw_controls(done)


def test_errors_never_write_control_characters(tmp_path: Path) -> None:
    """A one-line error naming a file or value full of escapes: shown as text"""
    done = run_cli("bundle", "check", str(tmp_path / f"missing{HOSTILE}.txt"))
    assert_one_line_exit_2(done, "no such file")
    _assert_no_raw_controls(done)
    done = run_cli("config", "set", HOSTILE)
    assert done.returncode == 2
    _assert_no_raw_controls(done)


def test_eval_never_writes_control_characters(tmp_path: Path) -> None:
    """eval of cases whose ids, messages and workspace hold escapes: text and --json safe"""
    root = _hostile_workspace(tmp_path)
    case = {"id": "grant" + HOSTILE, "message": "Check the grant budget " + HOSTILE}
    dataset = write(root / "cases.jsonl", json.dumps({**case, "workspace": "."}) + "\n")
    done = run_cli("eval", "--dataset", str(dataset), "--no-cache")
    assert done.returncode == 0, done.stderr
    assert not RAW_CONTROL.search(_shown(done))
    as_json = run_cli("eval", "--dataset", str(dataset), "--no-cache", "--json", input=b"")
    assert not RAW_CONTROL.search(as_json.stdout.decode("utf-8"))
    assert json.loads(as_json.stdout)["cases"][0]["id"] == case["id"]


# ---------------------------------------------------------------------- undecodable input

NOT_UTF8 = b"\xff\xfe prose \xc3\x28 " + envelope(summary="x (memory)").encode()


@pytest.mark.parametrize("env", [STRICT, {"LC_ALL": "C.UTF-8"}], ids=["strict", "c-utf8"])
@pytest.mark.parametrize(
    "args",
    [("bundle", "check", "-"), ("bundle", "check", "--json", "-"), ("scout", "-")],
    ids=["bundle-check", "bundle-check-json", "scout"],
)
def test_undecodable_stdin_is_one_line_and_exit_2(
    args: tuple[str, ...], env: dict[str, str]
) -> None:
    """Invalid UTF-8 on stdin (strict and C.UTF-8 locales): one line naming the byte, exit 2"""
    done = run_cli(*args, input=NOT_UTF8, env=env)
    assert_one_line_exit_2(done, "stdin is not UTF-8 text", "0xff")


@pytest.mark.parametrize(
    "args", [("bundle", "check", "-"), ("scout", "-")], ids=["bundle-check", "scout"]
)
def test_a_closed_stdin_is_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    """bundle check - and scout - started with stdin closed (<&-): one line, exit 2"""
    done = subprocess.run(
        [sys.executable, "-m", "supercontext_lab", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        preexec_fn=lambda: os.close(0),  # the child starts with no stdin at all
    )
    assert_one_line_exit_2(done, "stdin is closed")


def test_undecodable_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """bundle check of a file that is not UTF-8: one line naming it, exit 2"""
    path = write(tmp_path / "latin1.txt", NOT_UTF8)
    assert_one_line_exit_2(run_cli("bundle", "check", str(path), env=STRICT), "not UTF-8")


def test_undecodable_argument_is_one_line_and_exit_2() -> None:
    """A scout message or demo --message that is not UTF-8 (raw bytes in argv): exit 2"""
    for args in ([b"scout", b"plan \xff the budget"], [b"demo", b"--message", b"plan \xff it"]):
        done = subprocess.run(
            [sys.executable.encode(), b"-m", b"supercontext_lab", *args],
            capture_output=True,
            timeout=60,
            env={**os.environ, **STRICT},
            cwd=REPO,
        )
        assert_one_line_exit_2(done, "not UTF-8 text")


@pytest.mark.parametrize(
    "env", [STRICT, {"PYTHONIOENCODING": "ascii:strict"}], ids=["utf8", "ascii"]
)
def test_json_output_is_always_utf8(env: dict[str, str]) -> None:
    """--json of text with a lone surrogate and non-ASCII: UTF-8 JSON, whatever the locale"""
    output = envelope(
        summary="caf\u00e9 \u202e (memory)",
        recommended_tool_calls=[("file_read", '{"path": "\\ud800 x"}', "w")],
    )
    done = run_cli("bundle", "check", "--json", "-", input=output.encode(), env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.decode("utf-8"))  # strict: no surrogate, no stray byte
    assert "caf\u00e9" in json.dumps(report, ensure_ascii=False)
    assert b"\xed\xa0\x80" not in done.stdout  # no surrogate encoded as if it were a character


def test_text_output_survives_an_ascii_terminal(tmp_path: Path) -> None:
    """Text output with non-ASCII content to an ASCII-only stdout: escaped, never a crash"""
    path = write(
        tmp_path / "o.txt", envelope(proposed_goal="R\u00e9sum\u00e9 \u2713", summary="x (memory)")
    )
    done = run_cli("bundle", "check", str(path), env={"PYTHONIOENCODING": "ascii:strict"})
    assert done.returncode == 0, done.stderr
    assert "R\\xe9sum\\xe9 \\u2713" in done.stdout


# ---------------------------------------------------------------------- files that are not files


def test_bundle_check_of_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    """bundle check of a FIFO: refused at once (never waits for a writer), exit 2"""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert_one_line_exit_2(run_cli("bundle", "check", str(fifo), timeout=20), "not a regular file")


def test_bundle_check_of_a_device_is_refused_at_once() -> None:
    """bundle check of /dev/zero: refused at once (it never ends), exit 2"""
    assert_one_line_exit_2(
        run_cli("bundle", "check", "/dev/zero", timeout=20), "not a regular file"
    )


def test_bundle_check_of_a_1gb_file_is_refused_at_once(tmp_path: Path) -> None:
    """bundle check of a 1 GB file (sparse): refused at its first 8 MiB, exit 2"""
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(1 << 30)
    assert_one_line_exit_2(run_cli("bundle", "check", str(big), timeout=30), "more than 8 MiB")


def test_bundle_check_of_20mb_on_stdin_is_refused() -> None:
    """20 MB on stdin: refused at its first 8 MiB, exit 2"""
    done = run_cli("bundle", "check", "-", input=b"x" * 20_000_000, timeout=30)
    assert_one_line_exit_2(done, "stdin holds more than 8 MiB")


@pytest.mark.parametrize("command", [("scout", "plan my week"), ("eval", "--dataset", "{fifo}")])
def test_a_fifo_as_agent_or_dataset_is_refused_at_once(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    """--agent or --dataset naming a FIFO: refused at once, exit 2"""
    fifo = tmp_path / "agent.toml"
    os.mkfifo(fifo)
    args = [arg.replace("{fifo}", str(fifo)) for arg in command]
    if command[0] == "scout":
        args += ["--agent", str(fifo)]
    assert_one_line_exit_2(run_cli(*args, timeout=20), "not a regular file")
