"""What one scout run read, as citable sources (SPEC §13).

The grounding check needs to know, for each attribution a bundle writes, whether the run
read that source and what its text was. :class:`RunSources` collects that from the two
places a run reads: the system prompt (PROFILE.md, MEMORY.md, the Connected Integrations
section, built from the workspace) and the results of its read-only tool calls (memory
hits, flavour facets, skills, registry entries, web results and pages). Only structured
tool results count (``ToolResult.data``), never the model's own text: a source is what
the harness handed the model, not what the model says it saw.

The same collection numbers the run's *facts* (:meth:`RunSources.facts`): the passages
of every memory hit, flavour facet, MEMORY.md and PROFILE.md that answer the request
(:func:`~supercontext_lab.reading.passages.passages`), each with the attribution that cites it,
best first (:func:`~supercontext_lab.reading.passages.ranked_passages`, the ranking the offline
scout quotes by too), which the extractive emission lets a model choose by number.

A hit on a past conversation is a turn (with the neighbour that completes it): it is a
source named ``(transcript: <conversation id>)`` whose text is every turn of that
conversation the run read, so the grounding check reads the cited turns, and it is
quoted like a note (whole when short,
:data:`~supercontext_lab.reading.passages.SHORT_TURN_CHARS`), each quote saying who spoke
(:func:`~supercontext_lab.reading.transcripts.with_speaker`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._text import one_line
from ..bundle.records import Source
from ..bundle.render import attributions_as_text
from ..reading.facts import distinct_facts, note_sentences
from ..reading.meaning import with_meaning
from ..reading.passages import SHORT_NOTE_CHARS, SHORT_TURN_CHARS, Quotable, ranked_passages
from ..reading.references import referred
from ..reading.relevance import RequestTerms
from ..reading.transcripts import echoes, no_fact, with_speaker
from ..sources.workspace import Workspace
from ..tools.base import ToolResult

__all__ = ["Fact", "RunSources", "SourceText", "attribution_labels", "sentences", "sources_of"]

_MAX_FACTS = 40


@dataclass(frozen=True)
class SourceText:
    """One source a run read: what cites it and the text it holds."""

    source: Source
    text: str
    title: str = ""
    """A short name shown with the source (a note's first line, a skill's name)."""


@dataclass(frozen=True)
class Fact:
    """One gathered sentence and the attribution that cites it."""

    number: int
    text: str
    source: Source

    @property
    def cited(self) -> str:
        """The sentence with its attribution, as a summary bullet writes it (an attribution
        inside the note's text written as text, :func:`attributions_as_text`)."""
        return f"{attributions_as_text(self.text)} ({self.source.label})"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped:
            return one_line(stripped, 90, at_word=True)
    return ""


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def sentences(text: str) -> list[str]:
    """The whole sentences of ``text`` as facts
    (:func:`~supercontext_lab.reading.facts.note_sentences`: headings left out, wrapped lines
    joined, never cut)."""
    return note_sentences(text)


@dataclass
class RunSources:
    """The sources of one run, keyed by what cites them; see the module docstring."""

    named: dict[Source, SourceText] = field(default_factory=dict)
    """Sources cited by name: ``(memory: ns/key)``, ``(transcript: id)``, ``(skill: id)``,
    ``(web: url)``."""
    memory_md: str = ""
    profile_md: str = ""
    profile: list[str] = field(default_factory=list)
    integrations: str = ""
    skills_seen: dict[str, bool] = field(default_factory=dict)
    """Every skill id the run saw, installed or from the registry, and whether installed."""
    _texts: list[tuple[str, Source, float | None, str, str]] = field(default_factory=list)
    """Every text facts are quoted from, with what cites it, its recall score (memory
    hits; ``None`` for facets), its key and the recall's query (``""`` for facets)."""
    _meaning: list[tuple[str, Source]] = field(default_factory=list)
    """The units found by meaning (``by_meaning``), best first, with what cites them."""
    _units_only: set[Source] = field(default_factory=set)
    """The notes the run read only units of (found by meaning)."""

    @classmethod
    def for_run(cls, workspace: Workspace) -> RunSources:
        """What the system prompt gives every run: PROFILE.md, MEMORY.md, integrations."""
        sources = cls(memory_md=workspace.memory_md, profile_md=workspace.profile_md)
        if workspace.profile_md.strip():
            sources.profile.append(workspace.profile_md)
        lines = [
            f"{i.toolkit} {'connected' if i.connected else 'not connected'} {i.description}"
            for i in workspace.integrations
        ]
        sources.integrations = "Connected integrations\n" + "\n".join(lines)
        return sources

    # -- collecting ------------------------------------------------------------------------

    def add_result(self, tool: str, result: ToolResult) -> None:
        """Record what one successful read-only call handed the model."""
        if not result.ok or not isinstance(result.data, Mapping):
            return
        data: Mapping[str, Any] = result.data
        if tool == "memory_recall":
            for hit in _dicts(data.get("hits")):
                self._memory_hit(hit, _str(data.get("query")))
            for hit in _dicts(data.get("by_meaning")):
                self._memory_hit(hit, "", by_meaning=True)
        elif tool == "memory_flavour":
            content = _str(data.get("content")).strip()
            if content:
                facet = _str(data.get("facet"))
                self.profile.append(f"{facet} {facet.replace('_', ' ')}\n{content}")
                self._texts.append((content, Source("profile"), None, facet, ""))
        elif tool == "list_workflows":
            for skill in _dicts(data.get("skills")):
                self._skill(_str(skill.get("dir_name")), skill, installed=True)
        elif tool in ("skill_registry_search", "skill_registry_browse"):
            for entry in _dicts(data.get("results")):
                self._skill(_str(entry.get("id")), entry, installed=bool(entry.get("installed")))
        elif tool == "web_search_tool":
            for item in _dicts(data.get("results")):
                text = f"{_str(item.get('title'))}\n{_str(item.get('snippet'))}"
                self._web(_str(item.get("url")), text, _str(item.get("title")))
        elif tool == "web_fetch":
            self._web(_str(data.get("url")), _str(data.get("text")), "")

    def _memory_hit(self, hit: Mapping[str, Any], query: str, *, by_meaning: bool = False) -> None:
        """A memory hit (or, ``by_meaning``, a unit found by meaning): its source named,
        its text quoted from."""
        namespace, key = _str(hit.get("namespace")), _str(hit.get("key"))
        content = _str(hit.get("content"))
        if not (namespace and key and content.strip()):
            # A hit without its content gave the model nothing to cite.
            return
        transcript = _str(hit.get("transcript")).strip()
        if transcript:
            source = Source("transcript", transcript)
            new = self._read_turn(source, hit, content)
        else:
            source = Source("memory", f"{namespace}/{key}")
            new = self._read_note(source, key, content, whole=not by_meaning)
        if by_meaning:
            self._meaning.append((content, source))
        elif new:
            score = hit.get("score")
            recalled = float(score) if isinstance(score, int | float) else 0.0
            self._texts.append((content, source, recalled, "" if transcript else key, query))

    def _read_turn(self, source: Source, hit: Mapping[str, Any], content: str) -> bool:
        """A turn of a past conversation added to its conversation's text (every turn of
        it the run read); whether the run had not read it yet."""
        known = self.named.get(source)
        if known is not None and content in known.text:
            return False
        title = _str(hit.get("title")) or source.ref or ""
        date = _str(hit.get("date"))
        shown = one_line(f"{title} ({date[:10]})" if date else title, 90, at_word=True)
        text = content if known is None else f"{known.text}\n{content}"
        self.named[source] = SourceText(source, text, known.title if known else shown)
        return True

    def _read_note(self, source: Source, key: str, content: str, *, whole: bool) -> bool:
        """A note named by what the run read of it: the whole note (a search by words) or,
        until words hand over the whole, the units of it found by meaning; whether the
        text was new."""
        known = self.named.get(source)
        partial = source in self._units_only
        if known is None or (partial and whole):
            self.named[source] = SourceText(source, f"{key}\n{content}", _first_line(content))
            (self._units_only.discard if whole else self._units_only.add)(source)
            return True
        if partial and content not in known.text:
            self.named[source] = SourceText(source, f"{known.text}\n{content}", known.title)
            return True
        return False

    def _skill(self, skill_id: str, item: Mapping[str, Any], *, installed: bool) -> None:
        if not skill_id:
            return
        self.skills_seen[skill_id] = self.skills_seen.get(skill_id, False) or installed
        tags = item.get("tags")
        words = " ".join(str(t) for t in tags) if isinstance(tags, list) else ""
        name = _str(item.get("name"))
        text = f"{skill_id} {name} {words}\n{_str(item.get('description'))}"
        source = Source("skill", skill_id)
        self.named.setdefault(source, SourceText(source, text, name or skill_id))

    def skill_description(self, skill_id: str) -> str:
        """The description of a skill the run saw (its registry or listing entry), or ``""``."""
        known = self.named.get(Source("skill", skill_id))
        return known.text.partition("\n")[2].strip() if known is not None else ""

    def _web(self, url: str, text: str, title: str) -> None:
        if url and text.strip():
            source = Source("web", url)
            known = self.named.get(source)
            joined = text if known is None else f"{known.text}\n{text}"
            self.named[source] = SourceText(source, joined, title or (known.title if known else ""))

    # -- reading ---------------------------------------------------------------------------

    def texts_for(self, source: Source) -> list[str]:
        """The texts that may support a bullet citing ``source``; empty when the run did
        not read it. A plain ``(memory)`` may rest on any note read or on MEMORY.md."""
        if source.ref is not None:
            known = self.named.get(source)
            return [known.text] if known is not None else []
        if source.kind == "memory":
            notes = [s.text for k, s in self.named.items() if k.kind == "memory"]
            return notes + ([self.memory_md] if self.memory_md.strip() else [])
        if source.kind == "profile":
            return list(self.profile)
        if source.kind == "integrations":
            return [self.integrations]
        return []

    def note(self, source: Source) -> SourceText | None:
        """The named source ``source``, when the run read it."""
        return self.named.get(source)

    def facts(self, request: RequestTerms, limit: int = _MAX_FACTS) -> list[Fact]:
        """The run's passages that answer ``request``, best first and numbered from 1,
        repeats left out (compared as :func:`~supercontext_lab.reading.facts.distinct_facts`
        does); see the module docstring for the ranking."""
        # A past turn that only repeats the request (the same question asked in an
        # earlier thread) is no fact, and must not set the scale other hits are weighed by.
        texts = [
            Quotable(
                text,
                source,
                score,
                name,
                whole_below=_whole_below(source),
                via=referred(query, request),
            )
            for text, source, score, name, query in self._texts
            if source.kind != "transcript" or not echoes(text, request)
        ]
        if self.memory_md.strip():
            texts.append(Quotable(self.memory_md, Source("memory")))
        if self.profile_md.strip():
            texts.append(Quotable(self.profile_md, Source("profile")))
        ranked: list[tuple[str, Source]] = []
        meaning = [
            (text, source)
            for text, source in self._meaning
            if source.kind != "transcript" or not echoes(text, request)
        ]
        for passage, source in with_meaning(ranked_passages(texts, request), meaning, request):
            quote = self._quoted(passage.text, source)
            if source.kind == "transcript" and no_fact(quote, request):
                continue  # a past turn that only repeats the request says nothing new
            ranked.append((quote, source))
        unique = distinct_facts(ranked, lambda row: row[0], limit)
        return [Fact(number, text, source) for number, (text, source) in enumerate(unique, 1)]

    def _quoted(self, text: str, source: Source) -> str:
        """A passage as a fact: one of a past conversation says who spoke."""
        if source.kind != "transcript":
            return text
        known = self.named.get(source)
        return with_speaker(known.text, text) if known is not None else text

    def notes(self) -> dict[Source, SourceText]:
        """The named sources the run read, for displays (a chip shows the note's text)."""
        return dict(self.named)


def _whole_below(source: Source) -> int:
    """How short a text must be to be quoted whole: a turn of a past conversation (with
    the neighbour that completes it) is quoted whole longer than a note, so a reply that
    lists ten venues answers "which was the last one"."""
    return SHORT_TURN_CHARS if source.kind == "transcript" else SHORT_NOTE_CHARS


def sources_of(workspace: Workspace, results: Iterable[tuple[str, ToolResult]]) -> RunSources:
    """:class:`RunSources` of a run on ``workspace`` whose calls returned ``results``."""
    sources = RunSources.for_run(workspace)
    for tool, result in results:
        sources.add_result(tool, result)
    return sources


def attribution_labels(sources: RunSources) -> Sequence[str]:
    """Every attribution a constrained emission may write for this run, named ones first."""
    labels = [source.label for source in sources.named]
    labels.append("memory")
    if sources.profile:
        labels.append("profile")
    labels.append("integrations")
    return labels
