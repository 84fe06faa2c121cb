"""Reading a model server's reply: a JSON body, or an SSE stream, under the attempt's deadline.

A :class:`ReplyReader` reads a body or a stream into a
:class:`~supercontext_lab.models.base.ModelReply`, and words every malformed or cut reply
through the :class:`~.failures.FailureWording` of the call, which never quotes a secret.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from .._bounded import json_loads
from .._http import read_body
from ..errors import ModelError
from .base import ModelReply
from .failures import FailureWording
from .sse import DONE, StreamAccumulator, sse_data
from .wire import completion_from_openai

__all__ = ["ReplyReader"]

_STRAY_CHARS = 400
"""How much of a body that is not an event stream is kept to quote in the error."""


@dataclass(frozen=True)
class ReplyReader:
    """Turns a server's response into a reply, or into the failure it stands for.

    ``seconds`` is the attempt's budget and ``ends`` the ``time.monotonic()`` at which it
    runs out; ``default_model`` names the reply when the server does not.
    """

    wording: FailureWording
    default_model: str
    ends: float
    seconds: float

    def body(self, response: httpx.Response) -> bytes:
        """The whole body, read before the attempt's deadline."""
        body, _ = read_body(
            response, deadline=self.ends, on_deadline=lambda: self.wording.timeout(self.seconds)
        )
        return body

    def completion(self, body: bytes, status: int) -> ModelReply:
        """A ``chat.completion`` body as a reply."""
        try:
            data = json_loads(body)
        except ValueError as exc:
            raise self.wording.unusable_reply(status, "a body that is not JSON", body) from exc
        try:
            return completion_from_openai(data, default_model=self.default_model)
        except ModelError as exc:
            raise self.wording.unusable_reply(
                status, str(exc), body
            ) from self.wording.secrets.unquoted(exc)

    def stream(self, response: httpx.Response, on_text: Callable[[str], None] | None) -> ModelReply:
        """An SSE stream as a reply; ``on_text`` gets each text delta as it arrives."""
        received = StreamAccumulator()
        try:
            done, saw_data, stray = self._fold(response, received, on_text)
        except httpx.TimeoutException as exc:
            if received.received_content:
                self.wording.stream_timeout(received, self.seconds, exc)
            raise
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            if received.received_content:
                raise self.wording.ended_early() from exc
            raise
        if not done and received.finish_reason is None:
            if not saw_data:
                body = "\n".join(stray).encode()
                raise self.wording.unusable_reply(
                    response.status_code, "a body that is not an event stream", body
                )
            if received.received_content:
                raise self.wording.ended_early()
            raise self.wording.empty_stream()
        try:
            return received.build(default_model=self.default_model)
        except ModelError as exc:
            raise self.wording.unusable_reply(
                response.status_code, str(exc), b""
            ) from self.wording.secrets.unquoted(exc)

    def _fold(
        self,
        response: httpx.Response,
        received: StreamAccumulator,
        on_text: Callable[[str], None] | None,
    ) -> tuple[bool, bool, list[str]]:
        """Feed every ``data:`` line to ``received``; returns whether ``[DONE]`` came,
        whether any data line came, and the start of what else came."""
        saw_data = False
        stray: list[str] = []
        for line in response.iter_lines():
            if time.monotonic() > self.ends:
                self.wording.stream_timeout(received, self.seconds)
            data = sse_data(line)
            if data is None:
                if line.strip() and sum(map(len, stray)) < _STRAY_CHARS:
                    stray.append(line)
                continue
            saw_data = True
            if data.strip() == DONE:
                return True, saw_data, stray
            try:
                chunk = json_loads(data)
            except ValueError as exc:
                raise self.wording.unusable_reply(
                    response.status_code, "a stream chunk that is not JSON", data.encode()
                ) from exc
            try:
                delta = received.feed(chunk)
            except ModelError as exc:
                raise self.wording.unusable_reply(
                    response.status_code, str(exc), data.encode()
                ) from self.wording.secrets.unquoted(exc)
            if delta and on_text is not None:
                on_text(delta)
        return False, saw_data, stray
