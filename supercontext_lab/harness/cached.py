"""The ``cached`` design: an envelope built ahead of time from the workspace (SPEC §16).

The cached envelope does not read the request: it is what any first turn in this
workspace should know. It is built from

* PROFILE.md: its first sentences, cited ``(profile)``;
* MEMORY.md: its sentences, cited ``(memory)``;
* the notes of the memory tree most recalled, then most recent: a note's opening
  sentences, cited ``(memory: <namespace>/<key>)``. "Recalled" counts how many pre-flights
  in this workspace read the note (:func:`record_recalls`, kept in
  ``.supercontext/recalls.json``); "recent" is the note's ``created`` front matter, else
  the file's modification time.

Each source gets a share of the token budget (profile a quarter, MEMORY.md a third, the
notes the rest and whatever the others left), and a fact that does not fit is left out
whole. The envelope has no goal, no recommendations and no ``has_enough_context`` line
(it was not checked against any request).

It is stored in ``.supercontext/preflight-cache.json`` (the lab's own folder in the
workspace, written atomically), sealed by this lab for this folder and holding the
content hash of every text it was built from (:mod:`.cached_record`). Serving it
(:func:`serve_cached`) builds it again, saying why, when the stored record is missing, is
not sealed by this lab for this folder (copied with the workspace, planted, edited by
hand), or was built from texts that changed since: a note edited to the same size and
time is read again, as every file it quoted is hashed again. Whichever envelope is sent
is grounded first (:func:`~supercontext_lab.scout.grounding.check_bundle`) against the
texts it cites, read now. ``supercontext-lab cache build`` builds it on demand.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from .._bounded import json_loads
from .._confine import read_confined
from .._hashing import fingerprint
from ..agents.definition import GroundingMode
from ..bundle import fit_bundle, parse_context_bundle
from ..bundle.render import write_envelope
from ..errors import MemoryIndexError, PathRefusedError, WorkspaceError
from ..models.base import estimate_tokens
from ..reading.facts import note_sentences
from ..scout.grounding import GroundingReport, check_bundle
from ..scout.sources import sources_of
from ..sources.memory import INDEX_DIR
from ..sources.memory.files import FileEntry, file_entry, read_memory_file, scan_memory_folder
from ..sources.memory.schema import SCHEMA_VERSION
from ..sources.memory.seal import Seal
from ..sources.workspace import Workspace
from ..tools.base import ToolResult
from .cached_record import (
    MEMORY_MD_NAME,
    NOTE_PREFIX,
    PROFILE_NAME,
    CachedEnvelope,
    text_hash,
)
from .designs import DEFAULT_CACHED_TOKENS

__all__ = [
    "CACHED_LABEL",
    "CACHE_FILE",
    "RECALLS_FILE",
    "CachedEnvelope",
    "Served",
    "build_cached",
    "cache_fingerprint",
    "load_cached",
    "recall_counts",
    "record_recalls",
    "serve_cached",
]

CACHED_LABEL = "cached (built ahead)"
"""The name a cached preparation is recorded with, where a scout run names its model."""
CACHE_FILE = "preflight-cache.json"
"""The cached envelope's file, in the workspace's ``.supercontext/`` folder."""
RECALLS_FILE = "recalls.json"
"""How often each note was read by a pre-flight, in the same folder."""

_VERSION = 1
"""The version of the recall counts' file and of the fingerprint."""
_MAX_CACHE_BYTES = 1 << 20
_MAX_RECALLS_BYTES = 4 << 20
_RECENT_NOTES = 200
"""Notes read at a build, besides the recalled ones: the most recently modified."""
_PROFILE_SHARE = 0.25
_MEMORY_MD_SHARE = 0.35
_PROFILE_FACTS = 6
_SENTENCES_PER_NOTE = 2
_MAX_RESULT_CHARS = 5000

# Threads of one process update the recall counts one at a time.
_RECALLS_LOCK = threading.Lock()


def _folder(workspace: Workspace) -> Path:
    """The workspace's ``.supercontext/`` folder, refused when it is a link (as the memory
    index refuses it): the lab writes only inside the workspace."""
    folder = workspace.root / INDEX_DIR
    if folder.is_symlink():
        raise WorkspaceError(
            f"{INDEX_DIR} in workspace '{workspace.root}' is a link; the lab only writes "
            f"inside the workspace. Remove the link (or delete {INDEX_DIR})."
        )
    return folder


def _stat(path: Path) -> list[int]:
    try:
        info = path.stat()
    except OSError:
        return [-1, -1]
    return [info.st_size, info.st_mtime_ns]


def _notes(workspace: Workspace) -> dict[str, FileEntry]:
    try:
        files, _, _ = scan_memory_folder(
            workspace.root, allow_outside_links=workspace.allow_outside_links
        )
    except MemoryIndexError:
        return {}
    return files


def cache_fingerprint(workspace: Workspace, *, budget: int = DEFAULT_CACHED_TOKENS) -> str:
    """The fingerprint of what the cached envelope of ``workspace`` is built from (see the
    module docstring): one ``stat`` per note, no file read."""
    notes = _notes(workspace)
    return fingerprint(
        {
            "v": _VERSION,
            "budget": budget,
            "profile": _stat(workspace.root / "PROFILE.md"),
            "memory_md": _stat(workspace.root / "MEMORY.md"),
            "notes": sorted([rel, e.size, e.mtime_ns] for rel, e in notes.items()),
            "recalls": _stat(workspace.root / INDEX_DIR / RECALLS_FILE),
        }
    )


# ----------------------------------------------------------------- recall counts


def _read(workspace: Workspace, name: str, max_bytes: int) -> Any:
    """The JSON of ``.supercontext/<name>``, read only inside the workspace (a linked
    ``.supercontext`` or file is refused, as the memory index refuses them); ``None``
    when it is missing, refused, larger than ``max_bytes`` or not JSON."""
    folder = workspace.root / INDEX_DIR
    if folder.is_symlink():
        return None
    try:
        raw, more = read_confined(workspace.root, folder / name, max_bytes)
        return None if more else json_loads(raw.decode("utf-8"))
    except (OSError, PathRefusedError, ValueError):
        return None


def recall_counts(workspace: Workspace) -> dict[str, int]:
    """How many pre-flights in ``workspace`` read each note (``"namespace/key"``);
    empty when none was recorded or the file is unreadable."""
    data = _read(workspace, RECALLS_FILE, _MAX_RECALLS_BYTES)
    counts = data.get("counts") if isinstance(data, dict) else None
    if not isinstance(counts, dict):
        return {}
    return {
        str(note): count
        for note, count in counts.items()
        if isinstance(count, int) and not isinstance(count, bool) and count > 0
    }


def record_recalls(workspace: Workspace, notes: Iterable[str]) -> None:
    """Add one to the recall count of each note (``"namespace/key"``) a pre-flight read.

    Written atomically into ``.supercontext/``; two processes counting at the same moment
    may lose one count, which only shifts a ranking. Raises ``OSError`` or
    :class:`~supercontext_lab.errors.WorkspaceError` when it cannot be written.
    """
    read = sorted(set(notes))
    if not read:
        return
    folder = _folder(workspace)
    with _RECALLS_LOCK:
        counts = recall_counts(workspace)
        for note in read:
            counts[note] = counts.get(note, 0) + 1
        folder.mkdir(exist_ok=True)
        text = json.dumps({"version": _VERSION, "counts": counts}, ensure_ascii=False, indent=1)
        write_atomic(folder / RECALLS_FILE, text + "\n")


# ----------------------------------------------------------------- building


def _recency(entry: FileEntry, created: str | None) -> str:
    """A sortable date: the note's ``created``, else its file's modification time."""
    if created:
        return created
    stamp = datetime.fromtimestamp(entry.mtime_ns / 1e9, tz=timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S")


def _seal(workspace: Workspace) -> Seal:
    """The seal of the workspace's memory index: the one this lab puts on what it builds
    for this folder (the notes' rows and the cached envelope alike)."""
    return Seal.for_folder(workspace.root, SCHEMA_VERSION)


def _ranked_notes(workspace: Workspace, read: dict[str, str]) -> list[tuple[str, str]]:
    """``(attribution ref, content)`` of the notes to quote: most recalled first, then
    most recent (see the module docstring). The content hash of every note read is put
    in ``read``."""
    files = _notes(workspace)
    counts = recall_counts(workspace)
    by_ref = {f"{entry.namespace}/{entry.key}": rel for rel, entry in files.items()}
    recalled = [by_ref[ref] for ref in counts if ref in by_ref]
    recent = sorted(files, key=lambda rel: files[rel].mtime_ns, reverse=True)[:_RECENT_NOTES]
    rows: list[tuple[int, str, str, str]] = []
    # The notes are read from their files, as the index reads them (sealed the same way).
    seal = _seal(workspace)
    for rel in dict.fromkeys([*recalled, *recent]):
        entry = files[rel]
        row = read_memory_file(entry, rel, seal)
        read[NOTE_PREFIX + rel] = (row.source_hash or "") if row is not None else ""
        if row is None or not row.content.strip():
            continue
        ref = f"{row.namespace}/{row.key}"
        count = counts.get(ref, counts.get(f"{entry.namespace}/{entry.key}", 0))
        rows.append((count, _recency(entry, row.created), ref, row.content))
    rows.sort(key=lambda row: (-row[0], _negated(row[1]), row[2]))
    return [(ref, content) for _, _, ref, content in rows]


def _negated(text: str) -> tuple[int, ...]:
    # Sorting newest first while ties stay in name order: a date string's code points,
    # negated.
    return tuple(-ord(ch) for ch in text)


def _take(facts: Iterable[str], room: int, kept: list[str]) -> int:
    """Append the facts that fit ``room`` tokens to ``kept``; the tokens used."""
    used = 0
    for fact in facts:
        cost = estimate_tokens(f"- {fact}\n")
        if used + cost <= room:
            kept.append(fact)
            used += cost
    return used


def _summary(
    workspace: Workspace, budget: int, read: dict[str, str], notes: dict[str, str]
) -> tuple[list[str], list[str]]:
    """The cited facts of the cached envelope and their attributions; what was read is put
    in ``read`` (content hashes) and ``notes`` (the notes' texts by reference)."""
    facts: list[str] = []
    read[PROFILE_NAME] = text_hash(workspace.profile_md)
    read[MEMORY_MD_NAME] = text_hash(workspace.memory_md)
    profile = [f"{s} (profile)" for s in note_sentences(workspace.profile_md)[:_PROFILE_FACTS]]
    used = _take(profile, int(budget * _PROFILE_SHARE), facts)
    memory = [f"{s} (memory)" for s in note_sentences(workspace.memory_md)]
    used += _take(memory, int(budget * _MEMORY_MD_SHARE), facts)
    ranked = _ranked_notes(workspace, read)
    notes.update(ranked)
    quoted = [
        f"{sentence} (memory: {ref})"
        for ref, content in ranked
        for sentence in note_sentences(content)[:_SENTENCES_PER_NOTE]
    ]
    _take(quoted, budget - used, facts)
    sources = [fact.rsplit(" (", 1)[1].rstrip(")") for fact in facts]
    return facts, list(dict.fromkeys(sources))


def build_cached(
    workspace: Workspace, *, budget: int = DEFAULT_CACHED_TOKENS, store: bool = True
) -> CachedEnvelope:
    """Build the cached envelope of ``workspace`` now and (with ``store``) write it, sealed,
    to ``.supercontext/preflight-cache.json``. The envelope is empty of facts
    (``summary:`` alone) when the workspace holds none."""
    return _build(workspace, budget, store, {})


def _build(workspace: Workspace, budget: int, store: bool, notes: dict[str, str]) -> CachedEnvelope:
    started = time.perf_counter()
    print_ = cache_fingerprint(workspace, budget=budget)
    read: dict[str, str] = {}
    facts, sources = _summary(workspace, budget, read, notes)
    envelope = write_envelope(
        has_enough_context=None,
        proposed_goal=None,
        summary="\n".join(f"- {fact}" for fact in facts),
    )
    envelope = fit_bundle(envelope, _MAX_RESULT_CHARS)
    cached = CachedEnvelope(
        envelope,
        print_,
        time.time(),
        (time.perf_counter() - started) * 1000.0,
        tuple(sources),
        budget,
        tuple(sorted(read.items())),
    ).sealed_with(_seal(workspace))
    if store:
        folder = _folder(workspace)
        folder.mkdir(exist_ok=True)
        text = json.dumps(cached.to_dict(), ensure_ascii=False, indent=1)
        write_atomic(folder / CACHE_FILE, text + "\n")
    return cached


def load_cached(workspace: Workspace) -> CachedEnvelope | None:
    """The stored cached envelope of ``workspace``, current or not, sealed or not; ``None``
    when there is none or it is unreadable."""
    return CachedEnvelope.from_dict(_read(workspace, CACHE_FILE, _MAX_CACHE_BYTES))


# ----------------------------------------------------------------- serving


@dataclass(frozen=True)
class Served:
    """The cached envelope a turn is sent, and how it came to be."""

    cached: CachedEnvelope
    """The record served (its envelope as stored or built, before the check)."""
    envelope: str
    """What the turn is sent: the envelope after the grounding check."""
    rebuilt_because: str | None
    """Why it was built for this turn (``None``: the stored one was current)."""
    grounding: GroundingReport | None
    """The grounding check of the envelope (``None`` when it holds no summary to check)."""
    foreign: bool = False
    """The stored record was not sealed by this lab for this folder."""

    @property
    def rebuilt(self) -> bool:
        return self.rebuilt_because is not None


def _stale(workspace: Workspace, stored: CachedEnvelope, notes: dict[str, str]) -> str | None:
    """Why ``stored`` no longer says what the workspace says, or ``None``; the texts of
    the notes it read are put in ``notes``."""
    current = {PROFILE_NAME: text_hash(workspace.profile_md)}
    current[MEMORY_MD_NAME] = text_hash(workspace.memory_md)
    seal = _seal(workspace)
    for name, digest in stored.read:
        if name.startswith(NOTE_PREFIX):
            rel = name[len(NOTE_PREFIX) :]
            entry = file_entry(
                workspace.root, rel, allow_outside_links=workspace.allow_outside_links
            )
            row = read_memory_file(entry, rel, seal) if entry is not None else None
            found = (row.source_hash or "") if row is not None else ""
            if row is not None:
                notes[f"{row.namespace}/{row.key}"] = row.content
        else:
            found = current.get(name, "")
        if found != digest:
            return f"{name} changed since it was built (its content hash differs)"
    return None


def _why_rebuild(
    workspace: Workspace, stored: CachedEnvelope | None, budget: int, notes: dict[str, str]
) -> str | None:
    if stored is None:
        return "there was none, or it could not be read"
    if not stored.verifies(_seal(workspace)):
        return (
            f"{INDEX_DIR}/{CACHE_FILE} was not built by this lab for this folder (copied, "
            "planted or edited by hand); it was not used"
        )
    if stored.fingerprint != cache_fingerprint(workspace, budget=budget):
        return "the workspace changed since it was built"
    return _stale(workspace, stored, notes)


def _grounded(
    workspace: Workspace, envelope: str, notes: dict[str, str], mode: GroundingMode
) -> tuple[str, GroundingReport | None]:
    """``envelope`` through the grounding check, against PROFILE.md, MEMORY.md and the
    notes it may cite, as read now."""
    bundle = parse_context_bundle(envelope)
    if bundle is None:
        return envelope, None
    hits = [
        {"namespace": ref.partition("/")[0], "key": ref.partition("/")[2], "content": text}
        for ref, text in notes.items()
    ]
    sources = sources_of(workspace, [("memory_recall", ToolResult(True, "", {"hits": hits}))])
    report = check_bundle(bundle, workspace=workspace, sources=sources, mode=mode)
    return (fit_bundle(report.envelope, _MAX_RESULT_CHARS) if report.changed else envelope), report


def serve_cached(
    workspace: Workspace, *, budget: int = DEFAULT_CACHED_TOKENS, mode: GroundingMode = "drop"
) -> Served:
    """The cached envelope to send now (see the module docstring): the stored one when
    this lab sealed it for this folder and nothing it was built from changed, else a new
    one (stored when the folder is writable; served either way), grounded in ``mode``."""
    stored = load_cached(workspace)
    notes: dict[str, str] = {}
    why = _why_rebuild(workspace, stored, budget, notes)
    foreign = stored is not None and not stored.verifies(_seal(workspace))
    cached = stored
    if why is not None or cached is None:
        notes.clear()
        try:
            cached = _build(workspace, budget, True, notes)
        except (OSError, WorkspaceError):
            # A read-only workspace still gets its envelope, built for this turn only.
            notes.clear()
            cached = _build(workspace, budget, False, notes)
    envelope, report = _grounded(workspace, cached.envelope, notes, mode)
    return Served(cached, envelope, why, report, foreign)
