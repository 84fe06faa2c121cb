"""What the tests of past conversations share: a workspace, files, the CLI in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.cli import main
from supercontext_lab.conversations import Conversation, ConversationStore, Turn, open_store


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace folder holding one note, so that notes and transcripts meet."""
    root = tmp_path / "ws"
    (root / "memory" / "global").mkdir(parents=True)
    (root / "memory" / "global" / "freezer.md").write_text(
        "The lab freezer is at minus eighty and holds the soil cores.\n", encoding="utf-8"
    )
    return root


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, Any], Path]:
    """Write ``data`` (JSON unless it is text or bytes) to ``tmp_path/<name>``."""

    def writer(name: str, data: Any) -> Path:
        path = tmp_path / name
        if isinstance(data, bytes):
            path.write_bytes(data)
        elif isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        return path

    return writer


@dataclass(frozen=True)
class Ran:
    """One run of the command line: its exit status and what it printed."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """Run ``supercontext-lab ARGS`` in this process."""

    def run(*args: str) -> Ran:
        code = main(list(args))
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run


def stored(root: Path) -> ConversationStore:
    """The transcript store of the workspace ``root`` (which must have one)."""
    store = open_store(root, create=False)
    assert store is not None, "the workspace has no transcript store"
    return store


def assert_refused(ran: Ran, *needles: str) -> None:
    """Bad input: exit 2, one line on stderr naming the problem, nothing on stdout."""
    assert ran.code == 2, (ran.code, ran.out, ran.err)
    assert ran.out == ""
    lines = ran.err.splitlines()
    assert len(lines) == 1, ran.err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def poster_conversation(ident: str = "c1", *extra: str) -> Conversation:
    """One conversation about the Lund poster (``extra`` user turns after it)."""
    turns = [
        Turn("user", "Which palette did we choose for the Lund symposium poster?"),
        Turn("assistant", "The teal palette; Jonas prints the poster on 3 June."),
        *(Turn("user", text) for text in extra),
    ]
    return Conversation(ident, "Poster", "2024-05-01", tuple(turns), "test")
