"""Fixtures for the notebook layer: a bare IPython shell with the extension loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from supercontext_lab.testing import build_workspace


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
