"""The cached envelope's stored record (harness/cached_record.py)."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab.harness.cached_record import VERSION, CachedEnvelope, text_hash
from supercontext_lab.sources.memory.seal import Seal


def _record() -> CachedEnvelope:
    return CachedEnvelope(
        "[context_bundle]\nsummary:\n- Maya is an ecologist. (profile)\n[/context_bundle]",
        "f" * 64,
        1_700_000_000.123456,
        12.345678,
        ("profile",),
        1000,
        (("PROFILE.md", text_hash("Maya is an ecologist.\n")),),
    )


def test_the_record_round_trips_with_its_seal(tmp_path: Path) -> None:
    seal = Seal.for_folder(tmp_path, 1)
    sealed = _record().sealed_with(seal)
    again = CachedEnvelope.from_dict(sealed.to_dict())
    assert again == sealed and again.verifies(seal)


def test_an_unsealed_record_or_one_of_another_folder_does_not_verify(tmp_path: Path) -> None:
    here = Seal.for_folder(tmp_path / "here", 1)
    there = Seal.for_folder(tmp_path / "there", 1)
    assert not _record().verifies(here)
    assert not _record().sealed_with(there).verifies(here)


def test_a_row_digest_never_verifies_as_a_record(tmp_path: Path) -> None:
    # The same key and binding seal the index's rows: a digest made for other fields is
    # not this record's.
    seal = Seal.for_folder(tmp_path, 1)
    record = _record()
    forged = CachedEnvelope(**{**record.__dict__, "seal": seal.digest([record.envelope])})
    assert not forged.verifies(seal)


def test_records_of_another_version_or_shape_are_none() -> None:
    good = _record().to_dict()
    assert good["version"] == VERSION
    for bad in (
        None,
        [],
        {**good, "version": VERSION - 1},
        {**good, "read": [["PROFILE.md"]]},
        {**good, "read": "PROFILE.md"},
        {**good, "seal": None},
        {**good, "budget": "1000"},
    ):
        assert CachedEnvelope.from_dict(bad) is None


def test_text_hash_is_the_sha256_of_the_utf8_text() -> None:
    assert text_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert text_hash("caf\udce9") != text_hash("café")
