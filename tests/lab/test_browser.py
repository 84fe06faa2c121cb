"""Real-browser tests: JupyterLab in Debian's chromium, driven by Python Playwright.

One JupyterLab runs on 127.0.0.1 for the whole module, with every Jupyter and IPython
folder in a temp folder and ``PYTHONPATH`` pointing at this checkout, so the server and
its kernels import the code under test. The tests open notebooks with their outputs
cleared, *Run All*, and assert on what a reader sees afterwards: the bundle panel, the
composer and its Super Context toggle, the ``%agent_toml`` editor and its comparison in
notebook 04 (whose editor still saves after Run All), the composer at the end of notebook
01 (a new thread, toggle shown, that sends), the comparison widget of notebook 07, panels
that lead with their outcome (a bundle accepted, and a cold start on a model server that
fails every attempt, whose call has its error badge, attempts and red bar), an editor
that refuses to save over a file changed on disk since it opened, a ``%%scout`` that
follows the thread's own workspace and names it, with every chip opening its source,
and the live status of a slow run, replaced by its panel.
Screenshots go to ``test-artifacts/browser/`` (git-ignored) before the assertions, so a
failure still leaves a picture of what was on screen.

Without ``/usr/bin/chromium`` the tests are skipped with the install command, except under
``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
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
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = REPO / "test-artifacts" / "browser"
MESSAGE = "Help me finish the sensitivity analysis section for the grant renewal"
GOAL = "Finish the sensitivity analysis section for the grant renewal"
TIMEOUT_MS = 30_000
RUN_ALL_TIMEOUT_S = 90
# Tall enough for the longest widget: JupyterLab scrolls inside the page, so a screenshot
# only shows what is inside the viewport.
VIEWPORT = {"width": 1400, "height": 2200}
SERVER_DOWN = "the model server is down for maintenance"
STALE_FILE = "stale/agent.toml"


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


def _write_toggle_notebook(path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import supercontext_lab\nprint('loaded from', supercontext_lab.__file__)\n"
            "%load_ext supercontext_lab"
        ),
        nbformat.v4.new_code_cell(f"%%scout\n{MESSAGE}"),
        nbformat.v4.new_code_cell("%scout_thread new"),
    ]
    nbformat.write(notebook, path)


def _write_notebook(path: Path, sources: list[str]) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(notebook, path)


# A bundle from the offline scout, then the same message against a model server that
# answers 500 to every attempt (the client tries 4 times), named as a user would name it.
OUTCOMES = [
    "%load_ext supercontext_lab",
    f"%%scout\n{MESSAGE}",
    "from supercontext_lab.testing import OpenAITestServer, ScriptedResponse\n\n"
    f"down = OpenAITestServer([ScriptedResponse.error(500, {SERVER_DOWN!r})] * 4)\n"
    '%config SupercontextMagics.model = "ollama:qwen2.5"\n'
    "%config SupercontextMagics.base_url = down.base_url",
    f"%%scout\n{MESSAGE}",
    'down.close()\n%config SupercontextMagics.model = ""\n%config SupercontextMagics.base_url = ""',
]
# An editor opened on a file, then the file saved by a later cell (as in notebook 04).
STALE_EDITOR = [
    "from pathlib import Path\n\n"
    "from supercontext_lab.agents import default_agent_toml\n\n"
    f'agent_file = Path("{STALE_FILE}")\n'
    "agent_file.parent.mkdir(exist_ok=True)\n"
    '_ = agent_file.write_text(default_agent_toml(), "utf-8")\n'
    "%load_ext supercontext_lab",
    "%agent_toml $agent_file",
    'text = agent_file.read_text("utf-8")\n'
    '_ = agent_file.write_text(text.replace("temperature = 0.3", "temperature = 0.7"), "utf-8")',
]


# A workspace of one's own (item: the magics follow the thread's workspace), a thread on
# it, and a %%scout with no --workspace: every kind of chip is in its bundle.
KELP_MESSAGE = "Help me draft the kelp survey report email to the parks office"
KELP_FILES = {
    "PROFILE.md": "# Profile\n\nI teach marine biology at Hobart and survey kelp forests every March.\n",
    "MEMORY.md": "# Memory\n\n- The kelp survey report goes to the Tasmanian parks office by 30 April.\n",
    "memory/global/urchin-barrens.md": (
        "Urchin barrens at Maria Island cover 38% of the reef since the 2024 kelp survey.\n"
    ),
    "integrations.toml": (
        '[[integration]]\ntoolkit = "gmail"\n'
        'description = "University mailbox: read, search and draft email"\nconnected = true\n'
    ),
}
KELP = [
    "from supercontext_lab.testing import build_workspace\n\n"
    f"_ = build_workspace('kelp-ws', {KELP_FILES!r})\n"
    "%load_ext supercontext_lab",
    "%scout_thread new --workspace kelp-ws",
    f"%%scout\n{KELP_MESSAGE}",
]
# A model server that takes its time: the cell shows what the run is doing meanwhile.
SLOW_S = 8
SLOW = [
    "from supercontext_lab.testing import OpenAITestServer, ScriptedResponse, envelope\n\n"
    "reply = envelope(summary='- The grant renewal is due on 2026-12-15 (memory)')\n"
    f"slow = OpenAITestServer([ScriptedResponse.reply(text=reply, delay_s={SLOW_S})])\n"
    "%load_ext supercontext_lab\n"
    '%config SupercontextMagics.model = "ollama:slow"\n'
    "%config SupercontextMagics.base_url = slow.base_url",
    f"%%scout\n{MESSAGE}",
    'slow.close()\n%config SupercontextMagics.model = ""\n%config SupercontextMagics.base_url = ""',
]


def _copy_cleared(source: Path, target: Path) -> None:
    """The committed notebook without outputs, so nothing on screen predates the run."""
    notebook = nbformat.read(source, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nbformat.write(notebook, target)


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


@dataclass
class Lab:
    """A running JupyterLab and a browser connected to nothing yet."""

    base: str
    token: str
    root: Path
    lab_home: Path
    browser: Any

    def open(self, name: str) -> Any:
        """A new page showing notebook ``name`` with its kernel idle."""
        from playwright.sync_api import expect

        page = self.browser.new_page(viewport=VIEWPORT)
        # ?reset: a fresh workspace, so earlier notebooks do not reopen beside this one.
        page.goto(f"{self.base}/lab/tree/{name}?reset&token={self.token}")
        expect(page.locator("#jp-main-statusbar")).to_contain_text(
            re.compile(r"\| Idle"), timeout=TIMEOUT_MS
        )
        return page

    @contextlib.contextmanager
    def ran_all(self, name: str) -> Iterator[Any]:
        """A page showing notebook ``name`` after *Run All*; closed, with its kernels shut
        down, when the block ends."""
        page = self.open(name)
        try:
            _run_all(page, self.root / name)
            yield page
        finally:
            page.close()
            self.shut_down_kernels()

    def shut_down_kernels(self) -> None:
        request = urllib.request.Request(f"{self.base}/api/kernels?token={self.token}")
        with urllib.request.urlopen(request, timeout=5) as response:
            kernels = json.loads(response.read())
        for kernel in kernels:
            url = f"{self.base}/api/kernels/{kernel['id']}?token={self.token}"
            urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=10)


def _launch(tmp: Path) -> tuple[list[str], dict[str, str], dict[str, Path]]:
    folders = {
        name: tmp / name
        for name in ("root", "config", "data", "runtime", "ipython", "workspaces", "settings")
    }
    for folder in folders.values():
        folder.mkdir()
    settings = folders["settings"] / "@jupyterlab"
    (settings / "apputils-extension").mkdir(parents=True)
    # The "Jupyter news?" pop-up would cover the notebook on every fresh start.
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), "utf-8"
    )
    # Every cell in the DOM: the default windowing detaches cells scrolled out of view.
    (settings / "notebook-extension").mkdir()
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}), "utf-8"
    )
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(folders["config"]),
        JUPYTER_DATA_DIR=str(folders["data"]),
        JUPYTER_RUNTIME_DIR=str(folders["runtime"]),
        IPYTHONDIR=str(folders["ipython"]),
        SUPERCONTEXT_LAB_HOME=str(tmp / "labhome"),
        # The server and every kernel import this checkout, whatever is pip-installed.
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
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
    env["SCL_TEST_PORT"], env["SCL_TEST_TOKEN"] = str(port), token
    return command, env, folders


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    if not CHROMIUM.exists():
        _missing("Debian's chromium (/usr/bin/chromium)", "apt-get install -y chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Python Playwright", "pip install playwright")
    tmp = tmp_path_factory.mktemp("jupyterlab")
    command, env, folders = _launch(tmp)
    _write_toggle_notebook(folders["root"] / "toggle.ipynb")
    _write_notebook(folders["root"] / "outcomes.ipynb", OUTCOMES)
    _write_notebook(folders["root"] / "stale_editor.ipynb", STALE_EDITOR)
    _write_notebook(folders["root"] / "kelp.ipynb", KELP)
    _write_notebook(folders["root"] / "slow.ipynb", SLOW)
    for name in ("01_quickstart", "04_editing_the_scout_live", "07_comparing_scout_variants"):
        _copy_cleared(NOTEBOOKS / f"{name}.ipynb", folders["root"] / f"{name}.ipynb")
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
                yield Lab(base, token, folders["root"], tmp / "labhome", browser)
            finally:
                browser.close()
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


# -- helpers reading the page ---------------------------------------------------------------


def _cell_index(notebook: Path, startswith: str) -> int:
    """The index of the first cell with a line that starts with ``startswith``.

    A line, not the whole source: a magic may follow ``%config`` lines that read the
    notebook's parameters.
    """
    cells = nbformat.read(notebook, as_version=4).cells
    return next(
        i
        for i, cell in enumerate(cells)
        if any(line.startswith(startswith) for line in cell.source.splitlines())
    )


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _start_run_all(page: Any) -> None:
    """Run > Run All, without waiting for the cells."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.locator('li[data-command="runmenu:run-all"]').click()


def _run_all(page: Any, notebook: Path) -> None:
    """Run > Run All, then wait until the last code cell has run; fail on any error."""
    from playwright.sync_api import expect

    cells = nbformat.read(notebook, as_version=4).cells
    last = max(i for i, cell in enumerate(cells) if cell.cell_type == "code")
    _start_run_all(page)
    prompt = _cell(page, last).locator(".jp-InputArea-prompt")
    errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    deadline = time.monotonic() + RUN_ALL_TIMEOUT_S
    while time.monotonic() < deadline:
        if re.search(r"\[\d+\]", prompt.inner_text()):
            break
        if page.locator(".jp-RenderedText[data-mime-type*='error']").count():
            break
        time.sleep(0.25)
    tracebacks = page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']")
    assert tracebacks.count() == 0, tracebacks.first.inner_text()
    assert errors.count() == 0 or "Traceback" not in errors.first.inner_text()
    expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=1000)
    expect(page.locator("#jp-main-statusbar")).to_contain_text(
        re.compile(r"\| Idle"), timeout=TIMEOUT_MS
    )


def _shot(target: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(ARTIFACTS / name))


def _shot_span(page: Any, top: Any, bottom: Any, name: str) -> None:
    """A screenshot from the top of ``top`` to the bottom of ``bottom`` (a widget taller
    than the viewport would otherwise be cut)."""
    bottom.scroll_into_view_if_needed()
    first, last = top.bounding_box(), bottom.bounding_box()
    assert first is not None and last is not None
    y = max(first["y"], 0)
    clip = {"x": 0, "y": y, "width": VIEWPORT["width"], "height": last["y"] + last["height"] - y}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), clip=clip)


def _rgb(css: str) -> tuple[float, float, float]:
    numbers = [float(x) for x in re.findall(r"[\d.]+", css)[:3]]
    return numbers[0], numbers[1], numbers[2]


def _contrast(fg: str, bg: str) -> float:
    """WCAG contrast ratio of two ``rgb(...)`` colours."""

    def luminance(colour: str) -> float:
        def channel(value: float) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = (channel(v) for v in _rgb(colour))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(fg), luminance(bg)), reverse=True)
    return (high + 0.05) / (low + 0.05)


_COLOURS = """(node) => {
  const style = getComputedStyle(node);
  let bg = style.backgroundColor, up = node;
  while (/rgba\\(0, 0, 0, 0\\)|transparent/.test(bg) && up.parentElement) {
    up = up.parentElement; bg = getComputedStyle(up).backgroundColor;
  }
  return [style.color, bg];
}"""

_TEXT_WIDTH = """(select) => {
  const probe = document.createElement('span');
  probe.style.font = getComputedStyle(select).font;
  probe.style.whiteSpace = 'pre';
  probe.textContent = select.options[select.selectedIndex].text;
  document.body.appendChild(probe);
  const width = probe.getBoundingClientRect().width;
  probe.remove();
  return [width, select.clientWidth];
}"""


def _right(locator: Any) -> float:
    box = locator.bounding_box()
    assert box is not None
    return float(box["x"] + box["width"])


# -- the tests ------------------------------------------------------------------------------


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


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_the_panel_renders_and_the_toggle_persists_the_flag_and_shows_its_state(
    lab: Lab,
) -> None:
    from playwright.sync_api import expect

    with lab.ran_all("toggle.ipynb") as page:
        # The kernel imports this checkout, not another installed copy.
        expect(_cell(page, 0).locator(".jp-OutputArea-output").first).to_contain_text(
            f"loaded from {REPO / 'supercontext_lab' / '__init__.py'}"
        )
        # Exact text inside a rendered ipywidgets HTML element: the plain-text fallback
        # (shown when widgets fail) can not satisfy this.
        goal = page.locator(".widget-html").get_by_text(GOAL, exact=True)
        expect(goal.first).to_be_visible(timeout=TIMEOUT_MS)
        _shot(_cell(page, 1).locator(".jp-Cell-outputArea"), "toggle_panel.png")
        _shot(_cell(page, 2).locator(".jp-Cell-outputArea"), "toggle_composer.png")
        summary = page.locator(".scl-bundle-panel .scl-summary").first
        expect(summary.locator("li").first).to_be_visible()

        composer = _cell(page, 2).locator(".scl-composer")
        toggle = composer.get_by_role("button", name=re.compile(r"Super Context: on$"))
        expect(toggle).to_be_visible(timeout=TIMEOUT_MS)
        _shot(composer, "toggle_on.png")
        on_colours = toggle.evaluate(_COLOURS)
        assert _config_flag(lab.lab_home) is None
        toggle.click()
        deadline = time.monotonic() + 15
        while _config_flag(lab.lab_home) is not False and time.monotonic() < deadline:
            time.sleep(0.2)
        off = composer.get_by_role("button", name=re.compile(r"Super Context: off$"))
        expect(off).to_be_visible()
        _shot(composer, "toggle_off.png")
        _shot(page, "panel.png")
        assert _config_flag(lab.lab_home) is False
        assert _rest_flag(lab.base, lab.token) == {"enabled": False, "source": "file"}
        note = composer.locator(".widget-html").get_by_text("applies to new threads")
        expect(note).to_be_visible()
        # Summary bullets are list items, not a literal "- ".
        assert not re.search(r"^\s*- ", summary.inner_text(), re.MULTILINE)
        off_colours = off.evaluate(_COLOURS)

    # On and off differ by more than a shade of grey: the label says which, the "on"
    # state has a colour, and both are readable.
    r, g, b = _rgb(on_colours[1])
    assert max(r, g, b) - min(r, g, b) > 60, on_colours
    assert _contrast(*on_colours) >= 4.5, on_colours
    assert _contrast(*off_colours) >= 4.5, off_colours
    assert on_colours[1] != off_colours[1]


@pytest.mark.browser
@pytest.mark.timeout(150)
def test_notebook_04_after_run_all_shows_each_step_as_the_markdown_tells_it(lab: Lab) -> None:
    from playwright.sync_api import expect

    notebook = lab.root / "04_editing_the_scout_live.ipynb"
    with lab.ran_all(notebook.name) as page:
        editor_cell = _cell(page, _cell_index(notebook, "%agent_toml"))
        compare_cell = _cell(page, _cell_index(notebook, "editor.apply_button.click()"))
        _shot(editor_cell.locator(".jp-Cell-outputArea"), "04_editor.png")
        _shot(compare_cell.locator(".jp-Cell-outputArea"), "04_comparison.png")
        editor = editor_cell.locator(".scl-agent-editor")
        expect(editor).to_be_visible(timeout=TIMEOUT_MS)
        comparison = compare_cell.locator(".scl-bundle-comparison")
        expect(comparison).to_be_visible(timeout=TIMEOUT_MS)

        # The editor under "Open the editor" still shows the file as it was opened.
        recall = editor.locator(".widget-checkbox").filter(has_text="memory_recall")
        expect(recall.locator("input")).to_be_checked()
        expect(editor.locator(".scl-editor-status")).to_contain_text("Editing ")
        assert "Ran again" not in editor.inner_text()
        # Its "Save to" field stays inside the editor.
        save_to = editor.locator(".widget-text").filter(has_text="Save to")
        assert _right(save_to) <= _right(editor) + 0.5
        # No later cell wrote its file: after Run All its Save saves.
        editor.locator("button").filter(has_text=re.compile(r"^\s*Save\s*$")).click()
        status = editor.locator(".scl-editor-status")
        expect(status).to_contain_text(re.compile(r"Saved .*my_scout/agent\.toml"))
        assert "refused" not in status.inner_text()
        _shot(editor_cell.locator(".jp-Cell-outputArea"), "04_editor_saved_after_run_all.png")

        # The comparison under the memory_recall step compares the baseline with the run
        # without memory_recall, as the Markdown below it says.
        headline = comparison.locator(".scl-diff > div").first
        expect(headline).to_have_text(re.compile(r"^Changed: .*summary"))
        panels = comparison.locator(".scl-bundle-panel")
        expect(panels).to_have_count(2)
        expect(panels.nth(0).locator(".scl-summary")).to_contain_text("2Dt kernel")
        expect(panels.nth(1).locator(".scl-summary")).not_to_contain_text("2Dt")
        # Removed lines: one "−" marker, no bullet dash after it, and readable colours.
        removed = comparison.locator(".scl-del").first
        expect(removed).to_contain_text("2Dt kernel")
        assert not re.match(r"^\W*−\s*-", removed.inner_text())
        colours = removed.evaluate(_COLOURS)
        assert _contrast(*colours) >= 7, colours

        # A real user edit: Run again in the editor, then an invalid temperature. The
        # status must no longer claim a clean rerun.
        editor.get_by_role("button", name=re.compile("Run again")).click()
        expect(editor).to_contain_text("Ran again", timeout=TIMEOUT_MS)
        textarea = editor.locator("textarea").first
        text = textarea.input_value()
        textarea.fill(text.replace("temperature = 0.3", "temperature = 3.5"))
        textarea.blur()
        expect(editor).to_contain_text("Invalid:", timeout=TIMEOUT_MS)
        _shot_span(
            page,
            editor.locator("textarea").first,
            editor.locator(".scl-editor-status"),
            "04_editor_invalid_edit.png",
        )
        assert "Ran again" not in editor.locator(".scl-editor-status").inner_text()


@pytest.mark.browser
@pytest.mark.timeout(150)
def test_notebook_01_after_run_all_ends_with_a_composer_that_works(lab: Lab) -> None:
    from playwright.sync_api import expect

    notebook = lab.root / "01_quickstart.ipynb"
    with lab.ran_all(notebook.name) as page:
        first = _cell(page, _cell_index(notebook, "%chat $first_message"))
        expect(first.locator(".scl-workspace")).to_have_text(
            re.compile(r"^searched workspace demo-workspace ")
        )
        # One composer, the last cell's, on a thread nothing else used.
        composers = page.locator(".scl-composer")
        expect(composers).to_have_count(1, timeout=TIMEOUT_MS)
        cell = _cell(page, _cell_index(notebook, "%scout_thread new"))
        composer = cell.locator(".scl-composer")
        toggle = composer.get_by_role("button", name=re.compile(r"Super Context: on$"))
        expect(toggle).to_be_visible(timeout=TIMEOUT_MS)
        # What a click does is said where it is clicked.
        caption = composer.locator(".widget-html").get_by_text(
            re.compile(r"^Saved in the lab's config\.toml for every new thread")
        )
        expect(caption).to_be_visible()
        # The toggle keeps its whole label beside the caption.
        assert toggle.evaluate("(n) => n.scrollWidth <= n.clientWidth"), toggle.inner_text()
        _shot(cell.locator(".jp-Cell-outputArea"), "01_composer_after_run_all.png")

        shared = _config_flag(lab.lab_home)
        toggle.click()
        expect(
            composer.get_by_role("button", name=re.compile(r"Super Context: off$"))
        ).to_be_visible()
        composer.locator("textarea").fill("Help me finish the budget section of the grant renewal")
        composer.get_by_role("button", name=re.compile(r"Send$")).click()
        expect(composer).to_contain_text("super_context_disabled", timeout=TIMEOUT_MS)
        expect(composer.get_by_role("button", name=re.compile("New thread"))).to_be_visible()
        any_toggle = composer.get_by_role("button", name=re.compile(r"Super Context: o"))
        expect(any_toggle).to_be_hidden()
        _shot(cell.locator(".jp-Cell-outputArea"), "01_composer_sent.png")
        # The flag went to the notebook's private lab home, not the server's.
        assert _config_flag(lab.lab_home) == shared


@pytest.mark.browser
@pytest.mark.timeout(150)
def test_notebook_07_comparison_widget_fits_its_controls_and_keeps_spelling(lab: Lab) -> None:
    from playwright.sync_api import expect

    notebook = lab.root / "07_comparing_scout_variants.ipynb"
    with lab.ran_all(notebook.name) as page:
        widget_cell = _cell(page, _cell_index(notebook, "%load_ext supercontext_lab"))
        widget = widget_cell.locator(".scl-eval-comparison")
        widget_cell.get_by_role("tab", name="Cases").click()
        _shot(widget_cell.locator(".jp-Cell-outputArea"), "07_cases_tab.png")
        widget_cell.get_by_role("tab", name="Export").click()
        _shot(widget_cell.locator(".jp-Cell-outputArea"), "07_export_tab.png")
        expect(widget).to_be_visible(timeout=TIMEOUT_MS)
        widget.get_by_role("tab", name="Cases").click()
        case = widget.locator(".widget-dropdown").filter(has_text="case")
        expect(case).to_be_visible()
        expect(widget).to_contain_text("missing mentions:")
        # The mention is shown as the dataset spells it.
        expect(widget).to_contain_text("missing mentions: 2Dt, 34 of the 40 sites")
        # Labels and the picked case are not cut off.
        for label in widget.locator(".widget-dropdown label").all():
            if label.is_visible():
                assert label.evaluate("(n) => n.scrollWidth <= n.clientWidth"), label.inner_text()
        text_width, box_width = case.locator("select").evaluate(_TEXT_WIDTH)
        assert text_width + 20 <= box_width, (text_width, box_width)

        widget.get_by_role("tab", name="Export").click()
        name_field = widget.locator(".widget-text").filter(has_text="file name").locator("input")
        expect(name_field).to_be_visible()
        box = name_field.bounding_box()
        assert box is not None and box["width"] >= 400, box


_BACKGROUND = "(node) => getComputedStyle(node).backgroundColor"


def _top(locator: Any) -> float:
    box = locator.bounding_box()
    assert box is not None
    return float(box["y"])


@pytest.mark.browser
@pytest.mark.timeout(150)
def test_panels_lead_with_the_outcome_and_a_failed_call_has_its_badge(lab: Lab) -> None:
    from playwright.sync_api import expect

    with lab.ran_all("outcomes.ipynb") as page:
        accepted = _cell(page, 1).locator(".scl-bundle-panel")
        failed = _cell(page, 3).locator(".scl-bundle-panel")
        expect(accepted.locator(".scl-outcome")).to_be_visible(timeout=TIMEOUT_MS)
        expect(failed.locator(".scl-outcome")).to_be_visible(timeout=TIMEOUT_MS)
        _shot(_cell(page, 1).locator(".jp-Cell-outputArea"), "outcome_accepted.png")
        _shot(_cell(page, 3).locator(".jp-Cell-outputArea"), "outcome_cold_start.png")

        # A bundle: "bundle accepted" and "grounded N of M" come first, then the status,
        # all above the goal.
        outcome = accepted.locator(".scl-outcome")
        expect(outcome).to_have_text(
            re.compile(r"^\s*bundle accepted\s+grounded (\d+) of \1\s+scout completed\s*$")
        )
        assert _top(outcome) < _top(accepted.locator(".scl-goal"))
        assert "status" not in accepted.inner_text().split("Goal")[0]

        # A failed model: the cold start and its reason lead, then "scout failed"; the
        # model is named as the user named it.
        outcome = failed.locator(".scl-outcome")
        expect(outcome).to_have_text(re.compile(r"^\s*cold start: model_error\s+scout failed\s*$"))
        expect(failed).to_contain_text("model ollama:qwen2.5")
        expect(failed).not_to_contain_text("openai:qwen2.5")
        assert _top(outcome) < _top(failed.get_by_text("Why:"))

        failed.get_by_role("tab", name="Trace").click()
        trace = failed.locator(".scl-trace")
        expect(trace).to_be_visible()
        step = trace.locator("tr").filter(has_text="model call")
        expect(step.locator(".scl-badge-error")).to_have_text("error")
        expect(step).to_contain_text("4 attempts")
        expect(step).to_contain_text(SERVER_DOWN)
        bar = step.locator(".scl-bar-failed")
        expect(bar).to_be_visible()
        assert bar.evaluate(_BACKGROUND) == "rgb(198, 40, 40)"
        expect(trace).to_contain_text("1 failed model call(s) after 4 attempt(s)")
        _shot(failed, "failed_call_trace.png")

        failed.get_by_role("tab", name="Problems").click()
        problems = failed.locator(".scl-problems")
        expect(problems).to_be_visible()
        expect(problems).to_contain_text("model_error: The scout's model failed.")
        assert problems.inner_text().count(SERVER_DOWN) == 1
        _shot(failed, "failed_call_problems.png")


@pytest.mark.browser
@pytest.mark.timeout(150)
def test_save_refuses_to_overwrite_a_file_changed_on_disk_since_the_editor_opened(
    lab: Lab,
) -> None:
    from playwright.sync_api import expect

    agent_file = lab.root / STALE_FILE
    with lab.ran_all("stale_editor.ipynb") as page:
        editor = _cell(page, 1).locator(".scl-agent-editor")
        expect(editor).to_be_visible(timeout=TIMEOUT_MS)
        saved_by_the_later_cell = agent_file.read_text("utf-8")
        assert "temperature = 0.7" in saved_by_the_later_cell
        # The editor still shows the file as it was when it opened.
        assert "temperature = 0.3" in editor.locator("textarea").first.input_value()

        editor.locator("button").filter(has_text=re.compile(r"^\s*Save\s*$")).click()
        status = editor.locator(".scl-editor-status")
        expect(status).to_contain_text("changed on disk since you opened it", timeout=TIMEOUT_MS)
        _shot(_cell(page, 1).locator(".jp-Cell-outputArea"), "stale_editor_refused.png")
        assert agent_file.read_text("utf-8") == saved_by_the_later_cell


def _chip(panel: Any, label: str) -> Any:
    chip = panel.locator(".scl-chip").filter(has_text=re.compile(f"^{re.escape(label)}$"))
    return chip.first


@pytest.mark.browser
@pytest.mark.timeout(150)
def test_scout_follows_the_threads_workspace_and_every_chip_opens_its_source(lab: Lab) -> None:
    from playwright.sync_api import expect

    with lab.ran_all("kelp.ipynb") as page:
        panel = _cell(page, 2).locator(".scl-bundle-panel")
        expect(panel.locator(".scl-outcome")).to_be_visible(timeout=TIMEOUT_MS)
        # The workspace of the thread, named in the panel, and its facts in the summary.
        expect(panel.locator(".scl-workspace")).to_have_text(
            re.compile(r"^searched workspace kelp-ws .*kelp-ws$")
        )
        summary = panel.locator(".scl-summary")
        expect(summary).to_contain_text("38% of the reef")
        expect(summary).not_to_contain_text("sourdough")
        # Each fact reads once: the chip alone follows it, the note is not printed inline.
        assert summary.inner_text().count("Urchin barrens at Maria Island") == 1
        _shot(_cell(page, 2).locator(".jp-Cell-outputArea"), "kelp_panel.png")

        named = _chip(panel, "memory: global/urchin-barrens")
        assert "Urchin barrens at Maria Island cover 38%" in (named.get_attribute("title") or "")
        opened = {
            "memory: global/urchin-barrens": "Urchin barrens at Maria Island cover 38%",
            "memory: MEMORY.md or a note": "A plain (memory) cites MEMORY.md",
            "profile": "I teach marine biology at Hobart",
            "integrations": "gmail connected University mailbox",
        }
        for label, text in opened.items():
            chip = _chip(panel, label)
            expect(chip).to_be_visible()
            details = chip.locator("xpath=ancestor::details[1]")
            expect(details.locator("pre")).to_be_hidden()
            chip.click()
            expect(details.locator("pre")).to_be_visible()
            expect(details.locator("pre")).to_contain_text(text)
        _shot_span(page, summary, summary, "kelp_chips_opened.png")


@pytest.mark.browser
@pytest.mark.timeout(150)
def test_a_slow_run_shows_what_it_is_doing_then_its_panel(lab: Lab) -> None:
    from playwright.sync_api import expect

    page = lab.open("slow.ipynb")
    try:
        _start_run_all(page)
        cell = _cell(page, 1)
        status = cell.locator(".scl-live-status")
        line = status.locator(".scl-live-status-line")
        expect(line).to_have_text(
            re.compile(r"^Scout: asking the model ollama:slow \(call 1 of up to 8\) · \d+ s$"),
            timeout=TIMEOUT_MS,
        )
        # The seconds count up while the model works.
        expect(line).to_have_text(re.compile(r"· [3-9] s$"), timeout=TIMEOUT_MS)
        _shot(cell.locator(".jp-Cell-outputArea"), "slow_run_status.png")

        panel = cell.locator(".scl-bundle-panel")
        expect(panel).to_be_visible(timeout=SLOW_S * 1000 + TIMEOUT_MS)
        expect(status).to_be_hidden()
        expect(panel.locator(".scl-outcome")).to_be_visible()
        expect(panel).to_contain_text("model ollama:slow")
        _shot(cell.locator(".jp-Cell-outputArea"), "slow_run_panel.png")
        last = _cell(page, 2).locator(".jp-InputArea-prompt")
        expect(last).to_have_text(re.compile(r"\[\d+\]"), timeout=TIMEOUT_MS)
    finally:
        page.close()
        lab.shut_down_kernels()
