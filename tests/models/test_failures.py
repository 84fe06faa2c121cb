"""Retry pauses: ``Retry-After`` read as seconds or an HTTP date, within the cap; the one
retry rule of every request to an OpenAI-compatible server."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.errors import ModelError
from supercontext_lab.models.failures import (
    AttemptFailure,
    FailureWording,
    retry_after_seconds,
    run_attempts,
)


@given(st.text(max_size=40))
def test_retry_after_never_raises_and_stays_within_the_cap(value: str) -> None:
    seconds = retry_after_seconds(value)
    assert seconds is None or 0.0 <= seconds <= 30.0


def _wording() -> FailureWording:
    return FailureWording(
        shown_url="http://127.0.0.1:9/v1/x",
        shown_base="http://127.0.0.1:9/v1",
        model="m",
        api_key_env=None,
        timeout_s=1.0,
        retry_timeouts=True,
    )


def test_run_attempts_retries_what_is_retryable_and_waits_as_told() -> None:
    slept: list[float] = []
    calls: list[int] = []

    def attempt(retries: int) -> str:
        calls.append(retries)
        if retries < 2:
            raise AttemptFailure(
                "HTTP 503", "try later", retryable=True, retry_after=0.25 * retries
            )
        return "ok"

    assert run_attempts(attempt, max_retries=3, wording=_wording(), sleep=slept.append) == "ok"
    assert calls == [0, 1, 2]
    # The first pause is Retry-After's 0 s, the second 0.25 s; no backoff replaces them.
    assert slept == [0.0, 0.25]


def test_run_attempts_stops_at_the_cap_and_before_a_wait_past_the_deadline() -> None:
    def failing(retries: int) -> str:
        raise AttemptFailure("HTTP 429", "slow down", retryable=True, retry_after=5.0)

    with pytest.raises(ModelError, match="gave up after 3 attempts"):
        run_attempts(failing, max_retries=2, wording=_wording(), sleep=lambda _s: None)
    with pytest.raises(ModelError, match="no time left"):
        run_attempts(
            failing,
            max_retries=2,
            wording=_wording(),
            sleep=lambda _s: None,
            deadline=time.monotonic() + 1.0,
        )

    def refused(retries: int) -> str:
        raise AttemptFailure("HTTP 400", "fix the request", retryable=False)

    slept: list[float] = []
    with pytest.raises(ModelError, match="HTTP 400"):
        run_attempts(refused, max_retries=3, wording=_wording(), sleep=slept.append)
    assert slept == []
