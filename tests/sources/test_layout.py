"""The layout's near-misses: bounded, and silent on a workspace that is all read."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab.sources.layout import MAX_IGNORED, ignored
from supercontext_lab.testing import build_workspace


def test_a_flood_of_unread_entries_is_named_up_to_a_bound(tmp_path: Path) -> None:
    for number in range(MAX_IGNORED + 25):
        (tmp_path / f"stray-{number:04d}.csv").write_text("x", encoding="utf-8")
    found = ignored(tmp_path)
    assert len(found) == MAX_IGNORED + 1
    assert found[-1] == ("…", "25 more entries are not read either")


def test_a_control_character_in_a_name_stays_data(tmp_path: Path) -> None:
    (tmp_path / "evil\x1b[2J.md").write_text("x", encoding="utf-8")
    assert [path for path, _ in ignored(tmp_path)] == ["evil\x1b[2J.md"]


def test_a_folder_linked_out_of_the_workspace_is_not_listed(tmp_path: Path) -> None:
    outside = build_workspace(tmp_path / "outside", {"private-name.txt": "x", "deep/a.md": "x"})
    root = build_workspace(tmp_path / "ws", {"PROFILE.md": "- I study seeds.\n"})
    for name in ("memory", "skills", "flavour", "elsewhere"):
        (root / name).symlink_to(outside, target_is_directory=True)
    (root / "skills-inside").symlink_to(root / "memory", target_is_directory=True)
    findings = ignored(root)
    assert not any("private-name" in rel or "deep" in rel for rel, _ in findings)
    # Followed when links out are allowed, as the workspace's own reads are.
    allowed = ignored(root, allow_outside_links=True)
    assert (
        "memory/private-name.txt",
        "only .md notes are indexed; rename it private-name.md",
    ) in allowed
