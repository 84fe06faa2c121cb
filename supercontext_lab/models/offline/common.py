"""What the offline models share: a name, the :class:`ModelInfo` it makes, the protocol's
``complete`` turned into one :class:`~..request.ChatRequest`, nothing to close."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..base import Message, ModelInfo, ModelReply, ToolSpec
from ..choices import BundleChoices
from ..request import ChatRequest

__all__ = ["OFFLINE_CONTEXT_TOKENS", "OfflineModel"]

OFFLINE_CONTEXT_TOKENS = 32_768
"""The context window the offline models declare. They read in this process and have no
window of their own; they are sent what a mid-sized hosted model would be, so a run on
them shows what the cuts of a megabyte note leave."""


class OfflineModel:
    """The part of an offline model that is not its algorithm (:meth:`answer`): it runs
    in this process, offers tools natively, emits free text and holds nothing to release."""

    def __init__(self, *, name: str) -> None:
        self._info = ModelInfo(label=name, context_tokens=OFFLINE_CONTEXT_TOKENS)

    @property
    def name(self) -> str:
        """The display name given at construction."""
        return self._info.label

    @property
    def info(self) -> ModelInfo:
        """An in-process model: no server, no cache identity beyond its code."""
        return self._info

    def close(self) -> None:
        """Nothing to release."""

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        on_text: Callable[[str], None] | None = None,
        choices: BundleChoices | None = None,
    ) -> ModelReply:
        """Answer at once (a deterministic algorithm needs no timeout and no temperature)."""
        request = ChatRequest(
            tuple(messages), tuple(tools or ()), tool_choice, temperature, choices
        )
        return self.answer(request, on_text)

    def answer(self, request: ChatRequest, on_text: Callable[[str], None] | None) -> ModelReply:
        """The model's reply to ``request``; ``on_text`` gets its text."""
        raise NotImplementedError
