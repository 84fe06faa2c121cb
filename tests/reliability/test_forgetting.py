"""Forgetting a past conversation erases it: no byte of it in any file the lab writes.

A password said in a chat was still on disk after ``memory forget --conversation ID``:
in the memory index's FTS5 data as search terms, in both write-ahead logs while a session
was open, and in the lab home's response cache, where an earlier ``eval`` had kept the
replies built from it. Each case imports a chat holding a unique secret, runs an
evaluation that recalls it (so replies and results built from it are cached), forgets
it, and reads the raw bytes of every file under the workspace's ``.supercontext/`` and
the lab home: the secret, in any case, must be in none of them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from supercontext_lab.conversations import store_for
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace

from .support import INDEX_DIR, run_cli, write

SECRET = "Zq7xKestrelSecret91"
OTHER = "The lab freezer code is 4471 and the freezer holds the soil cores."


def _files(*folders: Path) -> Iterator[Path]:
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                yield path


def _holding(secret: str, *folders: Path) -> list[str]:
    """The files under ``folders`` whose bytes hold ``secret``, in any letter case."""
    needle = secret.lower().encode("ascii")
    return [str(path) for path in _files(*folders) if needle in path.read_bytes().lower()]


def _prepare(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with a chat holding :data:`SECRET` (and one without it), and an
    evaluation run that recalled it."""
    root = build_workspace(
        tmp_path / "ws",
        {"memory/global/budget.md": "The grant renewal budget is 40k.\n"},
    )
    chats = [
        {
            "conversation_id": "vault-chat",
            "role": "user",
            "content": "What is the grant portal password?",
        },
        {
            "conversation_id": "vault-chat",
            "role": "assistant",
            "content": f"The grant portal password is {SECRET} for the renewal budget.",
        },
        {"conversation_id": "freezer-chat", "role": "user", "content": OTHER},
    ]
    export = write(tmp_path / "chats.jsonl", "\n".join(json.dumps(c) for c in chats) + "\n")
    done = run_cli("memory", "import", str(export), "--workspace", str(root))
    assert done.returncode == 0, done.stderr
    case = {"id": "pw", "message": "What is the grant portal password for the renewal budget?"}
    dataset = write(tmp_path / "cases.jsonl", json.dumps(case) + "\n")
    done = run_cli(
        "eval", "--dataset", str(dataset), "--workspace", str(root), "--json", timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return root, Path(os.environ["SUPERCONTEXT_LAB_HOME"])


@pytest.mark.parametrize("session", ["closed", "open"])
def test_forget_leaves_no_byte_of_the_conversation(tmp_path: Path, session: str) -> None:
    """A password in a chat, cached by an eval, forgotten (a session open or not): in no file

    No file of .supercontext/ or the lab home holds it, in any letter case; a session
    holding the index and the store open keeps both write-ahead logs in place."""
    root, home = _prepare(tmp_path)
    index = root / INDEX_DIR
    before = _holding(SECRET, index, home)
    # What the secret was in before: the index, the store and the lab home's cache.
    assert any(p.endswith("memory.sqlite3") for p in before), before
    assert any(p.endswith("conversations.sqlite3") for p in before), before
    assert any(p.startswith(str(home)) for p in before), before
    with ExitStack() as stack:
        if session == "open":
            # A kernel still holding the workspace: its connections keep both logs.
            workspace = Workspace(root)
            stack.callback(workspace.memory.close)
            store = store_for(workspace)
            assert store is not None
            stack.callback(store.close)
            assert workspace.memory.recall("conversations", "grant portal password")
            assert store.info("vault-chat") is not None
            assert (index / "memory.sqlite3-wal").exists()
            assert (index / "conversations.sqlite3-wal").exists()
        done = run_cli("memory", "forget", "--conversation", "vault-chat", "--workspace", str(root))
        assert done.returncode == 0, done.stderr
        assert _holding(SECRET, index, home) == []
        if session == "open":
            assert store.info("vault-chat") is None
            assert store.info("freezer-chat") is not None
    assert _holding(SECRET, index, home) == []
    # What was not forgotten stays, and is still found.
    assert _holding("4471", index)
    done = run_cli("memory", "list", "--conversations", "--workspace", str(root), "--json")
    assert [c["id"] for c in json.loads(done.stdout)["conversations"]] == ["freezer-chat"]
