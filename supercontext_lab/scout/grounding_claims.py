"""The grounding check of claims: the summary and the goal against what the run read (SPEC §13).

Every item of the summary is a claim (a bullet, a ``+``, ``1.``, ``1)`` or ``a)`` item, a
plain line, an item with the indented lines that continue it) except a line that cites
nothing and only says what is missing (one sentence labelled ``Missing:``, or "Nothing
relevant was found.": see :func:`~.claims.is_status_line`). A claim is supported when
every source it cites is one the run read (:class:`~.sources.RunSources`), every sentence
of it is supported by the text of one of them (the rules of :mod:`.claims`: enough shared
terms, the same figures, dates, amounts and identifiers, the same negation;
``(integrations)`` only as the list says), and every source it cites supports at least
one of its sentences. An attribution that a cited text itself holds ("… (memory:
other/note)" inside a note) is that text's content, not a citation: it is not counted,
and the envelope writes it as text
(:func:`~supercontext_lab.bundle.render.attributions_as_text`).

Given the user's request, the proposed goal (adopted as the thread's goal, in every later
turn's system prompt) is a claim too: the request and what the run read must support it
by the same rules, or a note's "set the goal to …" would become the thread's goal
(:func:`goal_problem`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._text import one_line
from ..bundle.records import Source, SummaryLine
from ..errors import SupercontextError
from ..reading.words import content_terms
from ..sources.integrations import Integration
from ..sources.workspace import Workspace
from .claims import (
    SUPPORT_THRESHOLD,
    EvidenceCache,
    Sentence,
    Verdict,
    integration_verdict,
    is_status_line,
    judge,
    sentences,
)
from .grounding_report import ClaimCheck
from .sources import RunSources

__all__ = [
    "CheckedClaim",
    "check_claim",
    "goal_problem",
    "integrations_of",
    "is_claim",
    "support",
]


def support(claim: str, texts: Iterable[str], cache: EvidenceCache | None = None) -> float:
    """The share of ``claim``'s content terms held by the best of ``texts`` (0 to 1), the
    first rule of :func:`~.claims.judge`."""
    if not content_terms(claim):
        return 0.0
    cache = cache or EvidenceCache()
    return max((judge(claim, cache.of(text)).share for text in texts), default=0.0)


@dataclass(frozen=True)
class CheckedClaim:
    """A claim's check, with the line it checked and the attributions it holds as text."""

    line: SummaryLine
    check: ClaimCheck
    quoted: frozenset[Source]


def _quoted(line: SummaryLine, texts: dict[Source, list[str]], cache: EvidenceCache) -> set[Source]:
    """The sources a line cites that another source it cites holds in its own text: a
    copied "(memory: other/note)" is part of the note, not the scout's citation."""
    return {
        source
        for source in line.sources
        for other in line.sources
        if other != source and any(source in cache.of(text).cites for text in texts[other])
    }


def check_claim(
    line: SummaryLine,
    sources: RunSources,
    cache: EvidenceCache,
    integrations: Sequence[Integration],
) -> CheckedClaim:
    """Whether what the run read (``sources``) supports the summary ``line`` (see the
    module docstring), ``cache`` holding the analysis of each text across the envelope."""
    texts = {source: sources.texts_for(source) for source in line.sources}
    quoted = _quoted(line, texts, cache)
    cited = [source for source in line.sources if source not in quoted]
    labels = tuple(source.label for source in cited)

    def failed(share: float, why: str) -> CheckedClaim:
        return CheckedClaim(line, ClaimCheck(line.text, labels, share, why), frozenset(quoted))

    if not cited:
        return failed(0.0, "it cites no source")
    unread = [source for source in cited if not texts[source]]
    if unread:
        return failed(0.0, f"the run did not read {unread[0].label}")
    # A sentence without a content word ("That is all.") states nothing to support; a
    # claim of such sentences only states nothing at all.
    parts = [part for part in map(Sentence.of, sentences(line.text)) if part.terms]
    if not parts:
        return failed(0.0, f"it states nothing (support 0.00 < {SUPPORT_THRESHOLD:g})")
    used: set[Source] = set()
    lowest = 1.0
    for sentence in parts:
        verdicts: list[Verdict] = []
        supported = False
        for source in cited:
            for text in texts[source]:
                evidence = cache.of(text)
                verdict = (
                    integration_verdict(sentence, evidence, integrations)
                    if source.kind == "integrations"
                    else judge(sentence, evidence)
                )
                verdicts.append(verdict)
                if verdict.supported:
                    # One text of a source is enough for the source to count.
                    used.add(source)
                    supported = True
                    lowest = min(lowest, verdict.share)
                    break
        if not supported:
            best = max(verdicts, key=lambda v: v.share)
            shown = one_line(sentence.text, 60, at_word=True)
            where = f" (in '{shown}')" if len(parts) > 1 else ""
            return failed(best.share, f"{best.why}{where}")
    idle = [source for source in cited if source not in used]
    if idle:
        return failed(lowest, f"{idle[0].label} supports none of it")
    return CheckedClaim(line, ClaimCheck(line.text, labels, lowest, None), frozenset(quoted))


def is_claim(line: SummaryLine) -> bool:
    """Whether ``line`` is a claim, to be checked."""
    # Every line says something, and is checked, except one that cites nothing and only
    # says what is missing ("Missing: …", "Nothing relevant was found.").
    return not is_status_line(line.text)


def goal_problem(goal: str, request: str, sources: RunSources, cache: EvidenceCache) -> str | None:
    """Why the request and what the run read do not support ``goal``, or ``None``."""
    texts = [request, *(t.text for t in sources.named.values()), sources.memory_md]
    texts += [*sources.profile, sources.integrations]
    # The request alone, or the request with everything read (a goal may name what a
    # note adds: "… by the March deadline").
    said = (cache.of(request), cache.of("\n\n".join(text for text in texts if text.strip())))
    for sentence in map(Sentence.of, sentences(goal)):
        verdicts = [judge(sentence, evidence) for evidence in said]
        if not any(verdict.supported for verdict in verdicts):
            why = verdicts[-1].why
            return f"neither the request nor what was read supports it: {why}"
    return None


def integrations_of(workspace: Workspace) -> list[Integration]:
    """The workspace's integration list; an unreadable one supports no claim (the run's
    system prompt reported it)."""
    try:
        return list(workspace.integrations)
    except SupercontextError:
        return []
