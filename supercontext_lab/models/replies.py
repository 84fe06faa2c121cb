"""Reading a model server's reply: a JSON body, or an SSE stream, under the attempt's deadline.

:class:`ReplyReading` is mixed into the OpenAI-compatible model: it reads a body or a
stream into a :class:`~supercontext_lab.models.base.ModelReply`, and words every
malformed or cut reply through :class:`~.failures.ServerFailures`, never quoting the key.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from .._bounded import json_loads
from .._http import read_body
from ..errors import ModelError
from .base import ModelReply
from .failures import AttemptFailure, ServerFailures, unquoted_cause
from .sse import DONE, StreamAccumulator, sse_data
from .wire import completion_from_openai

__all__ = ["ReplyReading"]


class ReplyReading(ServerFailures):
    """Turns a server's response into a reply, or into the failure it stands for."""

    def _read_body(self, response: httpx.Response, ends: float, seconds: float) -> bytes:
        body, _ = read_body(
            response, deadline=ends, on_deadline=lambda: self._timeout_failure(seconds)
        )
        return body

    def _parse_completion(self, body: bytes, status: int, key: str) -> ModelReply:
        try:
            data = json_loads(body)
        except ValueError as exc:
            raise self._bad_body(status, "a body that is not JSON", body, key) from exc
        try:
            return completion_from_openai(data, default_model=self.model)
        except ModelError as exc:
            raise self._bad_body(status, str(exc), body, key) from unquoted_cause(exc, key)

    def _read_stream(
        self,
        response: httpx.Response,
        ends: float,
        seconds: float,
        on_text: Callable[[str], None] | None,
        key: str,
    ) -> ModelReply:
        received = StreamAccumulator()
        done = False
        saw_data = False
        stray: list[str] = []
        try:
            for line in response.iter_lines():
                if time.monotonic() > ends:
                    self._stream_timeout(received, seconds)
                data = sse_data(line)
                if data is None:
                    if line.strip() and sum(map(len, stray)) < 400:
                        stray.append(line)
                    continue
                saw_data = True
                if data.strip() == DONE:
                    done = True
                    break
                try:
                    chunk = json_loads(data)
                except ValueError as exc:
                    raise self._bad_body(
                        response.status_code, "a stream chunk that is not JSON", data.encode(), key
                    ) from exc
                try:
                    delta = received.feed(chunk)
                except ModelError as exc:
                    raise self._bad_body(
                        response.status_code, str(exc), data.encode(), key
                    ) from unquoted_cause(exc, key)
                if delta and on_text is not None:
                    on_text(delta)
        except httpx.TimeoutException as exc:
            if received.received_content:
                self._stream_timeout(received, seconds, exc)
            raise
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            if received.received_content:
                raise self._ended_early() from exc
            raise
        if not done and received.finish_reason is None:
            if not saw_data:
                body = "\n".join(stray).encode()
                raise self._bad_body(
                    response.status_code, "a body that is not an event stream", body, key
                )
            if received.received_content:
                raise self._ended_early()
            raise AttemptFailure(
                f"The stream from the model server at {self._shown_url} ended before any content",
                f"Is the server running at {self._shown_base}?",
                retryable=True,
            )
        try:
            return received.build(default_model=self.model)
        except ModelError as exc:
            raise self._bad_body(response.status_code, str(exc), b"", key) from unquoted_cause(
                exc, key
            )
