"""The persona in a real JupyterLab with Jupyter AI, in Debian's chromium (Python Playwright).

JupyterLab starts with the ``jupyter-ai`` extra's server extensions (its MCP server off:
it would take port 3001 on a shared machine), no default persona and a workspace of its
own. The test opens a chat, picks SuperContext in the persona picker under the input (in
jupyter-ai 3.2 the picker addresses a message; the ``@`` list offers files, not
personas), sends the first message and waits for what a reader sees: the bundle message
(its facts quoting the workspace), then the streamed reply. A screenshot goes to ``test-artifacts/browser/``
before the assertions.

Skipped without chromium or the jupyter-ai extra, except under ``CI=true``.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .persona_support import FIRST, persona_workspace, require_jupyter_ai
from .test_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, _launch, _missing, _wait_for_status

TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def chat_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    if not CHROMIUM.exists():
        _missing("Debian's chromium (/usr/bin/chromium)", "apt-get install -y chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Python Playwright", "pip install playwright")
    require_jupyter_ai()
    tmp = tmp_path_factory.mktemp("chatlab")
    command, env, folders = _launch(tmp)
    workspace = persona_workspace(tmp / "workspace")
    config = {
        "ServerApp": {"jpserver_extensions": {"jupyter_server_mcp": False}},
        "PersonaManager": {"default_persona_id": None, "builtin_mcp_servers": []},
        "SupercontextPersona": {"workspace": str(workspace)},
    }
    (folders["config"] / "jupyter_server_config.json").write_text(json.dumps(config), "utf-8")
    (folders["root"] / "persona.chat").write_text("", "utf-8")
    log = tmp / "jupyterlab.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    base, token = f"http://127.0.0.1:{env['SCL_TEST_PORT']}", env["SCL_TEST_TOKEN"]
    try:
        _wait_for_status(f"{base}/api/status?token={token}", process, log)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1600})
                page.goto(f"{base}/lab/tree/persona.chat?reset&token={token}")
                yield base, page
            finally:
                browser.close()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.mark.browser
def test_a_chat_addressed_to_the_persona_shows_the_bundle_then_the_reply(
    chat_lab: tuple[str, Any],
) -> None:
    from playwright.sync_api import expect

    _, page = chat_lab
    box = page.get_by_placeholder("Type a chat message, @ to mention...")
    expect(box).to_be_visible(timeout=TIMEOUT_MS)
    # The picker shows the persona it will address (the only one installed, or "No one").
    picker = page.get_by_role("button", name=re.compile(r"^(SuperContext|No one)$"))
    expect(picker).to_be_visible(timeout=TIMEOUT_MS)
    picker.click()
    page.get_by_role("menuitem", name="SuperContext").click()
    expect(page.get_by_role("button", name="SuperContext")).to_be_visible()
    box.click()
    box.type(FIRST)
    box.press("Enter")
    messages = page.locator(".jp-chat-messages-container")
    bundle = messages.get_by_text("Pre-flight", exact=False)
    reply = messages.get_by_text("offline orchestrator", exact=False)
    try:
        expect(reply.first).to_be_visible(timeout=TIMEOUT_MS)
    finally:
        _screenshot(page, "persona_chat.png")
    expect(bundle.first).to_be_visible()
    # The bundle renders as Markdown: its facts are a list quoting the workspace's note.
    facts = messages.locator("li", has_text="by the lab manager")
    expect(facts.first).to_be_visible()
    text = messages.inner_text()
    assert text.index("Pre-flight") < text.index("offline orchestrator")
    assert "Enough context:" in text
