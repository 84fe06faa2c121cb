"""Server-sent events of a streamed chat completion: line parsing and delta accumulation.

A streamed completion is a series of ``data: {chunk}`` lines ending with ``data: [DONE]``.
Text arrives as ``delta.content`` pieces; tool calls arrive as ``delta.tool_calls``
entries keyed by ``index``, whose ``id`` and ``function.name`` come first and whose
``function.arguments`` come in pieces to be joined per index. Usage, when the server
reports it, rides on the last chunk (often one with no choices at all).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelError
from .base import Message, ModelReply, ToolCall, Usage
from .wire import arguments_text, content_text, excerpt, usage_from_openai

__all__ = ["DONE", "StreamAccumulator", "sse_data"]

DONE = "[DONE]"


def sse_data(line: str) -> str | None:
    """The payload of a ``data:`` line, or ``None`` for any other line.

    Comments (``: keep-alive``), blank lines and ``event:``/``id:``/``retry:`` fields
    carry nothing a completion needs. One space after the colon is dropped, as the SSE
    specification says.
    """
    if not line.startswith("data:"):
        return None
    value = line[5:]
    if value.startswith(" "):
        value = value[1:]
    return value.rstrip("\r\n")


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAccumulator:
    """Folds streamed chunks into one :class:`ModelReply`.

    ``received_content`` turns true with the first text or tool-call delta: from then on a
    failed stream must not be retried, since the text may already have been shown.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None
        self.received_content = False

    def feed(self, chunk: Any) -> str:
        """Fold one decoded chunk in and return its text delta (``""`` when it has none).

        Raises :class:`ModelError` for a chunk of the wrong shape or one carrying an error.
        """
        if not isinstance(chunk, Mapping):
            raise ModelError(f"a stream chunk that is not a JSON object ({type(chunk).__name__})")
        error = chunk.get("error")
        if error:
            detail = error.get("message", error) if isinstance(error, Mapping) else error
            raise ModelError(f"an error in the stream: {excerpt(str(detail))}")
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self.model = model
        if isinstance(chunk.get("usage"), Mapping):
            self.usage = usage_from_openai(chunk["usage"])
        choices = chunk.get("choices")
        if choices is None:
            return ""
        if not isinstance(choices, list):
            raise ModelError("a stream chunk whose 'choices' is not a list")
        pieces: list[str] = []
        for choice in choices:
            if not isinstance(choice, Mapping):
                raise ModelError("a stream chunk whose choice is not a JSON object")
            if choice.get("index", 0) != 0:
                continue  # the lab never asks for n > 1; other choices are not ours
            delta = choice.get("delta")
            if delta is None:
                delta = {}
            if not isinstance(delta, Mapping):
                raise ModelError("a stream chunk whose 'delta' is not a JSON object")
            text = content_text(delta.get("content"))
            if text:
                pieces.append(text)
                self._text.append(text)
                self.received_content = True
            calls = delta.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list):
                    raise ModelError("a stream chunk whose 'tool_calls' is not a list")
                for position, call in enumerate(calls):
                    self._fold_call(call, position)
            finish = choice.get("finish_reason")
            if isinstance(finish, str) and finish:
                self.finish_reason = finish
        return "".join(pieces)

    def _fold_call(self, call: Any, position: int) -> None:
        if not isinstance(call, Mapping):
            raise ModelError("a streamed tool call that is not a JSON object")
        index = call.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            index = position
        partial = self._calls.setdefault(index, _PartialCall())
        ident = call.get("id")
        if isinstance(ident, str) and ident and not partial.id:
            partial.id = ident
        function = call.get("function")
        if function is None:
            function = {}
        if not isinstance(function, Mapping):
            raise ModelError("a streamed tool call whose 'function' is not a JSON object")
        name = function.get("name")
        # Most servers send the name once; some repeat it on every chunk (ignored), and a
        # few split it, in which case the pieces are joined like the arguments.
        if isinstance(name, str) and name and name != partial.name:
            partial.name += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            partial.arguments.append(arguments)
        elif arguments is not None:
            partial.arguments.append(arguments_text(arguments))
        self.received_content = True

    def build(self, default_model: str = "") -> ModelReply:
        """The reply assembled from everything fed so far."""
        calls: list[ToolCall] = []
        for position, index in enumerate(sorted(self._calls)):
            partial = self._calls[index]
            if not partial.name:
                raise ModelError(f"a streamed tool call without a function name (index {index})")
            calls.append(
                ToolCall(
                    id=partial.id or f"call_{position + 1}",
                    name=partial.name,
                    arguments=arguments_text("".join(partial.arguments)),
                )
            )
        text = "".join(self._text)
        message = Message(
            role="assistant",
            content=text if text or not calls else None,
            tool_calls=tuple(calls),
        )
        return ModelReply(
            message=message,
            usage=self.usage or Usage(),
            finish_reason=self.finish_reason,
            model=self.model or default_model,
        )
