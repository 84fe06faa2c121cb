"""The lab home, config.toml, the super_context_enabled flag, model routes and settings."""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from supercontext_lab import config
from supercontext_lab.config import (
    ENV_LAB_HOME,
    ENV_SUPER_CONTEXT,
    ENV_SUPER_CONTEXT_LONG,
    FlagStatus,
    config_path,
    get_setting,
    get_super_context_enabled,
    lab_home,
    load_config,
    set_setting,
    set_super_context_enabled,
    super_context_status,
    update_config,
)
from supercontext_lab.errors import ConfigError
from supercontext_lab.routes import (
    PROVIDER_BASE_URLS,
    ModelRoute,
    get_model_route,
    parse_model_id,
    set_model_route,
)

TRUE_SPELLINGS = ["1", "true", "yes", "on", "TRUE", "True", " yes ", "\tOn\n", " 1 ", "YeS"]
FALSE_SPELLINGS = ["0", "false", "no", "off", "FALSE", "False", " no ", "\tOFF\n", " 0 ", "oFf"]
INVALID_SPELLINGS = ["", " ", "maybe", "2", "enabled", "y", "n", "t", "ja", "o n", "true!"]


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the once-per-process warning memory empty."""
    monkeypatch.setattr(config.flag, "_warned_env_values", set())


def write_config(text: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def home_entries() -> set[str]:
    return {entry.name for entry in lab_home().iterdir()}


# --------------------------------------------------------------------------- lab home


def test_lab_home_follows_the_environment(lab_home: Path) -> None:
    assert config.lab_home() == lab_home
    assert config_path() == lab_home / "config.toml"


@pytest.mark.parametrize("value", ["", "   "])
def test_lab_home_defaults_to_dot_folder_in_home(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(ENV_LAB_HOME, value)
    assert lab_home() == tmp_path / ".supercontext_lab"
    assert get_super_context_enabled() is True
    assert not (tmp_path / ".supercontext_lab").exists()


def test_lab_home_unset_uses_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(ENV_LAB_HOME)
    assert config_path() == tmp_path / ".supercontext_lab" / "config.toml"


def test_update_creates_a_missing_lab_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "deep" / "lab"
    monkeypatch.setenv(ENV_LAB_HOME, str(home))
    assert set_super_context_enabled(False) is False
    assert (home / "config.toml").is_file()
    assert get_super_context_enabled() is False


def test_lab_home_that_is_a_file_gives_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv(ENV_LAB_HOME, str(blocker))
    with pytest.raises(ConfigError, match="SUPERCONTEXT_LAB_HOME"):
        set_super_context_enabled(True)
    with pytest.raises(ConfigError, match="blocker"):
        load_config()


# --------------------------------------------------------------------------- the flag


def test_default_is_true_without_a_file() -> None:
    assert get_super_context_enabled() is True
    assert super_context_status() == FlagStatus(enabled=True, source="default", detail="default")
    assert load_config() == {}
    assert not config_path().exists()


def test_file_without_the_key_uses_the_default() -> None:
    write_config("[context]\nother = 1\n")
    assert super_context_status() == FlagStatus(True, "default", "default")


@pytest.mark.parametrize("value", [False, True])
def test_set_get_round_trip(value: bool) -> None:
    assert set_super_context_enabled(value) is value
    assert get_super_context_enabled() is value
    assert load_config() == {"context": {"super_context_enabled": value}}
    assert super_context_status() == FlagStatus(value, "file", str(config_path()))


def test_toggle_twice_ends_where_it_started() -> None:
    set_super_context_enabled(False)
    set_super_context_enabled(True)
    assert super_context_status().source == "file"
    assert get_super_context_enabled() is True


@pytest.mark.parametrize("value", [1, 0, "on", "false", None, 1.0])
def test_set_rejects_non_bool(value: Any) -> None:
    with pytest.raises(TypeError, match="True or False"):
        set_super_context_enabled(value)
    assert not config_path().exists()


def test_set_keeps_comments_and_other_content() -> None:
    original = (
        "# my lab settings, hand written\n"
        "[context]\n"
        "# switched off while debugging\n"
        "super_context_enabled = true   # inline note\n"
        "\n"
        "[web]\n"
        "allow_private_addresses = false  # keep off\n"
    )
    write_config(original)
    set_super_context_enabled(False)
    text = config_path().read_text(encoding="utf-8")
    assert text == original.replace(
        "super_context_enabled = true   # inline note",
        "super_context_enabled = false   # inline note",
    )
    assert get_super_context_enabled() is False


def test_set_adds_a_context_table_after_existing_content() -> None:
    original = "# top comment\n[web]\nallow_private_addresses = true\n"
    write_config(original)
    set_super_context_enabled(False)
    text = config_path().read_text(encoding="utf-8")
    assert text.startswith(original)
    assert load_config() == {
        "web": {"allow_private_addresses": True},
        "context": {"super_context_enabled": False},
    }


def test_writes_leave_no_temp_files() -> None:
    for value in [True, False, True, False]:
        set_super_context_enabled(value)
    set_setting("cache.enabled", False)
    set_model_route("burst", parse_model_id("ollama:llama3.1"))
    assert home_entries() == {"config.toml", "config.toml.lock"}


def test_failed_replace_leaves_the_old_file_and_no_temp(monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config("[context]\nsuper_context_enabled = true\n")
    before = path.read_bytes()

    def broken_replace(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ConfigError, match=r"Cannot write .*No space left on device"):
        set_super_context_enabled(False)
    assert path.read_bytes() == before
    assert home_entries() == {"config.toml", "config.toml.lock"}


def test_existing_file_mode_is_kept() -> None:
    path = write_config("[context]\nsuper_context_enabled = true\n")
    path.chmod(0o600)
    set_super_context_enabled(False)
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_linked_config_is_written_through_its_link(tmp_path: Path) -> None:
    # A dotfiles setup: config.toml is a link into the user's dotfiles repository.
    dotfile = tmp_path / "dotfiles" / "supercontext.toml"
    dotfile.parent.mkdir()
    dotfile.write_text("# mine\n[context]\nsuper_context_enabled = true\n", encoding="utf-8")
    dotfile.chmod(0o640)
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(dotfile)
    set_super_context_enabled(False)
    assert path.is_symlink() and path.resolve() == dotfile
    assert dotfile.read_text(encoding="utf-8").startswith("# mine\n")
    assert get_super_context_enabled() is False
    assert dotfile.stat().st_mode & 0o777 == 0o640


CORRUPT_FILES = [
    ("syntax", b"[context\nsuper_context_enabled = true\n", "TOML syntax error"),
    (
        "duplicate",
        b"[context]\nsuper_context_enabled = true\nsuper_context_enabled = false\n",
        "TOML",
    ),
    ("flag string", b'[context]\nsuper_context_enabled = "yes"\n', "true or false"),
    ("flag int", b"[context]\nsuper_context_enabled = 1\n", "true or false"),
    ("context not table", b"context = 1\n", r"\[context\] must be a table"),
    ("models not table", b'models = "x"\n', r"\[models\] must be a table"),
    ("route not table", b"[models]\nburst = 3\n", r"\[models.burst\] must be a table"),
    ("not utf-8", b"[context]\nname = '\xff\xfe'\n", "not UTF-8"),
]


@pytest.mark.parametrize(
    ("content", "problem"), [c[1:] for c in CORRUPT_FILES], ids=[c[0] for c in CORRUPT_FILES]
)
def test_corrupt_file_is_reported_and_never_overwritten(content: bytes, problem: str) -> None:
    path = config_path()
    path.write_bytes(content)
    for call in (load_config, get_super_context_enabled, super_context_status):
        with pytest.raises(ConfigError, match=problem) as info:
            call()
        message = str(info.value)
        assert str(path) in message
        assert f"fix or delete {path}" in message
        assert "\n" not in message
    with pytest.raises(ConfigError, match="fix or delete"):
        set_super_context_enabled(False)
    with pytest.raises(ConfigError, match="fix or delete"):
        set_setting("cache.enabled", True)
    with pytest.raises(ConfigError, match="fix or delete"):
        set_model_route("burst", None)
    assert path.read_bytes() == content
    assert home_entries() == {"config.toml", "config.toml.lock"}


def test_unreadable_config_is_a_config_error() -> None:
    config_path().mkdir()
    with pytest.raises(ConfigError, match="cannot read it") as info:
        get_super_context_enabled()
    assert str(config_path()) in str(info.value)


def test_empty_file_is_valid() -> None:
    write_config("")
    assert load_config() == {}
    assert set_super_context_enabled(False) is False
    assert load_config() == {"context": {"super_context_enabled": False}}


# --------------------------------------------------------------------------- environment


@pytest.mark.parametrize("variable", [ENV_SUPER_CONTEXT, ENV_SUPER_CONTEXT_LONG])
@pytest.mark.parametrize(
    ("raw", "expected"),
    [(value, True) for value in TRUE_SPELLINGS] + [(value, False) for value in FALSE_SPELLINGS],
)
def test_env_spellings(
    variable: str,
    raw: str,
    expected: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_super_context_enabled(not expected)
    monkeypatch.setenv(variable, raw)
    assert get_super_context_enabled() is expected
    assert super_context_status() == FlagStatus(expected, "env", f"{variable}={raw}")
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(
    ("short", "long", "file_value", "expected", "source", "detail_prefix"),
    [
        ("off", "on", None, False, "env", "OPENHUMAN_SUPER_CONTEXT=off"),
        ("on", "off", False, True, "env", "OPENHUMAN_SUPER_CONTEXT=on"),
        (None, "off", None, False, "env", "OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED=off"),
        (None, "yes", False, True, "env", "OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED=yes"),
        # The first variable, once set, hides the second even when it is invalid or empty.
        ("", "off", None, True, "default", "default"),
        ("", "on", False, False, "file", "<path>"),
        ("maybe", "off", True, True, "file", "<path>"),
        ("maybe", "0", None, True, "default", "default"),
        (None, "", False, False, "file", "<path>"),
        (None, None, False, False, "file", "<path>"),
        (None, None, None, True, "default", "default"),
    ],
)
def test_env_precedence(
    short: str | None,
    long: str | None,
    file_value: bool | None,
    expected: bool,
    source: str,
    detail_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if file_value is not None:
        set_super_context_enabled(file_value)
    for name, value in [(ENV_SUPER_CONTEXT, short), (ENV_SUPER_CONTEXT_LONG, long)]:
        if value is not None:
            monkeypatch.setenv(name, value)
    status = super_context_status()
    detail = str(config_path()) if detail_prefix == "<path>" else detail_prefix
    assert status == FlagStatus(expected, source, detail)  # type: ignore[arg-type]
    assert get_super_context_enabled() is expected


@pytest.mark.parametrize("variable", [ENV_SUPER_CONTEXT, ENV_SUPER_CONTEXT_LONG])
@pytest.mark.parametrize("raw", INVALID_SPELLINGS)
def test_invalid_env_warns_on_stderr_and_keeps_file_value(
    variable: str,
    raw: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_super_context_enabled(False)
    monkeypatch.setenv(variable, raw)
    assert get_super_context_enabled() is False
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"supercontext_lab: warning: ignoring {variable}={raw!r} "
        "(use on/off, true/false, yes/no or 1/0); using the config file value.\n"
    )


def test_invalid_env_without_file_names_the_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_SUPER_CONTEXT, "maybe")
    assert super_context_status() == FlagStatus(True, "default", "default")
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert "OPENHUMAN_SUPER_CONTEXT='maybe'" in err
    assert err.endswith("using the default value (on).\n")


def test_warning_once_per_variable_and_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(ENV_SUPER_CONTEXT, "maybe")
    for _ in range(3):
        get_super_context_enabled()
    assert capsys.readouterr().err.count("warning") == 1
    monkeypatch.setenv(ENV_SUPER_CONTEXT, "perhaps")
    get_super_context_enabled()
    get_super_context_enabled()
    assert capsys.readouterr().err.count("'perhaps'") == 1
    monkeypatch.delenv(ENV_SUPER_CONTEXT)
    monkeypatch.setenv(ENV_SUPER_CONTEXT_LONG, "maybe")
    get_super_context_enabled()
    err = capsys.readouterr().err
    assert err.count("warning") == 1
    assert ENV_SUPER_CONTEXT_LONG in err


def test_valid_env_wins_even_over_a_corrupt_file(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config("[context\n")
    monkeypatch.setenv(ENV_SUPER_CONTEXT, "off")
    assert super_context_status() == FlagStatus(False, "env", "OPENHUMAN_SUPER_CONTEXT=off")
    monkeypatch.setenv(ENV_SUPER_CONTEXT, "bogus")
    with pytest.raises(ConfigError, match="TOML syntax error"):
        get_super_context_enabled()


def test_set_returns_saved_value_while_env_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_SUPER_CONTEXT, "on")
    assert set_super_context_enabled(False) is False
    assert get_super_context_enabled() is True
    monkeypatch.delenv(ENV_SUPER_CONTEXT)
    assert get_super_context_enabled() is False


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.text())
def test_env_value_property(raw: str) -> None:
    word = raw.strip().lower()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(config.flag, "_warned_env_values", set())
        buffer = io.StringIO()
        patch.setattr(sys, "stderr", buffer)
        try:
            patch.setenv(ENV_SUPER_CONTEXT, raw)
        except ValueError:  # the OS cannot hold NUL characters in the environment
            return
        status = super_context_status()
        warned = buffer.getvalue()
    assert warned.count("\n") == (0 if status.source == "env" else 1)
    if word in {"1", "true", "yes", "on"}:
        assert status == FlagStatus(True, "env", f"{ENV_SUPER_CONTEXT}={raw}")
    elif word in {"0", "false", "no", "off"}:
        assert status == FlagStatus(False, "env", f"{ENV_SUPER_CONTEXT}={raw}")
    else:
        assert status == FlagStatus(True, "default", "default")


# --------------------------------------------------------------------------- model routes


@pytest.mark.parametrize("hint", ["burst", "default", "orchestrator", "some-other.hint"])
def test_every_hint_defaults_to_offline(hint: str) -> None:
    assert get_model_route(hint) == ModelRoute()
    assert get_model_route(hint).kind == "offline"
    set_super_context_enabled(True)
    assert get_model_route(hint) == ModelRoute()


def test_model_route_defaults() -> None:
    route = ModelRoute()
    assert route.model_dump() == {
        "kind": "offline",
        "base_url": None,
        "model": None,
        "api_key_env": None,
        "timeout_s": 60.0,
        "native_tool_calling": True,
        "stream": False,
        "bundle_format": "auto",
        "small_model": False,
        "label": None,
        "context_tokens": None,
    }


ROUTES = [
    ModelRoute(),
    ModelRoute(kind="offline", model="variant-b", timeout_s=5),
    ModelRoute(kind="openai", base_url="http://localhost:11434/v1", model="llama3.1:8b"),
    ModelRoute(
        kind="openai",
        base_url="https://api.openai.com/v1/",
        model="gpt-4o-mini",
        api_key_env="OPENAI_API_KEY",
        timeout_s=12.5,
        native_tool_calling=False,
        stream=True,
    ),
]


@pytest.mark.parametrize("route", ROUTES)
def test_route_round_trip(route: ModelRoute) -> None:
    set_model_route("burst", route)
    assert get_model_route("burst") == route
    assert get_model_route("other") == ModelRoute()
    assert load_config()["models"]["burst"]["kind"] == route.kind


def test_route_overwrite_keeps_comments_and_drops_stale_keys() -> None:
    write_config(
        '# routes\n[models.burst]\n# my local server\nkind = "openai"\n'
        'base_url = "http://localhost:8080/v1"\nmodel = "qwen"\napi_key_env = "LOCAL_KEY"\n'
    )
    set_model_route("burst", ModelRoute(kind="openai", base_url="http://h:1/v1", model="m"))
    text = config_path().read_text(encoding="utf-8")
    assert "# routes" in text
    assert "# my local server" in text
    assert "LOCAL_KEY" not in text
    assert get_model_route("burst") == ModelRoute(
        kind="openai", base_url="http://h:1/v1", model="m"
    )


def test_route_removal() -> None:
    set_super_context_enabled(False)
    set_model_route("burst", parse_model_id("vllm:m"))
    set_model_route("judge", parse_model_id("openai:gpt-4o"))
    set_model_route("burst", None)
    assert get_model_route("burst") == ModelRoute()
    assert get_model_route("judge").model == "gpt-4o"
    set_model_route("judge", None)
    set_model_route("never-set", None)
    assert load_config() == {"context": {"super_context_enabled": False}}


def test_inline_route_table_is_replaced() -> None:
    write_config('[models]\nburst = { kind = "offline" }\n')
    assert get_model_route("burst") == ModelRoute()
    route = parse_model_id("lmstudio:phi")
    set_model_route("burst", route)
    assert get_model_route("burst") == route


INVALID_ROUTE_TABLES = [
    ('kind = "anthropic"', "kind"),
    ('kind = "openai"\nmodel = "m"', "requires base_url"),
    ('kind = "openai"\nbase_url = "http://localhost:11434/v1"', "requires model"),
    ('kind = "openai"', "requires base_url and model"),
    ('kind = "openai"\nmodel = "m"\nbase_url = "http://localhost:11434"', "/v1"),
    ('kind = "openai"\nmodel = "m"\nbase_url = "localhost:11434/v1"', "http"),
    ("timeout_s = 0", "timeout_s"),
    ("timeout_s = -1.5", "timeout_s"),
    ('timeout_s = "60"', "timeout_s"),
    ("timeout_s = inf", "timeout_s"),
    ('native_tool_calling = "yes"', "native_tool_calling"),
    ("stream = 1", "stream"),
    ('model = ""', "model must not be empty"),
    ('base = "http://x/v1"', "base: Extra inputs are not permitted"),
    ('api_key_env = "OPENAI KEY"', "NAME of an environment variable"),
]


@pytest.mark.parametrize(("body", "problem"), INVALID_ROUTE_TABLES)
def test_invalid_route_table_is_a_config_error(body: str, problem: str) -> None:
    path = write_config(f"[models.burst]\n{body}\n")
    with pytest.raises(ConfigError, match=problem) as info:
        get_model_route("burst")
    message = str(info.value)
    assert str(path) in message
    assert "[models.burst]" in message
    assert "\n" not in message
    # Other hints and the flag are unaffected by one bad route.
    assert get_model_route("other") == ModelRoute()
    assert get_super_context_enabled() is True


def test_api_key_pasted_into_api_key_env_is_not_echoed() -> None:
    secret = "sk-proj-abcdef0123456789"
    write_config(f'[models.burst]\napi_key_env = "{secret}"\n')
    with pytest.raises(ConfigError) as info:
        get_model_route("burst")
    assert secret not in str(info.value)
    with pytest.raises(ValidationError) as direct:
        ModelRoute(api_key_env=secret)
    assert secret not in str(direct.value)


@pytest.mark.parametrize(
    ("given_url", "stored"),
    [
        ("http://localhost:11434/v1/", "http://localhost:11434/v1"),
        ("  https://example.com/api/v1//  ", "https://example.com/api/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ],
)
def test_base_url_is_normalised(given_url: str, stored: str) -> None:
    route = ModelRoute(kind="openai", base_url=given_url, model="m")
    assert route.base_url == stored


def test_model_route_is_frozen_and_strict() -> None:
    route = ModelRoute()
    with pytest.raises(ValidationError):
        route.kind = "openai"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="Extra inputs"):
        ModelRoute(key="sk-x")  # type: ignore[call-arg]
    assert ModelRoute.model_fields["api_key_env"].description is not None


@pytest.mark.parametrize("hint", ["", "  "])
def test_empty_hint_is_rejected(hint: str) -> None:
    with pytest.raises(ValueError, match="hint"):
        get_model_route(hint)
    with pytest.raises(ValueError, match="hint"):
        set_model_route(hint, None)


# --------------------------------------------------------------------------- parse_model_id


def openai_route(
    base_url: str,
    model: str,
    api_key_env: str | None = None,
    bundle_format: str = "auto",
    label: str | None = None,
) -> ModelRoute:
    return ModelRoute(
        kind="openai",
        base_url=base_url,
        model=model,
        api_key_env=api_key_env,
        bundle_format=bundle_format,
        label=label,
    )


@pytest.mark.parametrize(
    ("model_id", "kwargs", "expected"),
    [
        ("offline", {}, ModelRoute()),
        ("  OFFLINE ", {}, ModelRoute()),
        ("offline:", {}, ModelRoute()),
        ("offline:burst-v2", {}, ModelRoute(model="burst-v2")),
        ("offline:anything:at all", {}, ModelRoute(model="anything:at all")),
        ("offline", {"timeout_s": 3, "stream": True}, ModelRoute(timeout_s=3, stream=True)),
        (
            "ollama:llama3.1:8b",
            {},
            openai_route("http://localhost:11434/v1", "llama3.1:8b", label="ollama:llama3.1:8b"),
        ),
        (
            "llamacpp:qwen2.5",
            {},
            openai_route(
                "http://localhost:8080/v1", "qwen2.5", None, "grammar", "llamacpp:qwen2.5"
            ),
        ),
        (
            "vllm:meta/Llama-3-8B",
            {},
            openai_route(
                "http://localhost:8000/v1",
                "meta/Llama-3-8B",
                None,
                "json_schema",
                "vllm:meta/Llama-3-8B",
            ),
        ),
        (
            "lmstudio:phi-3",
            {},
            openai_route("http://localhost:1234/v1", "phi-3", label="lmstudio:phi-3"),
        ),
        (
            "openai:gpt-4o-mini",
            {},
            openai_route(
                "https://api.openai.com/v1",
                "gpt-4o-mini",
                "OPENAI_API_KEY",
                "json_schema",
                "openai:gpt-4o-mini",
            ),
        ),
        (
            "OpenAI:gpt-4o",
            {"api_key_env": "MY_PROXY_KEY"},
            openai_route(
                "https://api.openai.com/v1",
                "gpt-4o",
                "MY_PROXY_KEY",
                "json_schema",
                "OpenAI:gpt-4o",
            ),
        ),
        (
            "ollama:llama3.1",
            {"base_url": "http://gpu-box:11434/v1/"},
            openai_route("http://gpu-box:11434/v1", "llama3.1", label="ollama:llama3.1"),
        ),
        (
            "openai:gpt-4o",
            {"base_url": "https://proxy.example.com/v1"},
            openai_route(
                "https://proxy.example.com/v1",
                "gpt-4o",
                "OPENAI_API_KEY",
                "json_schema",
                "openai:gpt-4o",
            ),
        ),
        (
            "my-model",
            {"base_url": "http://127.0.0.1:9000/v1", "api_key_env": "K"},
            openai_route("http://127.0.0.1:9000/v1", "my-model", "K"),
        ),
        (
            "llama3.1:8b",
            {"base_url": "http://127.0.0.1:9000/v1"},
            openai_route("http://127.0.0.1:9000/v1", "llama3.1:8b"),
        ),
        (
            "vllm:m",
            {"timeout_s": 5.5, "stream": True},
            ModelRoute(
                kind="openai",
                base_url="http://localhost:8000/v1",
                model="m",
                timeout_s=5.5,
                stream=True,
                bundle_format="json_schema",
                label="vllm:m",
            ),
        ),
    ],
)
def test_parse_model_id(model_id: str, kwargs: dict[str, Any], expected: ModelRoute) -> None:
    assert parse_model_id(model_id, **kwargs) == expected


def test_provider_base_urls_cover_every_prefix() -> None:
    assert dict(PROVIDER_BASE_URLS) == {
        "ollama": "http://localhost:11434/v1",
        "llamacpp": "http://localhost:8080/v1",
        "vllm": "http://localhost:8000/v1",
        "lmstudio": "http://localhost:1234/v1",
        "openai": "https://api.openai.com/v1",
    }
    for provider, url in PROVIDER_BASE_URLS.items():
        assert parse_model_id(f"{provider}:x").base_url == url


@pytest.mark.parametrize(
    ("model_id", "kwargs", "problem"),
    [
        ("gpt-4o", {}, "pass --base-url"),
        ("anthropic:claude", {}, "or use a provider prefix"),
        ("", {}, "model id is required"),
        ("   ", {}, "model id is required"),
        ("ollama:", {}, "names no model"),
        ("openai:  ", {}, "names no model"),
        ("my-model", {"base_url": "http://127.0.0.1:9000"}, "/v1"),
        ("ollama:x", {"timeout_s": 0}, "timeout_s"),
        ("ollama:x", {"api_key_env": "sk-123"}, "NAME of an environment variable"),
        ("offline", {"base_url": "http://localhost:11434/v1"}, "offline model"),
        ("offline:x", {"api_key_env": "K"}, "offline model"),
    ],
)
def test_parse_model_id_errors(model_id: str, kwargs: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as info:
        parse_model_id(model_id, **kwargs)
    assert "\n" not in str(info.value)


@given(model_id=st.text(max_size=60), with_url=st.booleans())
def test_parse_model_id_never_raises_other_errors(model_id: str, with_url: bool) -> None:
    base_url = "http://127.0.0.1:1/v1" if with_url else None
    try:
        route = parse_model_id(model_id, base_url=base_url)
    except ConfigError as exc:
        message = str(exc)
        route = None
    if route is None:
        assert "\n" not in message
        assert message.endswith(".")
        return
    assert route.kind in ("offline", "openai")
    if route.kind == "openai":
        assert route.base_url is not None
        assert route.model


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("dotted", "default"),
    [("web.allow_private_addresses", False), ("cache.enabled", True), ("a.b.c", 3), ("x", "s")],
)
def test_get_setting_defaults(dotted: str, default: Any) -> None:
    assert get_setting(dotted, default) == default
    write_config("[web]\nother = 1\n")
    assert get_setting(dotted, default) == default


@pytest.mark.parametrize(
    ("dotted", "value", "default"),
    [
        ("web.allow_private_addresses", True, False),
        ("cache.enabled", False, True),
        ("cache.max_entries", 500, 100),
        ("cache.ttl_s", 2.5, 1.0),
        ("scout.timeout_s", 90, 120.0),
        ("eval.dataset", "cases.jsonl", ""),
        ("top_level", "x", "y"),
        ("a.b.c.d", 7, 0),
    ],
)
def test_setting_round_trip(dotted: str, value: Any, default: Any) -> None:
    set_setting(dotted, value)
    got = get_setting(dotted, default)
    assert got == value
    assert type(got) is type(default)


def test_set_setting_keeps_neighbours_and_comments() -> None:
    write_config("# keep me\n[web]\n# and me\nallow_private_addresses = false\n")
    set_setting("web.allow_private_addresses", True)
    set_setting("web.user_agent", "lab")
    set_setting("cache.enabled", False)
    text = config_path().read_text(encoding="utf-8")
    assert "# keep me" in text
    assert "# and me" in text
    assert load_config() == {
        "web": {"allow_private_addresses": True, "user_agent": "lab"},
        "cache": {"enabled": False},
    }


@pytest.mark.parametrize(
    ("content", "dotted", "default", "problem"),
    [
        (
            '[web]\nallow_private_addresses = "no"\n',
            "web.allow_private_addresses",
            False,
            "true or false",
        ),
        ("[cache]\nenabled = 1\n", "cache.enabled", True, "true or false"),
        ("[cache]\nmax_entries = true\n", "cache.max_entries", 1, "an integer"),
        ("[cache]\nmax_entries = 1.5\n", "cache.max_entries", 1, "an integer"),
        ('[cache]\nttl_s = "3"\n', "cache.ttl_s", 1.0, "a number"),
        ("[eval]\ndataset = 3\n", "eval.dataset", "", "a string"),
        ("web = 3\n", "web.allow_private_addresses", False, "web must be a table"),
    ],
)
def test_get_setting_wrong_type(content: str, dotted: str, default: Any, problem: str) -> None:
    path = write_config(content)
    with pytest.raises(ConfigError, match=problem) as info:
        get_setting(dotted, default)
    assert str(path) in str(info.value)
    assert f"fix or delete {path}" in str(info.value)


@pytest.mark.parametrize(
    ("dotted", "value", "error", "problem"),
    [
        ("", True, ValueError, "dotted words"),
        ("web..x", True, ValueError, "dotted words"),
        ("web.", True, ValueError, "dotted words"),
        ("web.x", None, TypeError, "bool, int, float or str"),
        ("web.x", [1], TypeError, "bool, int, float or str"),
        ("models.burst.model", "m", ValueError, "set_model_route"),
        ("context.super_context_enabled", 1, TypeError, "True or False"),
        ("context.super_context_enabled", "on", TypeError, "True or False"),
    ],
)
def test_set_setting_rejects(dotted: str, value: Any, error: type[Exception], problem: str) -> None:
    with pytest.raises(error, match=problem):
        set_setting(dotted, value)
    assert not config_path().exists()


def test_set_setting_through_a_value_is_a_config_error() -> None:
    path = write_config("web = 3\n")
    with pytest.raises(ConfigError, match="web is not a table") as info:
        set_setting("web.allow_private_addresses", True)
    assert str(path) in str(info.value)
    assert path.read_text(encoding="utf-8") == "web = 3\n"


def test_set_setting_can_set_the_flag() -> None:
    set_setting("context.super_context_enabled", False)
    assert super_context_status() == FlagStatus(False, "file", str(config_path()))


# --------------------------------------------------------------------------- update_config


def test_update_config_mutation_error_writes_nothing() -> None:
    path = write_config("# original\n")

    def explode(document: tomlkit.TOMLDocument) -> None:
        document["web"] = {"x": 1}
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        update_config(explode)
    assert path.read_text(encoding="utf-8") == "# original\n"


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("context", 3, r"\[context\] must be a table"),
        ("models", "x", r"\[models\] must be a table"),
    ],
)
def test_update_config_refuses_to_break_known_keys(key: str, value: Any, problem: str) -> None:
    path = write_config("[context]\nsuper_context_enabled = false\n")

    def breaks(document: tomlkit.TOMLDocument) -> None:
        document[key] = value

    with pytest.raises(ConfigError, match=f"Refusing to save .*{problem}"):
        update_config(breaks)
    assert path.read_text(encoding="utf-8") == "[context]\nsuper_context_enabled = false\n"


def test_update_config_refuses_a_wrong_flag_type() -> None:
    def breaks(document: tomlkit.TOMLDocument) -> None:
        document["context"] = {"super_context_enabled": "yes"}

    with pytest.raises(ConfigError, match="Refusing to save"):
        update_config(breaks)
    assert not config_path().exists()


def test_update_config_without_fcntl(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config.store, "fcntl", None)
    assert set_super_context_enabled(False) is False
    assert get_super_context_enabled() is False
    assert home_entries() == {"config.toml"}


def test_threads_do_not_lose_updates() -> None:
    def bump(document: tomlkit.TOMLDocument) -> None:
        counter = document.setdefault("counter", tomlkit.table())
        counter["n"] = int(counter.get("n", 0)) + 1

    def worker() -> None:
        for _ in range(25):
            update_config(bump)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert get_setting("counter.n", 0) == 200
    assert home_entries() == {"config.toml", "config.toml.lock"}
