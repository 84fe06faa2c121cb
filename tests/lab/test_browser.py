"""One real-browser test: JupyterLab renders the bundle panel and the Super Context toggle.

JupyterLab runs on 127.0.0.1 in a subprocess with every Jupyter and IPython folder in the
test's temp folder; Debian's chromium, driven by Python Playwright, opens a notebook that
loads the extension, runs ``%%scout`` and ``%scout_thread new``, and clicks the toggle.

Without ``/usr/bin/chromium`` the test is skipped with the install command, except under
``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest

from supercontext_lab.lab.server import ROUTE

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]
ARTIFACT = REPO / "test-artifacts" / "browser" / "panel.png"
MESSAGE = "Help me finish the sensitivity analysis section for the grant renewal"
GOAL = "Finish the sensitivity analysis section for the grant renewal"
TIMEOUT_MS = 30_000


def _missing(what: str, install: str) -> None:
    """Skip, or fail under CI=true, naming the install command."""
    reason = f"{what} is missing: install it with `{install}`"
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(f"{reason} (CI=true: a missing browser is a failure, not a skip)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _write_notebook(path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext supercontext_lab"),
        nbformat.v4.new_code_cell(f"%%scout\n{MESSAGE}"),
        nbformat.v4.new_code_cell("%scout_thread new"),
    ]
    nbformat.write(notebook, path)


def _wait_for_status(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"JupyterLab exited early:\n{log.read_text('utf-8')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"JupyterLab did not answer in 30 s:\n{log.read_text('utf-8')[-3000:]}")


@contextmanager
def _jupyterlab(tmp_path: Path, lab_home: Path) -> Iterator[tuple[str, str]]:
    """Start JupyterLab with everything in ``tmp_path``; yield (base URL, token)."""
    folders = {
        name: tmp_path / name
        for name in ("root", "config", "data", "runtime", "ipython", "workspaces", "settings")
    }
    for folder in folders.values():
        folder.mkdir()
    settings = folders["settings"] / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # The "Jupyter news?" pop-up would cover the notebook on every fresh start.
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), "utf-8"
    )
    _write_notebook(folders["root"] / "browser.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(folders["config"]),
        JUPYTER_DATA_DIR=str(folders["data"]),
        JUPYTER_RUNTIME_DIR=str(folders["runtime"]),
        IPYTHONDIR=str(folders["ipython"]),
        SUPERCONTEXT_LAB_HOME=str(lab_home),
    )
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={folders['root']}",
        f"--LabApp.workspaces_dir={folders['workspaces']}",
        f"--LabApp.user_settings_dir={folders['settings']}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = tmp_path / "jupyterlab.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_status(f"{base}/api/status?token={token}", process, log)
        yield base, token
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _config_flag(lab_home: Path) -> bool | None:
    import tomllib

    path = lab_home / "config.toml"
    if not path.exists():
        return None
    value = tomllib.loads(path.read_text("utf-8")).get("context", {}).get("super_context_enabled")
    return value if isinstance(value, bool) else None


def _rest_flag(base: str, token: str) -> Any:
    with urllib.request.urlopen(f"{base}/{ROUTE}?token={token}", timeout=5) as response:
        return json.loads(response.read())


@pytest.mark.parametrize(
    ("ci", "outcome"),
    [
        ("true", pytest.fail.Exception),
        ("TRUE", pytest.fail.Exception),
        ("", pytest.skip.Exception),
        ("false", pytest.skip.Exception),
        (None, pytest.skip.Exception),
    ],
)
def test_a_missing_browser_skips_with_the_install_command_but_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str | None, outcome: type[BaseException]
) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match=r"apt-get install -y chromium"):
        _missing("Debian's chromium (/usr/bin/chromium)", "apt-get install -y chromium")


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_jupyterlab_shows_the_panel_and_the_toggle_persists_the_flag(
    tmp_path: Path, lab_home: Path
) -> None:
    if not CHROMIUM.exists():
        _missing("Debian's chromium (/usr/bin/chromium)", "apt-get install -y chromium")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        _missing("Python Playwright", "pip install playwright")

    started = time.monotonic()
    with _jupyterlab(tmp_path, lab_home) as (base, token), sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            # Tall enough for the whole notebook: JupyterLab scrolls inside the page, so a
            # full-page screenshot would not show what is scrolled away.
            page = browser.new_page(viewport={"width": 1400, "height": 2000})
            page.goto(f"{base}/lab/tree/browser.ipynb?token={token}")
            status_bar = page.locator("#jp-main-statusbar")
            expect(status_bar).to_contain_text(re.compile(r"\| Idle"), timeout=TIMEOUT_MS)

            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.locator('li[data-command="runmenu:run-all"]').click()

            # Exact text inside a rendered ipywidgets HTML element: the plain-text
            # fallback (shown when widgets fail) can not satisfy this.
            goal = page.locator(".widget-html").get_by_text(GOAL, exact=True)
            expect(goal.first).to_be_visible(timeout=TIMEOUT_MS)

            # The accessible name starts with the icon's glyph.
            toggle = page.get_by_role("button", name=re.compile(r"^\W*Super Context$"))
            expect(toggle).to_be_visible(timeout=TIMEOUT_MS)
            assert _config_flag(lab_home) is None
            toggle.click()
            deadline = time.monotonic() + 15
            while _config_flag(lab_home) is not False and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _config_flag(lab_home) is False
            assert _rest_flag(base, token) == {"enabled": False, "source": "file"}
            expect(
                page.locator(".widget-html").get_by_text("applies to new threads")
            ).to_be_visible()

            goal.first.scroll_into_view_if_needed()
            shot = tmp_path / "panel.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, ARTIFACT)
    print(f"screenshot: {ARTIFACT} (and {shot}); took {time.monotonic() - started:.0f} s")
