"""A key pasted into an old chat is never sent, shown or kept (round 4, class 4).

The README promises a key is never logged, displayed or stored. A user once pasted the
configured API key, and keys of common shapes (an ``sk-…`` key no route names, a bearer
token, an AWS access key, a private key block), into a chat that is now imported. Every
design quotes recalled turns: the offline scout, the pack, the deadline's fallback, the
cached envelope, the pack of an earlier lookup (prefetch), the extractive writer. None of the keys may appear in the scout's run,
the orchestrator's messages, ``TurnResult.to_dict()``, the saved thread, or any byte of
any file under the workspace's ``.supercontext/`` or the lab home.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.config import lab_home
from supercontext_lab.conversations import import_conversations
from supercontext_lab.harness import Thread
from supercontext_lab.routes import ModelRoute, set_model_route
from supercontext_lab.testing import ScriptedModel, build_workspace

from .support import CANARY_KEY, KEY_ENV, MESSAGE, scripted_orchestrator

OTHER_SK = "sk-proj-Zx81Lq0P4eT7mN2vB6cR9wQ"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.k3yS1gn4tur3"
AWS = "AKIAIOSFODNN7EXAMPLE"
PEM_BODY = "MIIEowIBAAKCAQEA7bq9Zk1Secr3tL1ne"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
SECRETS = (CANARY_KEY, OTHER_SK, BEARER, AWS, PEM_BODY)


def _workspace(root: Path, tmp_path: Path) -> Path:
    built = build_workspace(
        root,
        {
            "memory/project/budget.md": "The grant renewal budget is 40k.\n",
            "PROFILE.md": "Maya leads the grant renewal.\n",
        },
    )
    said = (
        f"To check the grant renewal budget sheet, use the key {CANARY_KEY} or {OTHER_SK}, "
        f"send Authorization: Bearer {BEARER}, and the AWS access key {AWS}."
    )
    messages = [
        {"role": "user", "content": said},
        {"role": "assistant", "content": f"Noted for the grant renewal budget:\n{PEM}"},
    ]
    chat = tmp_path / "old-chat.jsonl"
    chat.write_text(json.dumps({"id": "old", "title": "budget", "messages": messages}) + "\n")
    import_conversations(chat, built)
    return built


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> None:
    """The canary is a configured key: a route (not the scout's) names its variable."""
    monkeypatch.setenv(KEY_ENV, CANARY_KEY)
    route = ModelRoute(kind="openai", base_url="http://127.0.0.1:9/v1", model="m")
    set_model_route("agentic", route.model_copy(update={"api_key_env": KEY_ENV}))


def _late(messages: Any, tools: Any) -> str:
    time.sleep(1.0)
    return "too late"


def _slow_scout() -> ScriptedModel:
    # Not done by the 300 ms deadline, whatever time it is given: the pack prepares the
    # turn.
    return ScriptedModel([_late])


def _thread(root: Path, design: str) -> Thread:
    options: dict[str, Any] = {}
    if design == "deadline":
        options = {"design": "scout", "deadline_ms": 300, "scout_model": _slow_scout()}
    elif design == "extractive":
        set_model_route("burst", ModelRoute(kind="baseline", model="rank"))
    else:
        options = {"design": design}
    return Thread(
        root,
        orchestrator_model=scripted_orchestrator(),
        super_context_enabled=True,
        **options,
    )


def _files(*folders: Path) -> dict[str, bytes]:
    return {
        str(path): path.read_bytes()
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize(
    "design", ["scout", "pack", "deadline", "cached", "prefetch", "extractive"]
)
def test_a_key_pasted_in_an_imported_chat_is_in_nothing_the_lab_sends_shows_or_keeps(
    tmp_path: Path, configured: None, design: str
) -> None:
    """Keys pasted in an imported chat, by design (scout, pack, deadline, cached, prefetch, extractive): in no output or file."""
    root = _workspace(tmp_path / "ws", tmp_path)
    thread = _thread(root, design)
    if design == "prefetch":
        # The pack of the first message is sent with the second.
        thread.send(MESSAGE)
        assert thread.wait_for_prefetch(30.0)
    result = thread.send(MESSAGE)
    assert result.prepared
    # The old chat was read and quoted: the test would prove nothing otherwise.
    assert "(transcript: old)" in (result.envelope or "") or design == "cached"
    saved = thread.save(tmp_path / "thread.json")
    orchestrator = thread.orchestrator_model
    assert isinstance(orchestrator, ScriptedModel)
    texts = {
        "to_dict": json.dumps(result.to_dict(), ensure_ascii=False),
        "scout": json.dumps(result.scout.to_dict() if result.scout else None),
        "orchestrator": json.dumps(
            [m.content for call in orchestrator.calls for m in call.messages], ensure_ascii=False
        ),
        "str": str(result),
        "repr": repr(result),
    }
    files = _files(root / ".supercontext", lab_home())
    files[str(saved)] = saved.read_bytes()
    for secret in SECRETS:
        for name, text in texts.items():
            assert secret not in text, f"{secret[:8]}… in {name}"
        for name, data in files.items():
            assert secret.encode() not in data, f"{secret[:8]}… in {name}"


def test_the_masked_turns_are_still_recalled_and_cited(tmp_path: Path, configured: None) -> None:
    """The masked turn is still recalled and cited, the marker standing for the key."""
    root = _workspace(tmp_path / "ws", tmp_path)
    result = _thread(root, "pack").send(MESSAGE)
    envelope = result.envelope or ""
    assert "[secret removed]" in envelope and "(transcript: old)" in envelope
