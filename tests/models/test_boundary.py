"""The model boundary: secret values removed, surrogates joined or replaced, streams held back
just long enough."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.models.base import Message, ModelReply, ToolCall
from supercontext_lab.models.boundary import (
    SECRET_MARKER,
    Secrets,
    TextStream,
    configured_secrets,
    encodable,
)
from supercontext_lab.routes import ModelRoute, set_model_route

KEY = "sk-boundary-0123456789abcdef"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("café 😀", "café 😀"),
        (json.loads('"a\\ud83db"'), "a\ufffdb"),
        ("\ud83d\ude00", "😀"),  # a pair as two code units: joined
        ("\ude00\ud83d", "\ufffd\ufffd"),  # the wrong order is no pair
        ("end\ud83d", "end\ufffd"),
    ],
)
def test_encodable(text: str, expected: str) -> None:
    assert encodable(text) == expected
    encodable(text).encode("utf-8")


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=30))
def test_encodable_always_encodes_and_keeps_what_was_fine(text: str) -> None:
    out = encodable(text)
    out.encode("utf-8")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert out == text


def test_secrets_are_masked_and_counted_and_short_values_ignored() -> None:
    secrets = Secrets([KEY, "short", ""])
    text, count = secrets.mask(f"{KEY} and again {KEY}; short stays")
    assert text == f"{SECRET_MARKER} and again {SECRET_MARKER}; short stays"
    assert count == 2
    assert repr(secrets) == "Secrets(1 values)" and KEY not in repr(secrets)
    assert not Secrets(["1234567"])  # seven characters: too short to be a secret


def test_a_key_containing_another_is_removed_whole() -> None:
    inner = KEY[:12]
    assert Secrets([inner, KEY]).mask(KEY) == (SECRET_MARKER, 1)


def test_a_reply_is_scrubbed_in_text_and_tool_calls() -> None:
    call = ToolCall("call_1", "memory_recall", json.dumps({"query": f"x {KEY}"}))
    lone = json.loads('"\\ud83d"')
    reply = ModelReply(Message("assistant", f"key {KEY}{lone}", (call,)), model=f"m{lone}")
    scrubbed = Secrets([KEY]).reply(reply)
    assert scrubbed.message.content == f"key {SECRET_MARKER}\ufffd"
    assert scrubbed.message.tool_calls[0].arguments == json.dumps({"query": f"x {SECRET_MARKER}"})
    assert scrubbed.model == "m\ufffd"
    assert scrubbed.redactions == 2


@pytest.mark.parametrize("cut", [1, 5, len(KEY) // 2, len(KEY) - 1])
def test_a_stream_holds_back_a_key_split_across_deltas(cut: int) -> None:
    shown: list[str] = []
    stream = TextStream(Secrets([KEY]), shown.append)
    for delta in ("Your key: ", KEY[:cut], KEY[cut:], " is fine."):
        stream.feed(delta)
        assert KEY not in "".join(shown)
    stream.flush()
    assert "".join(shown) == f"Your key: {SECRET_MARKER} is fine."


def test_a_stream_shows_text_that_only_looks_like_the_start_of_a_key() -> None:
    shown: list[str] = []
    stream = TextStream(Secrets([KEY]), shown.append)
    stream.feed("prefix sk-bound")
    assert "".join(shown) == "prefix "  # the rest may begin the key
    stream.feed("aries are fine")
    assert "".join(shown) == "prefix sk-boundaries are fine"
    stream.flush()
    assert "".join(shown) == "prefix sk-boundaries are fine"


@pytest.mark.parametrize("cut", [3, 9, 20])
def test_a_stream_holds_back_a_key_shape_split_across_deltas(cut: int) -> None:
    # No key configured: the shape alone is masked, however the deltas cut it.
    other = "sk-proj-Zx81Lq0P4eT7mN2vB6cR9"
    shown: list[str] = []
    stream = TextStream(Secrets(), shown.append)
    for delta in ("Authorization: Bearer ", other[:cut], other[cut:], " was pasted."):
        stream.feed(delta)
        assert other[cut - 2 :] not in "".join(shown)
    stream.flush()
    assert "".join(shown) == f"Authorization: Bearer {SECRET_MARKER} was pasted."


def test_a_stream_joins_a_surrogate_pair_split_across_deltas() -> None:
    shown: list[str] = []
    stream = TextStream(Secrets(), shown.append)
    high, low = json.loads('"\\ud83d"'), json.loads('"\\ude00"')
    stream.feed(f"smile {high}")
    stream.feed(f"{low}!")
    stream.feed(f"lone {high}")
    stream.flush()
    assert "".join(shown) == "smile 😀!lone \ufffd"
    for piece in shown:
        piece.encode("utf-8")


@given(st.lists(st.text(max_size=8), max_size=8), st.integers(0, 40))
def test_whatever_the_split_the_stream_shows_the_masked_text(pieces: list[str], at: int) -> None:
    text = "".join(pieces)
    text = text[:at] + KEY + text[at:]
    for size in (1, 3, 7):
        shown: list[str] = []
        stream = TextStream(Secrets([KEY]), shown.append)
        for start in range(0, len(text), size):
            stream.feed(text[start : start + size])
        stream.flush()
        assert "".join(shown) == Secrets([KEY]).masked(encodable(text))


def test_the_keys_config_toml_names_are_secrets_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCL_OTHER_KEY", "sk-other-route-key-42")
    set_model_route(
        "agentic",
        ModelRoute(
            kind="openai", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="SCL_OTHER_KEY"
        ),
    )
    assert configured_secrets() == ["sk-other-route-key-42"]
    assert Secrets.in_use(KEY).masked("sk-other-route-key-42 and " + KEY) == (
        f"{SECRET_MARKER} and {SECRET_MARKER}"
    )


def test_masked_data_masks_every_string_of_json_shaped_data_with_no_key_configured() -> None:
    data = {"envelope": "key sk-abc123def456ghi789jkl", "notes": ["Bearer abcdefghijklmnop123"]}
    masked = Secrets().masked_data(data)
    assert "sk-abc123def456ghi789jkl" not in str(masked)
    assert "abcdefghijklmnop123" not in str(masked)
    assert set(masked) == {"envelope", "notes"} and isinstance(masked["notes"], list)
