"""Fixtures for the notebook layer: a bare IPython shell with the extension loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture
def magics(shell: InteractiveShell) -> Any:
    """The registered ``SupercontextMagics`` instance (its state: thread, last run, …)."""
    return shell.magics_manager.registry["SupercontextMagics"]


@pytest.fixture
def workspace_dir(tmp_path: Path) -> Path:
    """A small hand-written workspace whose profile holds a phrase no other source has."""
    root = tmp_path / "workspace"
    (root / "memory" / "global").mkdir(parents=True)
    (root / "PROFILE.md").write_text(
        "# Profile\n\nI keep the zebrafish husbandry log (marker: QUOKKA-7731).\n", "utf-8"
    )
    (root / "memory" / "global" / "husbandry.md").write_text(
        "The zebrafish husbandry log is reviewed every Friday.\n", "utf-8"
    )
    return root
