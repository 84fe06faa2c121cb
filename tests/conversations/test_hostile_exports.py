"""Hostile exports parse in linear time, in a child process with a time limit.

Each class is built to make a careless reader slow or deep: a ChatGPT tree whose branch
is fifty thousand nodes long (or loops back on itself), a megabyte of brackets, a hundred
thousand JSONL message lines, a turn of ten megabytes, a jupyterlab-chat file of fifty
thousand senders. Each is parsed in a fresh interpreter that is killed after a
minute, so a quadratic reader fails the test instead of holding the suite; within it,
the hostile file must take no more than a generous multiple of a harmless one of the
same size. Then the command line on one of them: one line, exit 2, and a terminal that
never receives a control character a title carried.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.support import timed_in_child

from .conftest import Ran

ABSOLUTE_S = 10.0
RELATIVE = 12.0

_CHILD = """
import json, sys, time
from supercontext_lab.conversations import parse_export
from supercontext_lab.errors import ConversationImportError
from tests.conversations.test_hostile_exports import BUILDERS, harmless
name = sys.argv[1]
out = []
for text in (BUILDERS[name](), harmless()):
    # CPU time of this process: other work on the machine does not count against it.
    started = time.process_time()
    try:
        parse_export(text, source="x")
    except ConversationImportError:
        pass
    out.append(time.process_time() - started)
print(json.dumps(out))
"""

_NODES = 50_000


def _chatgpt_chain(loop: bool = False) -> str:
    mapping: dict[str, Any] = {}
    for i in range(_NODES):
        role = "user" if i % 2 else "assistant"
        mapping[f"n{i}"] = {
            "id": f"n{i}",
            "parent": f"n{i - 1}" if i else (f"n{_NODES - 1}" if loop else None),
            "children": [f"n{i + 1}"] if i + 1 < _NODES else [],
            "message": {
                "author": {"role": role},
                "content": {"content_type": "text", "parts": ["x y"]},
            },
        }
    return json.dumps([{"title": "t", "mapping": mapping, "current_node": f"n{_NODES - 1}"}])


def _jsonl_messages() -> str:
    return "\n".join(
        json.dumps({"conversation_id": f"c{i % 1000}", "role": "user", "content": "hello there"})
        for i in range(100_000)
    )


def _huge_turn() -> str:
    return json.dumps({"messages": [{"role": "user", "content": "word " * 2_000_000}]})


def _many_senders() -> str:
    messages = [
        {"type": "msg", "id": str(i), "time": i, "sender": f"user{i}", "body": "hi"}
        for i in range(50_000)
    ]
    return json.dumps({"messages": messages, "users": {}})


BUILDERS: dict[str, Callable[[], str]] = {
    "a chatgpt branch of 50,000 nodes": _chatgpt_chain,
    "a chatgpt branch that loops": lambda: _chatgpt_chain(loop=True),
    "a megabyte of brackets": lambda: "[" * 1_000_000,
    "100,000 message lines": _jsonl_messages,
    "a ten-megabyte turn": _huge_turn,
    "50,000 senders in one chat": _many_senders,
}


def harmless() -> str:
    """An ordinary export of about the same size as the hostile ones: many short chats."""
    return "\n".join(
        json.dumps({"id": f"c{i}", "messages": [{"role": "user", "content": "A question. " * 20}]})
        for i in range(10_000)
    )


@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_hostile_export_parses_in_linear_time(name: str) -> None:
    hostile_s, harmless_s = timed_in_child(_CHILD, name, what=f"parsing {name}", timeout=60)
    assert hostile_s < ABSOLUTE_S, f"{name}: {hostile_s:.2f} s"
    assert hostile_s < max(RELATIVE * harmless_s, 0.5), (
        f"{name}: {hostile_s * 1e3:.0f} ms, a harmless export {harmless_s * 1e3:.0f} ms"
    )


def test_a_title_never_reaches_the_terminal_raw(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    title = "Quarterly \x1b[2J\x1b]0;owned\x07 review \u202e\x9b31m"
    path = write(
        "evil.jsonl",
        json.dumps(
            {
                "id": "e\x1bvil",
                "title": title,
                "messages": [{"role": "user", "content": "Clear the screen \x1b[2J please"}],
            }
        )
        + "\n",
    )
    imported = cli("memory", "import", str(path), "--workspace", str(workspace))
    assert imported.code == 0
    listed = cli("memory", "list", "--conversations", "--workspace", str(workspace))
    for shown in (imported.out, listed.out):
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
        assert "\x9b" not in shown
    assert "\\x1b[2J" in listed.out
    as_json = cli("memory", "list", "--conversations", "--workspace", str(workspace), "--json")
    assert "\x1b" not in as_json.out
    (row,) = as_json.json()["conversations"]
    assert row["title"].startswith("Quarterly \x1b[2J")
    assert row["id"].startswith("e-vil-")
