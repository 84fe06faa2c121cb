"""Markdown sources are read masked (sources/confined.py)."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace


def test_every_markdown_source_is_read_with_secrets_masked(tmp_path: Path) -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    root = build_workspace(
        tmp_path / "ws",
        {
            "PROFILE.md": f"Maya deploys with {key}.\n",
            "MEMORY.md": f"- The CI key is {key}.\n",
            "flavour/workflow.md": f"Rotate {key} monthly.\n",
            "skills/deploy/SKILL.md": f"---\nname: deploy\ndescription: Uses {key}\n---\nBody\n",
        },
    )
    workspace = Workspace(root)
    texts = [
        workspace.profile_md,
        workspace.memory_md,
        workspace.flavour["workflow"],
        workspace.skills[0].description,
    ]
    assert all("[secret removed]" in text and key not in text for text in texts)
