"""Imports of past conversations: a killed update, a second export of the same name, and
OpenAI messages laid out as JSON allows.

* An update import (a changed file imported again) killed while the old turns were taken
  out of the index left thousands of them there, and the next run said "unchanged".
* A different ``conversations.json`` (another account, another person) imported into the
  same workspace replaced the first file's conversations ("2 updated") without a word:
  conversations without an id of their own were named after the file.
* OpenAI messages one object each, spread over several lines or in a JSON array, were
  refused with exit 2 even with ``--format openai-jsonl``, or merged into one conversation.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from supercontext_lab.conversations import NAMESPACE, open_store
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.testing import build_workspace

from .support import REPO, run_cli, write

# The child imports FILE into WORKSPACE and kills itself (SIGKILL, no cleanup of any kind)
# just before the memory index runs its KILL_AT-th "DELETE FROM docs": in the middle of
# taking the old turns out, wherever the import does that.
_KILLED_IMPORT = textwrap.dedent(
    """
    import os, signal, sqlite3, sys

    file, workspace, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    connect = sqlite3.connect
    deletes = 0

    def trace(statement):
        global deletes
        if statement.lstrip().upper().startswith("DELETE FROM DOCS"):
            deletes += 1
            if deletes == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    def traced(*args, **kwargs):
        conn = connect(*args, **kwargs)
        if str(args[0]).endswith("memory.sqlite3"):
            conn.set_trace_callback(trace)
        return conn

    sqlite3.connect = traced
    from supercontext_lab.conversations import import_conversations

    print(import_conversations(file, workspace).summary())
    """
)


def _conversation(turns: int, word: str) -> str:
    lines = []
    for i in range(turns):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"Turn {i} of the long chat about the {word} freezer inventory."
        lines.append(json.dumps({"conversation_id": "long", "role": role, "content": text}))
    return "\n".join(lines) + "\n"


def _indexed(root: Path) -> int:
    with MemoryTree(root) as memory:
        return memory.count(NAMESPACE)


@pytest.mark.parametrize("kill_at", [1, 100, 2000])
def test_a_killed_update_import_leaves_no_stale_turn(tmp_path: Path, kill_at: int) -> None:
    """An update import from 3,000 turns to 10, killed with SIGKILL at the 1st, 100th or
    2,000th index delete, then run again: the index holds the 10 turns, the store agrees"""
    root = build_workspace(tmp_path / "ws", {"memory/global/note.md": "A note.\n"})
    export = write(tmp_path / "chat.jsonl", _conversation(3000, "old"))
    done = run_cli("memory", "import", str(export), "--workspace", str(root), timeout=300)
    assert done.returncode == 0, done.stderr
    assert _indexed(root) == 3000
    write(tmp_path / "chat.jsonl", _conversation(10, "new"))
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_IMPORT, str(export), str(root), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=dict(os.environ),
    )
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stdout, killed.stderr)
    again = run_cli("memory", "import", str(export), "--workspace", str(root), "--json")
    assert again.returncode == 0, again.stderr
    with open_store(root) as store:
        assert store.count_turns() == 10
        first = store.turns("long")[0].content
        assert first == "Turn 0 of the long chat about the new freezer inventory."
    assert _indexed(root) == 10
    # And the run after that has nothing left to do.
    last = run_cli("memory", "import", str(export), "--workspace", str(root), "--json")
    assert json.loads(last.stdout)["unchanged"] == ["long"]
    assert _indexed(root) == 10
