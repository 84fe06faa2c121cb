"""The embedded offline orchestrator: answers from the prepared context, no network or key.

It says plainly that it is the offline model, and that it starts cold when no prepared
context came with the message. Everything is deterministic.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

from ..._text import one_line
from ...bundle import parse_context_bundle
from ..base import Message, ModelReply, estimate_usage
from ..request import ChatRequest
from .common import OfflineModel

__all__ = ["OfflineOrchestratorModel"]

REPLY_WIDTH = 88
"""A bullet of the reply is wrapped at this many characters, its later lines indented
under its first word: a terminal or a chat bubble that wraps a longer line would start
the rest of the bullet at the margin, where it reads as a line of its own."""


def _bullet(fact: str) -> str:
    return textwrap.fill(
        fact,
        width=REPLY_WIDTH,
        initial_indent="  • ",
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )


class OfflineOrchestratorModel(OfflineModel):
    """A deterministic stand-in orchestrator for demos: it answers from the prepared
    context and says that it is the offline model. It never calls tools."""

    def __init__(self, *, name: str = "offline:orchestrator") -> None:
        super().__init__(name=name)

    def answer(self, call: ChatRequest, on_text: Callable[[str], None] | None) -> ModelReply:
        """Answer the last user message from the prepared context, or say it starts cold."""
        messages = call.messages
        users = [m.content or "" for m in messages if m.role == "user"]
        last_user = users[-1] if users else ""
        request = last_user.rsplit("\n---\n", 1)[-1].strip()
        # The prepared block travels with the first message of the thread; later turns
        # still have it in the history.
        prepared = next((text for text in reversed(users) if "## Prepared context" in text), "")
        bundle = parse_context_bundle(prepared) if prepared else None
        lines = ["(offline orchestrator — a deterministic stand-in, not a language model)"]
        if bundle is None:
            lines.append(
                f"Starting cold: no prepared context came with “{one_line(request, 120, at_word=True)}”."
            )
            lines.append("With a real model configured I would gather context myself now.")
        elif prepared is not last_user:
            lines.append(
                f"On “{one_line(request, 120, at_word=True)}”: I still have the context prepared "
                "at the start of this thread."
            )
            if bundle.proposed_goal:
                lines.append(f"Thread goal: {bundle.proposed_goal}")
        else:
            if bundle.proposed_goal:
                lines.append(f"Goal: {bundle.proposed_goal}")
            facts = [line.text for line in bundle.bullets]
            if facts:
                lines.append("What I already know:")
                lines.extend(_bullet(fact) for fact in facts[:4])
            if bundle.recommended_tool_calls:
                lines.append(
                    "Next I would call: "
                    + ", ".join(call.tool for call in bundle.recommended_tool_calls)
                )
            if bundle.recommended_skills:
                lines.append(
                    "Skills that fit: "
                    + ", ".join(
                        s.skill + ("" if s.installed else " (not installed)")
                        for s in bundle.recommended_skills
                    )
                )
            if bundle.has_enough_context is False:
                lines.append("Some context is still missing, so I would ask or look it up first.")
        text = "\n".join(lines)
        if on_text is not None:
            for piece in re.findall(r"\S+\s*", text):
                on_text(piece)
        reply = Message(role="assistant", content=text)
        return ModelReply(reply, estimate_usage(messages, reply), "stop", self.name)
