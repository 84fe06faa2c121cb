"""Fixtures for the notebook layer (a bare IPython shell with the extension loaded), and
what the tests of the magics share: a first message, its goal, a workspace of one's own,
a broken agent.toml, and how a cell's outputs and error are read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import RichOutput, capture_output

from supercontext_lab.agents.definition import default_agent_toml
from supercontext_lab.lab.archive_notice import reset_archive_notice
from supercontext_lab.testing import build_workspace


@pytest.fixture(autouse=True)
def archive_notice_said() -> None:
    """The archive notice is said once a session, whichever test archives first: every
    test starts after it was said, and those about it start a session of their own
    (``reset_archive_notice()``), so no test depends on the order they run in."""
    reset_archive_notice(said=True)


@pytest.fixture
def magics(shell: InteractiveShell) -> Any:
    """The registered ``SupercontextMagics`` instance (its state: thread, last run, …)."""
    return shell.magics_manager.registry["SupercontextMagics"]


@pytest.fixture
def workspace_dir(tmp_path: Path) -> Path:
    """A small hand-written workspace whose profile holds a phrase no other source has."""
    files = {
        "PROFILE.md": "# Profile\n\nI keep the zebrafish husbandry log (marker: QUOKKA-7731).\n",
        "memory/global/husbandry.md": "The zebrafish husbandry log is reviewed every Friday.\n",
    }
    return build_workspace(tmp_path / "workspace", files)


GRANT = "Help me finish the sensitivity analysis section for the grant renewal"
GOAL = "Finish the sensitivity analysis section for the grant renewal"


def outputs_of(action: Callable[[], Any]) -> tuple[list[RichOutput], str]:
    """What ``action`` displayed with a text form, and what it printed. The live status
    line of %%scout and %%chat has none (see test_magics.py, the live status)."""
    with capture_output() as captured:
        action()
    return [o for o in captured.outputs if "text/plain" in o.data], captured.stdout


def error_of(shell: InteractiveShell, cell: str) -> BaseException | None:
    """The exception running ``cell`` raised, if any."""
    with capture_output():
        result = shell.run_cell(cell)
    return result.error_in_exec


def bad_agent(tmp_path: Path) -> str:
    """The path of an agent.toml the loader refuses (its temperature is out of range)."""
    path = tmp_path / "agent.toml"
    path.write_text(default_agent_toml().replace("temperature = 0.3", "temperature = 7.5"), "utf-8")
    return str(path)


def kelp_workspace(tmp_path: Path) -> Path:
    """A workspace of one's own: marine biology notes the demo does not have."""
    return build_workspace(
        tmp_path / "kelp-ws",
        {
            "PROFILE.md": "# Profile\n\nI study kelp forests off Tasmania.\n",
            "memory/global/urchin-survey.md": (
                "The urchin survey at Maria Island counts 412 urchins per transect.\n"
            ),
        },
    )
