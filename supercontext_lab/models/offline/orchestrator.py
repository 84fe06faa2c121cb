"""The embedded offline orchestrator: answers from the prepared context, no network or key.

It says plainly that it is the offline model, and that it starts cold when no prepared
context came with the message. The prepared block is read where the harness put it: in
front of a user message, or in a system message after the last one (the ``system-tail``
placement). With no prepared context and ``memory_recall`` offered (the ``tool-only``
design) it goes through the tool loop as a model would: it calls ``memory_recall`` once
with the message's keywords, then answers from the hits it is sent back. Everything is
deterministic.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable, Sequence

from ..._text import one_line
from ...bundle import parse_context_bundle
from ...reading.facts import note_sentences
from ...reading.words import keywords
from ..base import Message, ModelReply, ToolCall, estimate_usage
from ..request import ChatRequest
from .common import OfflineModel

__all__ = ["OfflineOrchestratorModel"]

_RECALL = "memory_recall"
_RECALL_WORDS = 8
_RECALL_HITS = 5
_HEADER = "## Prepared context"

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
    context and says that it is the offline model. The one tool it calls is
    ``memory_recall``, when it has no prepared context and is offered it."""

    def __init__(self, *, name: str = "offline:orchestrator") -> None:
        super().__init__(name=name)

    def answer(self, call: ChatRequest, on_text: Callable[[str], None] | None) -> ModelReply:
        """Answer the last user message from the prepared context, or say it starts cold."""
        messages = call.messages
        users = [m.content or "" for m in messages if m.role == "user"]
        last_user = users[-1] if users else ""
        request = last_user.rsplit("\n---\n", 1)[-1].strip()
        after = _after_last_user(messages)
        # A system-tail block is this turn's; a prepended one travels with the first
        # message of the thread, and later turns still have it in the history.
        tail = next(
            (m.content or "" for m in after if m.role == "system" and _HEADER in (m.content or "")),
            "",
        )
        prepared = tail or next((text for text in reversed(users) if _HEADER in text), "")
        bundle = parse_context_bundle(prepared) if prepared else None
        recalled = [m.content or "" for m in after if m.role == "tool" and m.name == _RECALL]
        if bundle is None and not recalled and _can_recall(call):
            return self._recall(messages, request)
        lines = ["(offline orchestrator — a deterministic stand-in, not a language model)"]
        if bundle is None and recalled:
            lines.extend(_from_recall(recalled, request))
        elif bundle is None:
            lines.append(
                f"Starting cold: no prepared context came with “{one_line(request, 120, at_word=True)}”."
            )
            lines.append("With a real model configured I would gather context myself now.")
        elif prepared is not last_user and prepared is not tail:
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
        return self._reply(messages, "\n".join(lines), on_text)

    def _recall(self, messages: Sequence[Message], request: str) -> ModelReply:
        """The tool call of a turn with no prepared context: ``memory_recall`` over every
        namespace with the message's first keywords."""
        query = " ".join(keywords(request)[:_RECALL_WORDS]) or request[:200] or "notes"
        arguments = json.dumps({"namespace": "*", "query": query, "limit": _RECALL_HITS})
        reply = Message(
            role="assistant",
            content="",
            tool_calls=(ToolCall(id="recall-1", name=_RECALL, arguments=arguments),),
        )
        return ModelReply(reply, estimate_usage(messages, reply), "tool_calls", self.name)

    def _reply(
        self, messages: Sequence[Message], text: str, on_text: Callable[[str], None] | None
    ) -> ModelReply:
        if on_text is not None:
            for piece in re.findall(r"\S+\s*", text):
                on_text(piece)
        reply = Message(role="assistant", content=text)
        return ModelReply(reply, estimate_usage(messages, reply), "stop", self.name)


def _can_recall(call: ChatRequest) -> bool:
    """Whether ``memory_recall`` is offered with its schema (a ``query`` to fill): the one
    the harness runs. A catalogue entry shown with free arguments is never called."""
    if _RECALL not in call.callable_tools:
        return False
    spec = next(tool for tool in call.tools if tool.name == _RECALL)
    properties = spec.parameters.get("properties")
    return isinstance(properties, dict) and "query" in properties


def _after_last_user(messages: Sequence[Message]) -> list[Message]:
    """The messages after the last user message: this turn's tail and tool rounds."""
    last = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    return list(messages[last + 1 :])


def _from_recall(results: Sequence[str], request: str) -> list[str]:
    """The reply's lines from ``memory_recall`` results: each hit's first sentence, cited
    with its note (a result that is not the tool's JSON, cut or failed, gives none)."""
    facts: list[str] = []
    for text in results:
        try:
            hits = json.loads(text).get("hits", [])
        except (ValueError, AttributeError):
            continue
        for hit in hits if isinstance(hits, list) else []:
            if not isinstance(hit, dict) or not isinstance(hit.get("content"), str):
                continue
            sentences = note_sentences(hit["content"])
            if sentences:
                facts.append(f"{sentences[0]} (memory: {hit.get('namespace')}/{hit.get('key')})")
    about = one_line(request, 120, at_word=True)
    if not facts:
        return [f"Nothing in memory matched “{about}”; I would ask for more."]
    return [f"On “{about}”, from memory_recall:", *(_bullet(fact) for fact in facts[:4])]
