"""The configured keys and the lab's one masking step (config/secrets.py)."""

from __future__ import annotations

import pytest

from supercontext_lab._secrets import SECRET_MARKER
from supercontext_lab.config.secrets import configured_secrets, mask, mask_data, values_in_use
from supercontext_lab.routes import ModelRoute, set_model_route

KEY = "configured-route-key-0042"


def _route(variable: str) -> ModelRoute:
    return ModelRoute(
        kind="openai", base_url="http://127.0.0.1:9/v1", model="m", api_key_env=variable
    )


def test_the_value_of_every_routes_key_variable_is_masked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert configured_secrets() == []
    assert mask(f"pasted {KEY}") == f"pasted {KEY}"
    monkeypatch.setenv("SCL_TEST_KEY", KEY)
    set_model_route("agentic", _route("SCL_TEST_KEY"))
    assert configured_secrets() == [KEY]
    assert mask(f"pasted {KEY} and AKIAIOSFODNN7EXAMPLE") == (
        f"pasted {SECRET_MARKER} and {SECRET_MARKER}"
    )
    assert mask_data({"turns": [f"{KEY}"]}) == {"turns": [SECRET_MARKER]}


def test_a_key_set_after_the_config_was_read_is_masked_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_model_route("agentic", _route("SCL_LATE_KEY"))
    assert values_in_use() == ()
    monkeypatch.setenv("SCL_LATE_KEY", KEY)
    assert values_in_use() == (KEY,)
    # Longest first: a key that holds another is removed whole.
    assert values_in_use("the-routes-own-key-1") == (KEY, "the-routes-own-key-1")


def test_a_route_added_later_is_read_from_the_changed_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCL_FIRST_KEY", KEY)
    monkeypatch.setenv("SCL_SECOND_KEY", "second-route-key-0043")
    set_model_route("agentic", _route("SCL_FIRST_KEY"))
    assert configured_secrets() == [KEY]
    set_model_route("burst", _route("SCL_SECOND_KEY"))
    assert sorted(configured_secrets()) == sorted([KEY, "second-route-key-0043"])


def test_an_unreadable_config_names_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from supercontext_lab.config import config_path

    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[models\nbroken", encoding="utf-8")
    assert configured_secrets() == []
    # The shapes are still masked.
    assert mask("AKIAIOSFODNN7EXAMPLE") == SECRET_MARKER
