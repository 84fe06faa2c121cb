"""Model routes as the user named them: labels, small models, and what each model declares.

The route table, its validation and ``parse_model_id``'s table are in test_config.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from supercontext_lab.config import config_path
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.models.routing import model_for_route
from supercontext_lab.routes import (
    KNOWN_CONTEXT_TOKENS,
    ModelRoute,
    get_model_route,
    parse_model_id,
    set_model_route,
)
from supercontext_lab.scout import run_scout
from supercontext_lab.sources.demo import open_workspace
from supercontext_lab.testing import OpenAITestServer

MESSAGE = "What did we decide about the dispersal kernel?"


@pytest.fixture
def served() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(model=OfflineScoutModel()) as server:
        yield server


@pytest.mark.parametrize(
    ("model_id", "options", "name"),
    [
        ("ollama:qwen2.5", {}, "ollama:qwen2.5"),
        ("Ollama:qwen2.5", {}, "Ollama:qwen2.5"),
        ("vllm:meta/Llama-3-8B", {}, "vllm:meta/Llama-3-8B"),
        ("openai:gpt-4o-mini", {"base_url": "http://127.0.0.1:9/v1"}, "openai:gpt-4o-mini"),
        ("qwen-test", {"base_url": "http://127.0.0.1:9/v1"}, "openai:qwen-test"),
    ],
)
def test_a_model_is_named_as_the_user_named_its_route(
    model_id: str, options: dict[str, str], name: str
) -> None:
    model = model_for_route(parse_model_id(model_id, **options), role="scout")
    assert model.name == model.info.label == name
    model.close()


def test_a_configured_route_keeps_its_label_and_one_without_is_openai_model() -> None:
    set_model_route("burst", parse_model_id("ollama:qwen2.5"))
    assert get_model_route("burst").label == "ollama:qwen2.5"
    plain = ModelRoute(kind="openai", base_url="http://127.0.0.1:9/v1", model="qwen2.5")
    assert OpenAICompatibleModel.from_route(plain).name == "openai:qwen2.5"


def test_the_scout_run_reports_the_route_as_named(served: OpenAITestServer) -> None:
    route = parse_model_id("ollama:qwen2.5", base_url=served.base_url)
    run = run_scout(
        MESSAGE, workspace=open_workspace(None), model=model_for_route(route, role="scout")
    )
    assert run.ok, run.problems
    assert run.model_name == "ollama:qwen2.5"
    assert run.to_dict()["model"] == "ollama:qwen2.5"


def test_the_scout_command_s_json_names_the_model_as_typed(served: OpenAITestServer) -> None:
    out = subprocess.run(
        [
            sys.executable, "-m", "supercontext_lab", "scout", "--json",
            "--model", "ollama:qwen2.5", "--base-url", served.base_url, MESSAGE,
        ],
        capture_output=True, text=True, timeout=120, env=os.environ.copy(),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["model"] == "ollama:qwen2.5"


def test_small_models_are_declared_and_local_routes_count_as_small(lab_home: Path) -> None:
    assert not ModelRoute().counts_as_small()
    assert ModelRoute(kind="local").counts_as_small()
    small = ModelRoute(kind="openai", base_url="http://127.0.0.1:9/v1", model="m", small_model=True)
    assert small.counts_as_small()
    assert OpenAICompatibleModel.from_route(small).info.small
    assert not OpenAICompatibleModel.from_route(
        small.model_copy(update={"small_model": False})
    ).info.small
    # The default stays out of config.toml, as bundle_format = "auto" does.
    set_model_route("burst", small.model_copy(update={"small_model": False}))
    assert "small_model" not in config_path().read_text("utf-8")
    set_model_route("burst", small)
    assert "small_model = true" in config_path().read_text("utf-8")
    assert get_model_route("burst").small_model


def test_what_an_openai_compatible_model_declares() -> None:
    route = ModelRoute(
        kind="openai",
        base_url="http://user:pw@127.0.0.1:9/v1",
        model="m",
        stream=True,
        native_tool_calling=False,
    )
    info = OpenAICompatibleModel.from_route(route, bundle_format="grammar").info
    assert (info.streams, info.native_tool_calling, info.bundle_format) == (True, False, "grammar")
    assert info.cache_identity == "http://127.0.0.1:9/v1"  # never the credentials
    assert (info.local, info.small, info.context_tokens, info.run_timeout_s) == (
        False,
        False,
        None,
        None,
    )


def test_an_openai_compatible_route_declares_the_window_it_is_given(lab_home: Path) -> None:
    route = ModelRoute(kind="openai", base_url="http://127.0.0.1:9/v1", model="m")
    assert route.resolved_context_tokens() is None  # budgeted as the small default
    sized = route.model_copy(update={"context_tokens": 32_768})
    assert OpenAICompatibleModel.from_route(sized).info.context_tokens == 32_768
    set_model_route("burst", sized)
    assert "context_tokens = 32768" in config_path().read_text("utf-8")
    assert get_model_route("burst").context_tokens == 32_768
    hosted = parse_model_id("openai:gpt-4o")
    assert hosted.resolved_context_tokens() == KNOWN_CONTEXT_TOKENS["api.openai.com"]
    assert OpenAICompatibleModel.from_route(hosted).info.context_tokens == 128_000


@pytest.mark.parametrize(
    "table",
    [
        {"kind": "local", "context_tokens": 4096},
        {"kind": "offline", "context_tokens": 4096},
        {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "context_tokens": 0},
        {
            "kind": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "context_tokens": True,
        },
        {
            "kind": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "m",
            "context_tokens": 1.5,
        },
    ],
)
def test_a_window_is_a_whole_number_of_tokens_set_only_on_openai_routes(
    table: dict[str, object],
) -> None:
    with pytest.raises(ValidationError):
        ModelRoute.model_validate(table)
