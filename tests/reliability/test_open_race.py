"""The check/open race: a workspace file (or a folder above it) swapped for a link out of
the workspace between the confinement check and the open is never read.

A thread flips each source between the real thing and a link to a folder outside the
workspace holding a secret under the same name, as fast as it can, while the reader reads
it thousands of times. Every read must give the inside content or a refusal (or "not
there", in the instants the flipper has moved it away); the secret never comes back, and
nothing outside ends up in the memory index.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from supercontext_lab.errors import WorkspaceError
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.sources.memory.files import read_memory_file, scan_memory_folder
from supercontext_lab.sources.memory.schema import SCHEMA_VERSION
from supercontext_lab.sources.memory.seal import Seal
from supercontext_lab.sources.workspace import Workspace

from .support import write

SECRET = "OUTSIDE-SECRET-race-7c21"
INSIDE = "inside-content-kept"
READS = 4000


def _markdown(word: str) -> str:
    return f"---\nname: {word}\ndescription: {word}\n---\n{word} body\n"


def _registry(word: str) -> str:
    return json.dumps([{"id": word, "name": word, "description": word}])


def _toml(word: str) -> str:
    return f'[[integration]]\ntoolkit = "{word}"\ndescription = "{word}"\nconnected = true\n'


@contextmanager
def flipping(target: Path, outside: Path) -> Iterator[Counter[str]]:
    """Flip ``target`` (a file or folder) between itself and a link to ``outside`` until
    the block ends; the counter says how many flips were made."""
    aside = target.with_name(f".{target.name}.aside")
    stop = threading.Event()
    flips: Counter[str] = Counter()

    def flip() -> None:
        while not stop.is_set():
            os.rename(target, aside)
            os.symlink(outside, target)
            time.sleep(0)  # let the reader run in each state
            os.unlink(target)
            os.rename(aside, target)
            time.sleep(0)
            flips["flips"] += 1

    worker = threading.Thread(target=flip, daemon=True)
    worker.start()
    try:
        yield flips
    finally:
        stop.set()
        worker.join(10)
    assert target.exists() and not target.is_symlink()


def _race(read: Callable[[], str | None], target: Path, outside: Path) -> Counter[str]:
    """Read at least ``READS`` times while ``target`` flips; count what came back."""
    seen: Counter[str] = Counter()
    with flipping(target, outside) as flips:
        # READS reads, and more (up to five times as many) until one got the inside
        # content: how the two threads take turns is up to the scheduler.
        for attempt in range(5 * READS):
            if attempt >= READS and seen["inside"]:
                break
            try:
                text = read()
            except (WorkspaceError, OSError):
                seen["refused"] += 1
                continue
            if text and SECRET in text:
                seen["outside"] += 1
            elif text and INSIDE in text:
                seen["inside"] += 1
            else:
                seen["refused"] += 1
    seen["flips"] = flips["flips"]
    return seen


def _ws(root: Path) -> Workspace:
    return Workspace(root, allow_outside_links=False)


def _memory_read(root: Path) -> str | None:
    files, _, _ = scan_memory_folder(root)
    entry = files.get("global/note.md")
    if entry is None:
        return None
    row = read_memory_file(entry, "global/note.md", Seal.for_folder(root, SCHEMA_VERSION))
    return None if row is None else row.content


# name → (file to write, text maker, what is flipped (relative), the read)
SOURCES: dict[str, tuple[str, Callable[[str], str], str, Callable[[Path], str | None]]] = {
    "PROFILE.md": ("PROFILE.md", _markdown, "PROFILE.md", lambda r: _ws(r).profile_md),
    "MEMORY.md": ("MEMORY.md", _markdown, "MEMORY.md", lambda r: _ws(r).memory_md),
    "flavour facet": (
        "flavour/communication.md",
        _markdown,
        "flavour/communication.md",
        lambda r: _ws(r).flavour.get("communication"),
    ),
    "SKILL.md": (
        "skills/s/SKILL.md",
        _markdown,
        "skills/s/SKILL.md",
        lambda r: " ".join(s.body for s in _ws(r).skills),
    ),
    "skill folder": (
        "skills/s/SKILL.md",
        _markdown,
        "skills/s",
        lambda r: " ".join(s.body for s in _ws(r).skills),
    ),
    "registry.json": (
        "registry.json",
        _registry,
        "registry.json",
        lambda r: " ".join(e.name for e in _ws(r).registry),
    ),
    "integrations.toml": (
        "integrations.toml",
        _toml,
        "integrations.toml",
        lambda r: " ".join(i.toolkit for i in _ws(r).integrations),
    ),
    "files/ file": (
        "files/note.md",
        _markdown,
        "files/note.md",
        lambda r: _ws(r).read_file("note.md"),
    ),
    "files/ folder": (
        "files/sub/note.md",
        _markdown,
        "files/sub",
        lambda r: _ws(r).read_file("sub/note.md"),
    ),
    "memory note": ("memory/global/note.md", _markdown, "memory/global/note.md", _memory_read),
    "memory namespace": ("memory/global/note.md", _markdown, "memory/global", _memory_read),
}


@pytest.mark.parametrize("source", list(SOURCES))
def test_a_source_flipped_to_a_link_out_is_never_read(source: str, tmp_path: Path) -> None:
    """A source flipped to a link out while read 4,000 times: the outside never comes back

    A thread flips the file or folder between itself and a link out of the workspace."""
    relative, make, flipped, read = SOURCES[source]
    root, outside = tmp_path / "ws", tmp_path / "outside"
    write(root / relative, make(INSIDE))
    write(outside / relative, make(SECRET))
    # The link points at the outside twin of what is flipped (a file or a folder).
    seen = _race(lambda: read(root.resolve()), root / flipped, outside / flipped)
    assert seen["outside"] == 0, seen
    assert seen["inside"] > 0 and seen["flips"] > 10, seen


def test_memory_index_never_takes_in_a_note_flipped_to_a_link_out(tmp_path: Path) -> None:
    """The memory tree syncing 1,000 times while a note flips to a link out: none indexed"""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    note = write(root / "memory" / "global" / "note.md", _markdown(INSIDE))
    write(outside / "note.md", _markdown(SECRET))
    leaked = 0
    with MemoryTree(root) as tree:
        with flipping(note, outside / "note.md"):
            for round_ in range(1000):
                # A new modification time makes every sync read the note again.
                with contextlib.suppress(OSError):
                    stamp = (round_ + 1) * 1_000_000_000
                    os.utime(note, ns=(stamp, stamp), follow_symlinks=False)
                try:
                    tree.sync()
                except OSError:
                    continue
                leaked += bool(tree.recall("*", SECRET.lower().replace("-", " "), limit=3))
        os.utime(note)
        tree.sync()  # the flipping has stopped: the note is a plain file again
        indexed = bool(tree.recall("*", "inside content kept", limit=3))
    assert leaked == 0 and indexed
