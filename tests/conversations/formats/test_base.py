"""What every format shares: the bounds of one import hold whichever format it is in."""

from __future__ import annotations

import json

import pytest

from supercontext_lab.conversations.formats import base, parse_export
from supercontext_lab.errors import ConversationImportError


def test_too_many_conversations_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_CONVERSATIONS", 2)
    lines = "\n".join(
        json.dumps({"id": f"c{i}", "messages": [{"role": "user", "content": "x"}]})
        for i in range(3)
    )
    with pytest.raises(ConversationImportError, match="more than 2 conversations"):
        parse_export(lines, source="many.jsonl")
