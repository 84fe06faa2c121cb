"""What the persona's tests share: whether the jupyter-ai stack may be missing, a chat
that can be driven without a server, and a workspace with a phrase only it holds."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.testing import build_workspace

PERSONA_ID = "jupyter-ai-personas::supercontext_lab::SupercontextPersona"
MARKER = "QUOKKA-7731"
FIRST = "Help me finish the zebrafish husbandry log review before Friday."


def require_jupyter_ai(*, module_level: bool = False) -> None:
    """Skip when the ``jupyter-ai`` extra is not installed here, outside CI; anywhere
    else (the extra installed, or CI, which installs it) a failing import fails."""
    try:
        importlib.import_module("jupyter_ai_persona_manager")
        importlib.import_module("jupyterlab_chat")
        importlib.import_module("jupyter_ai_router")
    except ImportError:
        try:
            importlib.metadata.version("jupyter-ai")
        except importlib.metadata.PackageNotFoundError:
            if not os.environ.get("CI"):
                pytest.skip(
                    "the jupyter-ai extra is not installed: pip install -e '.[jupyter-ai]'",
                    allow_module_level=module_level,
                )
        raise


def persona_workspace(root: Path) -> Path:
    """A workspace whose profile and memory hold :data:`MARKER`, and nothing else does."""
    files = {
        "PROFILE.md": f"# Profile\n\nI keep the zebrafish husbandry log (marker: {MARKER}).\n",
        "memory/global/husbandry.md": (
            "The zebrafish husbandry log is reviewed every Friday by the lab manager.\n"
        ),
    }
    return build_workspace(root, files)


def bodies(messages: list[Any], sender: str) -> list[str]:
    """The bodies of ``sender``'s messages, in order."""
    return [m.body for m in messages if m.sender == sender]
