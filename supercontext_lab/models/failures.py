"""How an attempt to reach an OpenAI-compatible server fails, and what the user is told.

A failed attempt is an :class:`AttemptFailure` (what happened, what to do, whether to
retry and after how long); :class:`FailureWording` words the failures of one model's
server (its address shown without credentials, the secrets of the call never quoted);
the retry pauses follow SPEC §5: 0.5 s doubling to 8 s, or ``Retry-After`` up to 30 s.
"""

from __future__ import annotations

import email.utils
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NoReturn, TypeVar

import httpx

from .._text import strip_userinfo
from ..errors import ModelError, ModelTimeoutError, SupercontextError
from .boundary import Secrets
from .sse import StreamAccumulator
from .wire import excerpt

__all__ = [
    "BACKOFF_CAP_S",
    "BACKOFF_START_S",
    "CONNECT_CAP_S",
    "RETRY_AFTER_CAP_S",
    "AttemptFailure",
    "FailureWording",
    "backoff_seconds",
    "retry_after_seconds",
    "run_attempts",
]

BACKOFF_START_S = 0.5
BACKOFF_CAP_S = 8.0
RETRY_AFTER_CAP_S = 30.0
CONNECT_CAP_S = 10.0


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay seconds or an HTTP date).

    The result is clamped to 0..30 s; ``None`` when the header is absent or unreadable.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        try:
            stamp = when.timestamp()
        except (OverflowError, OSError, ValueError):
            return None
        seconds = stamp - (time.time() if now is None else now)
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_S)


def backoff_seconds(retry: int) -> float:
    """The pause before retry number ``retry`` (0-based): 0.5 s doubling, capped at 8 s."""
    return float(min(BACKOFF_START_S * 2 ** min(retry, 16), BACKOFF_CAP_S))


class AttemptFailure(SupercontextError):
    """One failed attempt: what to say if it stays the last one, and whether to retry.

    The model's retry loop catches it and raises :meth:`error` once retries are over, so
    it never reaches a caller; it is not a :class:`ModelError`, so that no handler of
    those inside an attempt can take it for one.
    """

    def __init__(
        self,
        what: str,
        hint: str,
        *,
        retryable: bool,
        timeout: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(what)
        self.what = what
        self.hint = hint
        self.retryable = retryable
        self.timeout = timeout
        self.retry_after = retry_after

    def error(self, attempts: int, *, out_of_budget: bool = False) -> ModelError:
        notes = []
        if attempts > 1:
            notes.append(f"gave up after {attempts} attempts")
        if out_of_budget:
            notes.append("no time left in the call's budget to retry")
        note = f" ({'; '.join(notes)})" if notes else ""
        cls = ModelTimeoutError if self.timeout else ModelError
        error = cls(f"{self.what}{note}. {self.hint}")
        error.attempts = attempts
        return error


@dataclass(frozen=True)
class FailureWording:
    """The failures of one model's server, worded for its user.

    The model holds one; each call binds it to the call's secrets (:meth:`for_call`) so
    that no message quotes them, whatever the server sends back.
    """

    shown_url: str
    """The chat-completions URL, without credentials."""
    shown_base: str
    """The base URL, without credentials."""
    model: str
    api_key_env: str | None
    timeout_s: float
    retry_timeouts: bool
    secrets: Secrets = field(default_factory=Secrets)
    has_key: bool = False
    """Whether the call sends a key (the hint for a 401 depends on it)."""

    def for_call(self, secrets: Secrets, *, has_key: bool) -> FailureWording:
        """This wording for one call, masking ``secrets``."""
        return replace(self, secrets=secrets, has_key=has_key)

    def excerpt(self, body: str | bytes) -> str:
        """A one-line excerpt of what the server sent, secrets removed."""
        return excerpt(body, secrets=self.secrets)

    def no_time_left(self, budget: float | None) -> ModelTimeoutError:
        return ModelTimeoutError(
            f"No time was left in the call's {budget or 0:g} s budget to ask the model "
            f"server at {self.shown_url}; allow the run more time."
        )

    def timeout(self, seconds: float) -> AttemptFailure:
        return AttemptFailure(
            f"The model server at {self.shown_url} did not answer within {seconds:.3g} s",
            f"Is the server running at {self.shown_base}? A slow model may need a larger "
            f"timeout_s (now {self.timeout_s:g} s).",
            retryable=self.retry_timeouts,
            timeout=True,
        )

    def status(self, status: int, headers: httpx.Headers, body: bytes) -> AttemptFailure:
        retryable = status == 429 or status >= 500
        wait = retry_after_seconds(headers.get("retry-after")) if retryable else None
        what = (
            f'The model server at {self.shown_url} answered HTTP {status}: "{self.excerpt(body)}"'
        )
        hint = self._status_hint(status)
        if 300 <= status < 400:
            target = strip_userinfo(headers.get("location", "another address"))
            hint = f"The server redirects to {target}; use that address in the base_url."
        return AttemptFailure(what, hint, retryable=retryable, retry_after=wait)

    def _status_hint(self, status: int) -> str:
        if status in (401, 403):
            if self.api_key_env is None:
                return "No API key is configured; set api_key_env to the name of the variable holding it."
            if not self.has_key:
                return f"The environment variable {self.api_key_env} is not set; set it to your API key."
            return f"Check the API key in the environment variable {self.api_key_env}."
        if status == 404:
            return (
                f"Check the base_url {self.shown_base} (it usually ends in /v1) and the model "
                f"name {self.model!r}."
            )
        if status == 429:
            return "The server is rate limiting; wait a little, or send fewer requests at once."
        if status >= 500:
            return f"The server failed; check its logs. Is the server running at {self.shown_base}?"
        return (
            f"The server rejected the request; check the model name {self.model!r}, and set "
            "native_tool_calling = false if the server does not support tools."
        )

    def unusable_reply(self, status: int, problem: str, body: bytes) -> ModelError:
        """A reply the lab cannot use: not JSON, or JSON of the wrong shape."""
        # ``problem`` may quote the server (an "error" object's message): a server that
        # echoes the key back must not get it into the exception, so it is masked too.
        return ModelError(
            f"The model server at {self.shown_url} answered HTTP {status} with "
            f'{self.secrets.masked(problem)}: "{self.excerpt(body)}". Check that '
            f"{self.shown_base} is an OpenAI-compatible API (the base_url usually ends in /v1)."
        )

    def stream_timeout(
        self, received: StreamAccumulator, seconds: float, cause: BaseException | None = None
    ) -> NoReturn:
        if not received.received_content:
            raise self.timeout(seconds) from cause
        raise ModelTimeoutError(
            f"The stream from the model server at {self.shown_url} ran past {seconds:.3g} s "
            f"after it had started. A slow model may need a larger timeout_s (now "
            f"{self.timeout_s:g} s)."
        ) from cause

    def ended_early(self) -> ModelError:
        return ModelError(
            f"The stream from the model server at {self.shown_url} ended early, before "
            f"[DONE] and before any finish_reason. Is the server at {self.shown_base} still "
            "running? Try again, or set stream = false."
        )

    def empty_stream(self) -> AttemptFailure:
        return AttemptFailure(
            f"The stream from the model server at {self.shown_url} ended before any content",
            f"Is the server running at {self.shown_base}?",
            retryable=True,
        )

    def transport(self, exc: httpx.HTTPError) -> AttemptFailure | ModelError:
        """What a failed exchange with the server (not a status, not a body) says."""
        detail = f"{type(exc).__name__}: {self.excerpt(str(exc))}"
        if isinstance(exc, httpx.ConnectError):
            return AttemptFailure(
                f"Cannot reach the model server at {self.shown_base} "
                f"({self.excerpt(str(exc) or type(exc).__name__)})",
                f"Is the server running at {self.shown_base}?",
                retryable=True,
            )
        if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
            return AttemptFailure(
                f"The connection to the model server at {self.shown_url} failed ({detail})",
                f"Is the server running at {self.shown_base}?",
                retryable=True,
            )
        if isinstance(exc, httpx.DecodingError | httpx.TooManyRedirects):
            # Not transport failures, so not covered above: a body whose Content-Encoding
            # lies (gzip over plain text) must end the call as a model error, not escape
            # as an httpx exception that no caller expects. Retrying would get it again.
            return ModelError(
                f"The model server at {self.shown_url} sent a response that cannot be read "
                f"({detail}). Check that {self.shown_base} is an OpenAI-compatible API."
            )
        return ModelError(
            f"The request to the model server at {self.shown_url} failed ({detail}). Check "
            "the base_url and any proxy settings."
        )


_T = TypeVar("_T")
_logger = logging.getLogger(__name__)


def run_attempts(
    attempt: Callable[[int], _T],
    *,
    max_retries: int,
    wording: FailureWording,
    sleep: Callable[[float], None],
    deadline: float | None = None,
) -> _T:
    """``attempt(retries)`` until it succeeds: the one retry rule of every request to an
    OpenAI-compatible server (chat and embeddings). A failure the attempt says is
    retryable is tried again at most ``max_retries`` times, after its ``Retry-After`` or
    the backoff (:func:`backoff_seconds`); a wait that would end past ``deadline``
    (``time.monotonic()``) is not made, and the failure is raised as out of budget."""
    retries = 0
    while True:
        try:
            return attempt(retries)
        except AttemptFailure as failure:
            if not failure.retryable or retries >= max_retries:
                raise failure.error(retries + 1) from failure.__cause__
            delay = failure.retry_after
            if delay is None:
                delay = backoff_seconds(retries)
            if deadline is not None and time.monotonic() + delay >= deadline:
                raise failure.error(retries + 1, out_of_budget=True) from failure.__cause__
            retries += 1
            _logger.info(
                "Retrying %s in %.2f s (retry %d of %d): %s",
                wording.shown_url,
                delay,
                retries,
                max_retries,
                failure.what,
            )
            sleep(delay)
