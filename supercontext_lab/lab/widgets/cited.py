"""What each attribution chip of a bundle panel opens: the text of the source it cites.

A chip that names a document (``(memory: ns/key)``, ``(skill: id)``, ``(web: url)``)
opens what the run read of it (:meth:`~supercontext_lab.scout.sources.RunSources.notes`).
The plain forms name no document, so their chips open what they may rest on, from the
same record of the run: ``(memory)`` MEMORY.md and the notes read, ``(profile)``
PROFILE.md and the flavour facets read, ``(integrations)`` the integrations the scout's
prompt listed. Nothing here decides whether a bullet is supported; that is the grounding
check's verdict, shown elsewhere in the panel.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ...bundle_records import Source
from ...scout.sources import RunSources, SourceText

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


def cited_sources(sources: RunSources | None) -> dict[Source, SourceText]:
    """Every source a chip of this run may open, named and plain, with its text."""
    if sources is None:
        return {}
    cited = sources.notes()
    for plain in (_memory(sources), _profile(sources), _integrations(sources)):
        if plain is not None:
            cited[plain.source] = plain
    return cited
