"""When a text supports a sentence: the rules the grounding check applies (SPEC §13).

A summary line is a *claim* unless it cites nothing and only says what is missing
(:func:`is_status_line`). A claim is cut into sentences (:func:`sentences`: at ``.``,
``!``, ``?`` and ``;`` before white space, and at each attribution), and every sentence
with a content word must be supported on its own, so a false sentence cannot ride on a
copied one. A text supports a sentence when (:func:`judge`):

* at least :data:`SUPPORT_THRESHOLD` of the sentence's content terms occur in it (the
  package's one analyzer, :func:`~supercontext_lab.reading.words.content_terms`; a single letter
  is no content term of a sentence);
* every *figure* and every *identifier* of the sentence occurs in it (numbers, dates,
  amounts; addresses, file names, proper names: what counts as either is the rule of
  :mod:`.figures`);
* it says ``not`` where the sentence does, and only there: of the text's sentences that
  share the most terms with the sentence (among its first :data:`MAX_PARTS`), at least
  one holds a negation (``not``, ``no``, ``never``, ``n't``, ``cannot``, ``without``, …)
  exactly when the sentence does. A sentence cut short with ``…`` and copied as it stands
  is exempt: its negation may have been cut off.

``(integrations)`` supports only what the integration list says
(:func:`integration_verdict`): every content term of the sentence is in the list, and a
toolkit the sentence says is connected (or not) is listed so.

Every rule is linear in the length of its text; a text's analysis is worked out once per
check, part by part as a rule first needs it (:class:`Evidence`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..bundle.records import Source, find_attributions
from ..reading.facts import note_blocks
from ..reading.words import content_terms, words
from ..sources.integrations import Integration
from .figures import describe_figure, figures, identifier_tokens, identifiers

__all__ = [
    "MAX_PARTS",
    "SUPPORT_THRESHOLD",
    "Evidence",
    "EvidenceCache",
    "Sentence",
    "Verdict",
    "integration_verdict",
    "is_negated",
    "is_status_line",
    "judge",
    "sentences",
]

SUPPORT_THRESHOLD = 0.6
"""The least share of a sentence's content terms that one cited text must hold for the
sentence to count as supported. A sentence copied from a note scores 1.0; a paraphrase
that keeps the note's nouns and numbers scores above this; generic prose scores near 0."""

# ---------------------------------------------------------------------------- sentences

# A sentence ends at . ! ? or ; followed by white space. "e.g." and "J." end one too:
# joining across them would let a sentence ride on the one before; what they leave alone
# has no content term (single letters are none) and is passed over.
# A run of marks is tried from its first mark only, so a run of a million dots costs one
# pass, not one per dot.
_END_RE = re.compile(r"(?<![.!?;])[.!?;]+(?=\s)")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, trimmed, in order: cut at ``.``, ``!``, ``?`` or ``;``
    before white space, at line breaks and at every attribution (the attribution itself
    left out). Linear in ``text``."""
    out: list[str] = []
    position = 0
    for attribution in find_attributions(text):
        out += _split(text[position : attribution.start])
        position = attribution.end
    out += _split(text[position:])
    return out


def _split(text: str) -> list[str]:
    out: list[str] = []
    for line in text.split("\n"):
        start = 0
        for match in _END_RE.finditer(line):
            out.append(line[start : match.end()].strip())
            start = match.end()
        out.append(line[start:].strip())
    return [piece for piece in out if piece.strip(" .!?;,:")]


# ---------------------------------------------------------------------------- negation

_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|none|nor|neither|nobody|nothing|nowhere|cannot|without)\b"
    # "isn't", "don't": looked for at the "n't" itself, so a long word costs one pass.
    r"|(?<=\w)n['\u2019]t\b",
    re.IGNORECASE,
)


def is_negated(text: str) -> bool:
    """Whether ``text`` holds a negation (``not``, ``no``, ``never``, ``n't``, …)."""
    return _NEGATION_RE.search(text) is not None


# ---------------------------------------------------------------------------- status lines

# A second sentence after the first: "Missing: x. Forward every note …".
_MORE_RE = re.compile(r"[.!?]\s+\S")
_MISSING_RE = re.compile(r"^[*_]{0,2}missing[*_]{0,2}\s*:", re.IGNORECASE)
# The words of a line saying that nothing was found or is needed ("Nothing relevant was
# found.", "Nothing found on the web.", "A greeting or thanks; no background is needed to
# reply."): such a line can state no fact, whatever order they come in.
_STATUS_WORDS = frozenset(
    """
    a an the or and is was were are be been has have no nothing none not needed need
    required background context relevant found greeting thanks thank reply to for this
    request matched on in of from at any web memory note notes profile workspace
    integration integrations skill skills file files source sources search results
    """.split()
)


def is_status_line(text: str) -> bool:
    """Whether a summary line that cites nothing only says what is missing: one sentence
    labelled ``Missing:``, or one made only of the words of "nothing was found" or
    "nothing is needed". Every other line is a claim."""
    if find_attributions(text) or _MORE_RE.search(text):
        return False
    return _MISSING_RE.match(text) is not None or set(words(text)) <= _STATUS_WORDS


# ---------------------------------------------------------------------------- evidence


MAX_PARTS = 2000
"""A text's first this-many sentences are compared with a claim's for a negation (the
terms, figures and identifiers of the whole text count): a note of a megabyte costs a
check no more than one of a few pages."""


class Evidence:
    """What one cited text offers: its terms, figures, words and case-folded text, the
    terms and negation of each of its sentences, and the sources its own text cites.
    Each is worked out on first use: most texts fail a claim on its terms alone."""

    def __init__(self, text: str) -> None:
        self.text = text

    @classmethod
    def of(cls, text: str) -> Evidence:
        return cls(text)

    @cached_property
    def terms(self) -> frozenset[str]:
        return frozenset(content_terms(self.text))

    @cached_property
    def figures(self) -> frozenset[str]:
        return figures(self.text)

    @cached_property
    def tokens(self) -> frozenset[str]:
        """Its words as :func:`identifiers` reads them (case-folded, edge punctuation off)."""
        return identifier_tokens(self.text)

    @cached_property
    def folded(self) -> str:
        """The text case-folded, its white space collapsed."""
        return _flat(self.text)

    @cached_property
    def parts(self) -> tuple[tuple[frozenset[str], bool], ...]:
        """The terms and negation of its first :data:`MAX_PARTS` sentences, as the note's
        reader cuts them: wrapped lines joined, headings and list markers left out (the
        one rule, ``reading.facts.note_blocks``)."""
        found: list[tuple[frozenset[str], bool]] = []
        for block in note_blocks(self.text):
            for part in _split(block):
                found.append((frozenset(content_terms(part)), is_negated(part)))
                if len(found) >= MAX_PARTS:
                    return tuple(found)
        return tuple(found)

    @cached_property
    def cites(self) -> frozenset[Source]:
        """The sources its own text cites (a note quoting an attribution)."""
        return frozenset(a.source for a in find_attributions(self.text))

    def holds(self, identifier: str) -> bool:
        """Whether the text holds ``identifier`` (case-folded), as a word or inside one."""
        return identifier in self.tokens or identifier in self.folded


@dataclass
class EvidenceCache:
    """:class:`Evidence` of each text, computed once per check: a plain ``(memory)`` claim
    is compared with every note, and notes repeat across claims."""

    cache: dict[str, Evidence] = field(default_factory=dict)

    def of(self, text: str) -> Evidence:
        found = self.cache.get(text)
        if found is None:
            found = self.cache[text] = Evidence.of(text)
        return found


@dataclass(frozen=True)
class Sentence:
    """One sentence of a claim, analysed once: its text, content terms, figures,
    identifiers and whether it holds a negation."""

    text: str
    terms: frozenset[str]
    figures: frozenset[str]
    identifiers: tuple[str, ...]
    negated: bool

    @classmethod
    def of(cls, text: str) -> Sentence:
        return cls(
            text=text,
            terms=_meaningful(content_terms(text)),
            figures=figures(text),
            identifiers=tuple(dict.fromkeys(identifiers(text))),
            negated=is_negated(text),
        )


@dataclass(frozen=True)
class Verdict:
    """How well one text supports one sentence; ``why`` is ``None`` when it does."""

    share: float
    why: str | None

    @property
    def supported(self) -> bool:
        return self.why is None


def judge(
    sentence: Sentence | str,
    evidence: Evidence,
    *,
    threshold: float = SUPPORT_THRESHOLD,
    negation: bool = True,
) -> Verdict:
    """Whether ``evidence`` supports ``sentence`` (see the module docstring); with
    ``negation`` false, a negation is not compared (a rule of its own decides)."""
    claim = Sentence.of(sentence) if isinstance(sentence, str) else sentence
    wanted = claim.terms
    if not wanted:
        return Verdict(1.0, None)  # nothing to support ("That is all.")
    share = len(wanted & evidence.terms) / len(wanted)
    if share < threshold:
        return Verdict(
            share, f"what it cites does not support it (support {share:.2f} < {threshold:g})"
        )
    missing = sorted(claim.figures - evidence.figures)
    if missing:
        return Verdict(share, f"{describe_figure(missing[0])} is not in what it cites")
    for identifier in claim.identifiers:
        if not evidence.holds(identifier):
            return Verdict(share, f"'{identifier}' is not in what it cites")
    if negation and _negation_differs(wanted, claim.negated, evidence):
        # A sentence cut short ("Maya wants the tone…") and copied as it stands says what
        # the text says as far as it goes; its negation may have been cut off.
        cut = claim.text.rstrip()
        if cut.endswith(("\u2026", "...")) and _flat(cut.rstrip(".\u2026 ")) in evidence.folded:
            return Verdict(share, None)
        said = "says 'not' where" if claim.negated else "leaves out the 'not' of"
        return Verdict(share, f"it {said} what it cites")
    return Verdict(share, None)


def _meaningful(terms: Iterable[str]) -> frozenset[str]:
    """The terms that are content of their own: a single letter ("e.g.", an initial, the
    "t" of "isn't") is none."""
    return frozenset(term for term in terms if len(term) > 1 or term.isdigit())


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def _negation_differs(wanted: frozenset[str], negated: bool, evidence: Evidence) -> bool:
    """Whether every sentence of the text that shares the most terms with the claim's
    sentence differs from it in holding a negation.

    A claim's sentence may join several of the text's: a reply's list quoted on one line
    ("…isn't taking the first month, the monies are: rent £405.04 Deposit: £1,015 If he
    paid a holding deposit, deduct it") is one sentence to the claim and four to the
    note. Its negation is then one of theirs: a negated sentence of the text lying whole
    inside it (every term of it the claim's) is the 'not' it holds."""
    best = max((len(wanted & terms) for terms, _ in evidence.parts), default=0)
    if not best:
        return False
    if negated and any(
        neg and len(inside := _meaningful(terms)) >= _JOINED_TERMS and inside <= wanted
        for terms, neg in evidence.parts
    ):
        return False
    return all(neg != negated for terms, neg in evidence.parts if len(wanted & terms) == best)


_JOINED_TERMS = 2
"""The fewest terms a negated sentence of the text holds to stand for a joined claim's
'not': a bare "No." is in every claim."""


# ---------------------------------------------------------------------------- integrations

_NOT_BEFORE = frozenset({"not", "no", "never", "t", "isn", "aren", "wasn", "weren", "nor"})


def _states(sentence_words: Sequence[str]) -> set[bool]:
    """The connection states a sentence gives: ``{True}`` for "connected", ``{False}`` for
    "not connected" (a negation up to three words before it) or "disconnected"."""
    states: set[bool] = set()
    for index, word in enumerate(sentence_words):
        if word.startswith(("disconnect", "unconnect")):
            states.add(False)
        elif word.startswith("connect"):
            states.add(not _NOT_BEFORE.intersection(sentence_words[max(0, index - 3) : index]))
    return states


def _names(sentence_words: Sequence[str], toolkit: str) -> bool:
    name = words(toolkit)
    if not name:
        return False
    width = len(name)
    return any(
        list(sentence_words[i : i + width]) == name for i in range(len(sentence_words) - width + 1)
    )


def integration_verdict(
    sentence: Sentence | str, evidence: Evidence, integrations: Iterable[Integration]
) -> Verdict:
    """Whether the integration list (``evidence``, and its ``integrations``) supports
    ``sentence``: every content term must be in the list with its figures and identifiers,
    and a sentence saying toolkits are connected (or not) must name only toolkits listed
    so, in one state."""
    claim = Sentence.of(sentence) if isinstance(sentence, str) else sentence
    sentence_words = words(claim.text)
    states = _states(sentence_words)
    verdict = judge(claim, evidence, threshold=1.0, negation=not states)
    if verdict.why is not None or not states:
        return verdict
    if len(states) > 1:
        return Verdict(verdict.share, "it says connected and not connected in one sentence")
    state = states.pop()
    named = [i for i in integrations if _names(sentence_words, i.toolkit)]
    if not named:
        return Verdict(verdict.share, "it names no toolkit of the integration list")
    for integration in named:
        if integration.connected is not state:
            listed = "connected" if integration.connected else "not connected"
            return Verdict(
                verdict.share, f"the integration list gives {integration.toolkit} as {listed}"
            )
    return verdict
