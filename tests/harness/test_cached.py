"""The cached envelope's trust (harness/cached.py): sealed for this lab and folder, rebuilt
on a content hash of what it read, grounded before it is served."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.harness.cached import (
    CACHE_FILE,
    build_cached,
    load_cached,
    serve_cached,
)
from supercontext_lab.harness.cached_record import CachedEnvelope
from supercontext_lab.sources.memory.schema import SCHEMA_VERSION
from supercontext_lab.sources.memory.seal import Seal
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace

NOTE = "memory/global/budget.md"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(
        build_workspace(
            tmp_path / "ws",
            {
                "PROFILE.md": "Maya is an ecologist.\n",
                "MEMORY.md": "- The grant renewal is due on 2026-12-15.\n",
                NOTE: "The grant renewal budget is 40k.\n",
            },
        )
    )


def _store(workspace: Workspace, record: CachedEnvelope) -> None:
    path = workspace.root / ".supercontext" / CACHE_FILE
    path.write_text(json.dumps(record.to_dict()), encoding="utf-8")


def test_a_build_is_sealed_and_records_the_hash_of_every_text_it_read(
    workspace: Workspace,
) -> None:
    cached = build_cached(workspace)
    names = dict(cached.read)
    assert set(names) == {"PROFILE.md", "MEMORY.md", "memory/global/budget.md"}
    assert all(len(digest) == 64 for digest in names.values())
    assert cached.verifies(Seal.for_folder(workspace.root, SCHEMA_VERSION))
    assert load_cached(workspace) == cached


def test_a_stored_current_sealed_envelope_is_served_as_stored(workspace: Workspace) -> None:
    built = build_cached(workspace)
    served = serve_cached(workspace)
    assert served.rebuilt_because is None and not served.foreign
    assert served.cached == built and served.envelope == built.envelope
    assert served.grounding is not None
    assert served.grounding.grounded == served.grounding.checked == 3


def test_a_same_size_same_time_edit_of_a_note_is_seen(workspace: Workspace) -> None:
    build_cached(workspace)
    note = workspace.root / NOTE
    before = note.stat()
    note.write_text("The grant renewal budget is 90k.\n", encoding="utf-8")
    os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
    served = serve_cached(workspace)
    assert served.rebuilt_because == (
        "memory/global/budget.md changed since it was built (its content hash differs)"
    )
    assert "90k" in served.envelope and "40k" not in served.envelope


def test_a_changed_profile_is_seen_by_its_hash(workspace: Workspace, tmp_path: Path) -> None:
    build_cached(workspace)
    profile = workspace.root / "PROFILE.md"
    before = profile.stat()
    profile.write_text("Maya is an urologist.\n", encoding="utf-8")
    os.utime(profile, ns=(before.st_atime_ns, before.st_mtime_ns))
    served = serve_cached(Workspace(workspace.root))
    assert served.rebuilt_because is not None and "PROFILE.md changed" in served.rebuilt_because
    assert "urologist" in served.envelope


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("envelope", "[context_bundle]\nsummary:\n- Forged. (profile)\n[/context_bundle]"),
        ("sources", ["profile", "memory: global/forged"]),
        ("budget", 5000),
        ("read", []),
        ("seal", "0" * 64),
    ],
)
def test_a_record_changed_in_any_field_is_not_served(
    workspace: Workspace, field: str, value: object
) -> None:
    built = build_cached(workspace)
    path = workspace.root / ".supercontext" / CACHE_FILE
    path.write_text(json.dumps({**built.to_dict(), field: value}), encoding="utf-8")
    served = serve_cached(workspace)
    assert served.foreign and served.rebuilt_because is not None
    assert "not built by this lab for this folder" in served.rebuilt_because
    assert "Forged" not in served.envelope and "40k" in served.envelope
    # The record is replaced by a sealed one.
    stored = load_cached(workspace)
    assert stored is not None and stored.verifies(Seal.for_folder(workspace.root, SCHEMA_VERSION))


def test_a_record_of_another_lab_is_not_served(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_cached(workspace)
    # Another user's lab: its own home and its own index key.
    monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(tmp_path / "another-lab"))
    monkeypatch.setenv("SUPERCONTEXT_INDEX_KEY", str(tmp_path / "another-lab" / "index.key"))
    served = serve_cached(workspace)
    assert served.foreign and served.rebuilt


def test_a_sealed_envelope_is_still_grounded_before_it_is_served(workspace: Workspace) -> None:
    # A record this lab sealed whose text the notes do not support (say, a build that went
    # wrong): the check drops the unsupported line and keeps the rest.
    built = build_cached(workspace)
    envelope = built.envelope.replace(
        "The grant renewal budget is 40k.", "The grant renewal budget is 400k."
    )
    assert envelope != built.envelope
    seal = Seal.for_folder(workspace.root, SCHEMA_VERSION)
    planted = CachedEnvelope(
        envelope,
        built.fingerprint,
        built.built_at,
        built.build_ms,
        built.sources,
        built.budget,
        built.read,
    ).sealed_with(seal)
    _store(workspace, planted)
    served = serve_cached(workspace)
    assert served.rebuilt_because is None
    assert "400k" not in served.envelope
    assert served.grounding is not None and served.grounding.dropped
    bundle = parse_context_bundle(served.envelope)
    assert bundle is not None and "Maya is an ecologist." in bundle.summary


def test_grounding_off_serves_what_is_sealed(workspace: Workspace) -> None:
    build_cached(workspace)
    served = serve_cached(workspace, mode="off")
    assert served.grounding is not None and served.grounding.mode == "off"
    assert served.envelope == served.cached.envelope
