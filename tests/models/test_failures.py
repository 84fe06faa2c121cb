"""Retry pauses: ``Retry-After`` read as seconds or an HTTP date, within the cap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.models.failures import retry_after_seconds


@given(st.text(max_size=40))
def test_retry_after_never_raises_and_stays_within_the_cap(value: str) -> None:
    seconds = retry_after_seconds(value)
    assert seconds is None or 0.0 <= seconds <= 30.0
