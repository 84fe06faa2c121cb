"""What each attribution chip of a bundle panel opens: the text of the source it cites.

A chip that names a document (``(memory: ns/key)``, ``(skill: id)``, ``(web: url)``)
opens what the run read of it (:meth:`~supercontext_lab.scout.sources.RunSources.notes`).
A ``(transcript: <id>)`` chip is shown by its conversation's title and date, says on hover
which turn the run read, and opens on that turn with the turns around it, read from the
workspace's past conversations (without the workspace, the turns the run read).
The plain forms name no document, so their chips open what they may rest on, from the
same record of the run: ``(memory)`` MEMORY.md and the notes read, ``(profile)``
PROFILE.md and the flavour facets read, ``(integrations)`` the integrations the scout's
prompt listed. Nothing here decides whether a bullet is supported; that is the grounding
check's verdict, shown elsewhere in the panel.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..._text import one_line
from ...bundle.records import Source
from ...conversations import open_store, turns_around
from ...errors import ConversationStoreError
from ...scout.sources import RunSources, SourceText
from ...sources.workspace import Workspace

__all__ = ["cited_sources"]

# A flavour facet read by memory_flavour is recorded as "<facet> <facet in words>" over
# its content (the words let the check match "coding style" to coding_style).
_FACET_HEAD = re.compile(r"(?P<facet>[a-z_]+) (?P<words>[a-z ]+)")


def _profile_parts(entries: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``(file name, text)`` of each profile source the run read."""
    for entry in entries:
        head, _, body = entry.partition("\n")
        match = _FACET_HEAD.fullmatch(head)
        if match and body.strip() and match["words"] == match["facet"].replace("_", " "):
            yield f"flavour/{match['facet']}.md", body.strip()
        else:
            yield "PROFILE.md", entry.strip()


def _memory(sources: RunSources) -> SourceText | None:
    notes = [(s.ref, text.title) for s, text in sources.named.items() if s.kind == "memory"]
    if not sources.memory_md.strip() and not notes:
        return None
    parts = ["A plain (memory) cites MEMORY.md or any memory note this run read."]
    if sources.memory_md.strip():
        parts.append("MEMORY.md\n" + sources.memory_md.strip())
    if notes:
        lines = "\n".join(f"- {ref}: {title}" if title else f"- {ref}" for ref, title in notes)
        parts.append("Notes read (each also has its own chip where cited by name)\n" + lines)
    return SourceText(Source("memory"), "\n\n".join(parts), "MEMORY.md or a note")


def _profile(sources: RunSources) -> SourceText | None:
    parts = [f"{name}\n{text}" for name, text in _profile_parts(sources.profile) if text]
    if not parts:
        return None
    lead = "A (profile) cites PROFILE.md or a flavour facet this run read."
    return SourceText(Source("profile"), "\n\n".join([lead, *parts]), "PROFILE.md or flavour")


def _integrations(sources: RunSources) -> SourceText | None:
    _, _, listed = sources.integrations.partition("\n")
    if not listed.strip():
        return None
    lead = (
        "An (integrations) cites the Connected Integrations section of the scout's prompt: "
        "the workspace's integrations below that are marked connected."
    )
    return SourceText(Source("integrations"), f"{lead}\n\n{listed.strip()}", "integrations")


_AROUND_CHARS = 400


def _transcript(source: Source, read: SourceText, workspace: Workspace | None) -> SourceText:
    """What a transcript chip shows: the title and date, the turn read, the turns around."""
    around = None
    if workspace is not None and source.ref:
        try:
            store = open_store(workspace.root, create=False)
        except ConversationStoreError:
            store = None
        if store is not None:
            with store:
                around = turns_around(store, source.ref, read.text)
    if around is None:
        return SourceText(source, f"{read.title or source.ref}\n\n{read.text}", read.title)
    head = " · ".join(part for part in (around.title, (around.date or "")[:10]) if part)
    quoted = [turn for turn in around.turns if turn.position in around.read]
    others = [turn for turn in around.turns if turn.position not in around.read]
    numbers = ", ".join(str(turn.position + 1) for turn in quoted) or "none"
    lines = [
        head,
        f"conversation {around.conversation}: turn{'s' if len(quoted) > 1 else ''} {numbers} "
        f"of {around.total} read",
        "",
        *(f"{turn.position + 1}. {turn.label}: {turn.content.strip()}" for turn in quoted),
    ]
    if others:
        lines += ["", "Around it:"]
        lines += [
            f"{turn.position + 1}. {turn.label}: "
            + one_line(turn.content, _AROUND_CHARS, at_word=True)
            for turn in others
        ]
    return SourceText(source, "\n".join(lines), head)


def cited_sources(
    sources: RunSources | None, workspace: Workspace | None = None
) -> dict[Source, SourceText]:
    """Every source a chip of this run may open, named and plain, with its text; with
    the ``workspace`` the run searched, a transcript chip opens on the turns around the
    one it cites."""
    if sources is None:
        return {}
    cited = sources.notes()
    for source, read in list(cited.items()):
        if source.kind == "transcript":
            cited[source] = _transcript(source, read, workspace)
    for plain in (_memory(sources), _profile(sources), _integrations(sources)):
        if plain is not None:
            cited[plain.source] = plain
    return cited
