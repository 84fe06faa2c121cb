"""Conversation records (conversations/records.py): what may be stored."""

from __future__ import annotations

import pytest

from supercontext_lab.conversations.records import clean_text, clean_title, turn_from


@pytest.mark.parametrize(
    "key",
    ["sk-proj-Zx81Lq0P4eT7mN2vB6cR9", "AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1" * 18],
)
def test_a_key_in_a_turn_or_a_title_is_never_stored(key: str) -> None:
    assert clean_text(f"use {key} here") == "use [secret removed] here"
    assert turn_from("user", f"my key: {key}").content == "my key: [secret removed]"
    assert clean_title(f"About {key}", ()) == "About [secret removed]"


def test_clean_text_still_repairs_and_keeps_plain_text() -> None:
    assert clean_text("a\x00b") == "a\ufffdb"
    assert clean_text("The budget is 40k.") == "The budget is 40k."
