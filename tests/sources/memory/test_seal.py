"""The memory index's seal: the lab's key, an index's binding, a row's digest."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import pytest

from supercontext_lab.config import lab_home
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.sources.memory.files import keys_left_out
from supercontext_lab.sources.memory.seal import ENV_INDEX_KEY, KEY_FILE, Seal, lab_key


def test_the_key_is_made_once_and_readable_by_the_user_only() -> None:
    key = lab_key()
    path = lab_home() / KEY_FILE  # the test's user key (conftest), in its lab home
    assert path.read_bytes() == key and len(key) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert lab_key() == key


def test_every_lab_home_of_the_user_shares_the_users_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_INDEX_KEY, str(tmp_path / "user" / KEY_FILE))
    monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(tmp_path / "notebook-home"))
    key = lab_key()
    monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(tmp_path / "default-home"))
    assert lab_key() == key == (tmp_path / "user" / KEY_FILE).read_bytes()
    # No lab home holds a key of its own: the user's is the one.
    assert not (tmp_path / "notebook-home" / KEY_FILE).exists()
    assert not (tmp_path / "default-home" / KEY_FILE).exists()


def test_a_user_key_others_can_read_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    shared = tmp_path / "user" / KEY_FILE
    shared.parent.mkdir()
    shared.write_bytes(b"k" * 32)
    shared.chmod(0o644)
    monkeypatch.setenv(ENV_INDEX_KEY, str(shared))
    key = lab_key()
    assert key != b"k" * 32
    assert key == (lab_home() / KEY_FILE).read_bytes()  # the lab home's, made instead
    assert "readable by others" in caplog.text


def test_a_user_key_that_cannot_be_kept_falls_back_to_the_lab_homes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("a file where the folder should be")
    monkeypatch.setenv(ENV_INDEX_KEY, str(blocked / KEY_FILE))
    key = lab_key()
    assert key == (lab_home() / KEY_FILE).read_bytes()


def test_a_binding_names_the_folder_and_the_schema(tmp_path: Path) -> None:
    one = Seal.for_folder(tmp_path / "a", 1)
    assert one == Seal.for_folder(tmp_path / "a", 1)
    assert one.binding != Seal.for_folder(tmp_path / "b", 1).binding
    assert one.binding != Seal.for_folder(tmp_path / "a", 2).binding
    fields = ("ns", "key", "note", "text", None, "ns/key.md", "0" * 64)
    digest = one.digest(fields)
    assert one.verifies(fields, digest)
    assert not one.verifies((*fields[:3], "changed", *fields[4:]), digest)
    assert not Seal.for_folder(tmp_path / "b", 1).verifies(fields, digest)
    assert not one.verifies(fields, None)


def test_a_lab_home_that_cannot_hold_the_key_gives_a_key_for_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    home.write_text("a file where the folder should be")
    monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(home))
    monkeypatch.setenv(ENV_INDEX_KEY, str(home / KEY_FILE))
    with caplog.at_level(logging.WARNING):
        key = lab_key()
    assert len(key) == 32 and lab_key() == key
    assert "verified within this process only" in caplog.text
    with MemoryTree(tmp_path / "ws") as tree:
        tree.add("global", "a", "a note")
        assert [hit.key for hit in tree.recall("*", "note")] == ["a"]


def test_a_key_file_of_another_shape_is_not_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    (home / KEY_FILE).parent.mkdir(parents=True)
    (home / KEY_FILE).write_bytes(b"short")
    monkeypatch.setenv("SUPERCONTEXT_LAB_HOME", str(home))
    monkeypatch.setenv(ENV_INDEX_KEY, str(home / KEY_FILE))
    assert lab_key() != b"short"
    assert "is not a key this lab wrote" in caplog.text


@pytest.mark.parametrize(
    ("keys", "left_out"),
    [
        ({"ns/a.md": ("ns", "a"), "ns/b.md": ("ns", "b")}, set()),
        ({"ns/budget.md": ("ns", "budget"), "ns/evil.md": ("ns", "budget")}, {"ns/evil.md"}),
        ({"ns/a.md": ("ns", "x"), "ns/b.md": ("ns", "x")}, {"ns/a.md", "ns/b.md"}),
        ({"one/a.md": ("one", "x"), "two/a.md": ("two", "x")}, set()),
        ({"budget.md": ("global", "budget"), "global/x.md": ("global", "budget")}, {"global/x.md"}),
    ],
)
def test_keys_left_out(keys: dict[str, tuple[str, str]], left_out: set[str]) -> None:
    assert set(keys_left_out(keys)) == left_out
