"""``supercontext-lab mcp``: its bad input, one line and exit 2, before anything is served
(the server itself is tested through the SDK's client in tests/mcp_server)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from supercontext_lab.testing import build_workspace

from .conftest import run_cli


def test_port_needs_http(tmp_path: Path) -> None:
    out = run_cli("mcp", "--workspace", str(build_workspace(tmp_path / "ws")), "--port", "8123")
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "supercontext-lab: --port needs --http\n"


def test_a_missing_workspace_and_a_bad_port_are_refused(tmp_path: Path) -> None:
    out = run_cli("mcp", "--workspace", str(tmp_path / "nowhere"))
    assert out.returncode == 2
    assert "workspace folder not found" in out.stderr
    out = run_cli("mcp", "--http", "--port", "70000")
    assert out.returncode == 2
    assert "between 1 and 65535" in out.stderr


def test_without_the_extra_one_line_names_it(tmp_path: Path) -> None:
    # The SDK made unimportable, as when the mcp extra is not installed.
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from supercontext_lab.cli import main\n"
        f"sys.exit(main(['mcp', '--workspace', {str(tmp_path)!r}]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr.count("\n") == 1
    assert 'pip install "supercontext-lab[mcp]"' in out.stderr
