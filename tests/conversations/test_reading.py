"""Reading an export: any encoding survives, sizes are bounded, odd files are refused."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.conversations import read_export
from supercontext_lab.conversations import reading as reading_module
from supercontext_lab.conversations.records import MAX_TURN_CHARS, conversation_id, iso_time

from .conftest import Ran, assert_refused

TEXT = "Ünïcödé — 日本語 — עברית — emoji 🐟 — “quotes”"
LINE = {"conversation_id": "c", "role": "user", "content": TEXT}


def _jsonl(content: str = TEXT) -> str:
    line = {**LINE, "content": content}
    return json.dumps(line, ensure_ascii=False) + "\n" + json.dumps(line, ensure_ascii=False)


@pytest.mark.parametrize(
    "encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"]
)
def test_unicode_encodings_read_back_the_same_text(
    encoding: str, write: Callable[[str, Any], Path]
) -> None:
    path = write(f"{encoding}.jsonl", _jsonl().encode(encoding))
    (conversation,) = read_export(path).conversations
    assert conversation.turns[0].content == TEXT


def test_a_legacy_encoding_and_a_damaged_utf8_file_still_import(
    write: Callable[[str, Any], Path],
) -> None:
    latin = write("cp1252.jsonl", _jsonl("Café — crème brûlée").encode("cp1252"))
    assert read_export(latin).conversations[0].turns[0].content == "Café — crème brûlée"
    damaged = _jsonl().encode("utf-8").replace("日".encode(), b"\xff\xfe\xfd")
    (conversation,) = read_export(write("damaged.jsonl", damaged)).conversations
    assert "本語" in conversation.turns[0].content and "\ufffd" in conversation.turns[0].content


def test_surrogates_nul_and_control_characters_are_kept_or_made_safe(
    write: Callable[[str, Any], Path],
) -> None:
    raw = '{"conversation_id": "c", "role": "user", "content": "a\\ud800b\\u0000c\\u001b[2Jd"}'
    (conversation,) = read_export(write("odd.jsonl", raw + "\n" + raw)).conversations
    assert conversation.turns[0].content == "a\ufffdb\ufffdc\x1b[2Jd"
    conversation.turns[0].content.encode("utf-8")  # storable


def test_a_turn_longer_than_the_limit_is_cut_at_a_break(write: Callable[[str, Any], Path]) -> None:
    sentence = "The soil cores stay at minus eighty. "
    long = sentence * (MAX_TURN_CHARS // len(sentence) + 50)
    (conversation,) = read_export(write("long.jsonl", _jsonl(long))).conversations
    kept = conversation.turns[0].content
    assert len(kept) <= MAX_TURN_CHARS
    assert kept.endswith("minus eighty.")


def test_bounds_and_odd_files_are_refused(
    cli: Callable[..., Ran],
    write: Callable[[str, Any], Path],
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert_refused(
        cli("memory", "import", str(folder), "--workspace", str(workspace)), "is a folder"
    )
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert_refused(
        cli("memory", "import", str(fifo), "--workspace", str(workspace)), "cannot be read"
    )
    deep = write("deep.json", "[" * 10_000 + "]" * 10_000)
    assert_refused(cli("memory", "import", str(deep), "--workspace", str(workspace)), "refused")
    empty = write("empty.json", "  \n")
    assert_refused(cli("memory", "import", str(empty), "--workspace", str(workspace)), "is empty")
    nan = write("nan.json", '[{"role": "user", "content": NaN}]')
    assert_refused(cli("memory", "import", str(nan), "--workspace", str(workspace)), "NaN")
    unknown = write("unknown.json", {"hello": "world"})
    assert_refused(
        cli("memory", "import", str(unknown), "--workspace", str(workspace)),
        "is not a format the lab can import",
        "--format",
    )
    monkeypatch.setattr(reading_module, "MAX_IMPORT_BYTES", 100)
    big = write("big.jsonl", _jsonl())
    assert_refused(cli("memory", "import", str(big), "--workspace", str(workspace)), "split it")
    missing = cli("memory", "import", str(tmp_path / "nope.json"), "--workspace", str(workspace))
    assert_refused(missing, "no such file")
    no_workspace = cli("memory", "import", str(big), "--workspace", str(tmp_path / "nowhere"))
    assert_refused(no_workspace, "workspace folder not found")
    assert not (workspace / ".supercontext" / "conversations.sqlite3").exists()


def test_ids_are_kept_when_safe_and_rewritten_apart_when_not() -> None:
    assert conversation_id("answer_sharegpt_hA7AkP3_0") == "answer_sharegpt_hA7AkP3_0"
    odd = conversation_id("my chat (copy) [2]")
    assert odd.startswith("my-chat-copy-2-") and " " not in odd
    assert conversation_id("my chat (copy) [3]") != odd
    assert len(conversation_id("x" * 500)) <= 96
    with pytest.raises(ValueError, match="must not be empty"):
        conversation_id("   ")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1_700_000_000, "2023-11-14T22:13:20Z"),
        (1_700_000_000_000, "2023-11-14T22:13:20Z"),
        ("2023/05/28 (Sun) 06:27", "2023-05-28T06:27"),
        ("2023-05-28", "2023-05-28T00:00:00"),
        ("2024-03-01T09:00:00Z", "2024-03-01T09:00:00Z"),
        ("last Tuesday", None),
        (float("nan"), None),
        (True, None),
        (-5, None),
    ],
)
def test_times_are_read_as_iso_8601(value: object, expected: str | None) -> None:
    assert iso_time(value) == expected


def test_json_values_are_split_where_each_closes() -> None:
    from supercontext_lab.conversations.reading import json_values

    pretty = '{\n "a": "}{"\n}\n\n{\n "c": [1]\n}\n{"b": "\\"]"}'
    assert list(json_values(pretty, "f")) == [
        ("line 1", {"a": "}{"}),
        ("line 5", {"c": [1]}),
        ("line 8", {"b": '"]'}),
    ]
    lines = list(json_values('{"a": 1}\n{"b": 2}\n', "f"))
    assert lines == [("line 1", {"a": 1}), ("line 2", {"b": 2})]
    assert list(json_values('\n [1, {"x": 2}]\n', "f")) == [("line 2", [1, {"x": 2}])]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1}\n{"b":\n', "f: line 2 is not valid JSON"),
        ('{"a": 1}\n7\n', "f: line 2: must be a JSON object"),
        ("[1]\n{}", "f: line 1: must be a JSON object"),
        ('{"a": "never closed', "f: line 1 is not valid JSON"),
    ],
    ids=["unclosed", "a number after an object", "a list before one", "an unclosed string"],
)
def test_json_values_name_the_value_that_is_wrong(text: str, message: str) -> None:
    from supercontext_lab.conversations.reading import json_values
    from supercontext_lab.errors import ConversationImportError

    with pytest.raises(ConversationImportError, match=message):
        list(json_values(text, "f"))


def test_json_values_stop_at_the_first_value_refused() -> None:
    """What follows a refused value is never parsed: a file of a million numbers costs
    one error, not a million values."""
    from supercontext_lab.conversations import reading as module
    from supercontext_lab.errors import ConversationImportError

    parsed: list[str] = []
    real = module.load_json

    def counting(text: str, source: str, what: str = "the file") -> object:
        parsed.append(what)
        return real(text, source, what)

    values = module.json_values('{"a": 1}\n' + "7\n" * 1_000_000, "f")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "load_json", counting)
        with pytest.raises(ConversationImportError, match="line 2: must be a JSON object"):
            list(values)
    assert parsed == ["line 1", "line 2"]
