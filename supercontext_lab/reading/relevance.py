"""What a request asks about, and whether a bundle's facts cover it (SPEC §14).

One rule, used by every route (the offline scout, the extractive writer, the no-model
baselines and the grounding check), so that ``has_enough_context`` means the same thing
wherever a bundle comes from:

* The request's **key terms** are its content words (the one analyzer,
  :func:`~supercontext_lab.reading.words.keywords`, stemmed) less the words that say what to *do*
  rather than what it is about (:data:`TASK_WORDS`: "draft", "finish", "section",
  "remind", …). "Help me finish the sensitivity analysis section for the grant renewal"
  is about ``sensitiv``, ``analysi``, ``grant`` and ``renewal``.
* The facts **cover** a key term when one fact's text, or the note it cites, holds it, and
  the fact says something: a sentence, a row or a log line (a function word or a figure
  among three words at least), not a bare list of words, which holds the words of any
  request ("deadline, booking, venue, price") and answers none.
* ``has_enough_context`` is true only when the facts cover **more than half** of the key
  terms (one of one, two of two, two of three, three of four, three of five, …) and
  **every name** the request gives (a word written with a capital after its first word,
  or with a digit or an inner capital: "MySQL", "Auth0", "Aurora"). One shared word is
  never enough for a request that names two things: a bundle of boat permits does not
  answer a question about the grant's sensitivity analysis, and a note on Postgres does
  not answer one about MySQL.
* A request that asks for a date ("when …") or a figure ("how much …", "which version")
  is enough only when a fact on its topic holds one: a note saying an Enterprise
  subscription "may be required" does not say what it costs.
* The key terms left uncovered, and a date or figure asked for and not found, are what is
  **missing**, named in the bundle's ``Missing:`` line.

A request whose words are all task words or stop words ("Summarise this") has no key
terms; any supported fact is then enough.

A tool, skill or file is **recommended** only when the request points at it beyond one
shared word (:func:`name_fit`): at least two of the request's terms are in its name, tags
or description. "How do I book the boat for the October dives?" shares only "dive" with
a dive-log tidier, so the tidier is not recommended; "Tidy the dive log" shares "tidy",
"dive" and "log". One shared word is enough only for a skill that a note on the request's topic names
(:func:`named_in_notes`: "Run the grant-budget-check skill before sending it" in the note
on the budget a request to e-mail the budget is about): the note is the second sign.

The same module reads the request's **answer shape** (:class:`RequestTerms.shapes`): a
"when" question wants a date or time, "how many" a number, "who" a person, "where" a
place, "how do I" a procedure (a command or code). Passages
(:mod:`supercontext_lab.reading.passages`) prefer sentences of that shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .words import STOPWORDS, identifiers, keywords, stems, without_identifiers, words

__all__ = [
    "TASK_WORDS",
    "Coverage",
    "RequestTerms",
    "coverage",
    "name_fit",
    "named_in_notes",
    "names_in",
    "request_terms",
    "sentence_shapes",
]

TASK_WORDS = frozenset(
    """
    draft drafts drafting write writing written wrote rewrite finish finishing complete prepare preparing
    plan planning summarise summarize summary update review check send reply create start
    continue improve edit fix section sections paragraph paragraphs part parts remind
    reminder book booking put add list note notes document file files latest new current
    next last today tomorrow yesterday soon quick quickly short brief draft look
    many much far actually real really supposed still ever already exactly anyway again
    """.split()
)
"""Words that say what to do with a topic, or how the asker feels about it ("how many",
"what's the real deadline", "did we actually"), not what the topic is; they are never
key terms (stemmed before comparing)."""

_TASK_STEMS = frozenset(stems(TASK_WORDS))

# Which answer shape a question word asks for.
_SHAPE_CUES: dict[str, tuple[str, ...]] = {
    "date": ("date", "day", "deadline", "due", "schedule", "scheduled"),
    "number": (
        "many",
        "much",
        "cost",
        "costs",
        "price",
        "budget",
        "long",
        "number",
        "amount",
        "version",
        "size",
        "limit",
        "maximum",
        "minimum",
        "faster",
        "slower",
    ),
    "procedure": ("fix", "command", "configure", "install", "setup", "shorthand", "run"),
    "person": ("who", "whom", "whose"),
    "place": ("where",),
}

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_DAYS = (
    "monday tuesday wednesday thursday friday saturday sunday "
    "mon tue tues wed weds thu thur thurs fri sat sun"
)
_DATE_WORDS = frozenset([*_MONTHS, *_DAYS.split(), "today", "tomorrow", "yesterday", "noon"])
_NUMBER_WORDS = frozenset(
    """
    one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred thousand million billion dozen half twice
    """.split()
)
_PLACE_WORDS = frozenset("room building floor street office hall lab campus at in".split())
_PERSON_TITLES = frozenset("dr prof mr mrs ms mx".split())
_TIME_RE = re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)", re.I)
_ISO_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b")
# A number standing on its own ("63 bytes", "1.18 million", "76x", "v11.13"), not a digit
# inside a name ("Auth0", "B05S").
_NUMBER_RE = re.compile(r"(?<![^\W\d_])\d+(?:[.,]\d+)*(?![^\W\d_]{2})")
_TOKEN_RE = re.compile(r"[^\W_]+")
# What separates the items of a list of words written on one line or a line each.
_LIST_SPLIT_RE = re.compile(r"[,;|\n]")
_WHEN_RE = re.compile(
    r"(?:^|[.!?]\s+)when\b|\bwhen\s+(?:is|was|are|were|does|did|do|will|should|can)\b"
    r"|\bwhat\s+time\b",
    re.IGNORECASE,
)
# The answer shapes a bundle must hold when the request asks for them, and how the
# Missing line names them.
_SHAPE_WORDS = {"date": "date or time", "number": "figure"}
# A capitalised word after the sentence's first word: a name, a place, an organisation.
_INNER_CAPITAL_RE = re.compile(r"(?<=[\s(,;:])[A-Z][a-z]+")


@dataclass(frozen=True)
class RequestTerms:
    """What a request asks about (see the module docstring)."""

    terms: frozenset[str]
    """The stemmed content words of the request and its focus."""
    key: tuple[str, ...]
    """The key terms, in the order the request says them (task words left out)."""
    shapes: frozenset[str]
    """The answer shapes the request asks for: ``date``, ``number``, ``person``, ``place``,
    ``procedure``."""
    words: tuple[str, ...] = ()
    """The key terms as the request wrote them (for the ``Missing:`` line)."""
    names: tuple[str, ...] = ()
    """The key terms the request writes as names, which the facts must all cover."""


def request_terms(request: str, focus: str = "") -> RequestTerms:
    """The :class:`RequestTerms` of a request (and its focus, which counts as request)."""
    text = f"{request} {focus}".strip()
    written = _written_as_names(text)
    # An identifier of letters and digits ("B-12", "v5.0.2") is asked about whole: its parts are no
    # key terms unless the request says them apart too, or every "12" would answer it.
    coded = [
        ident
        for ident in identifiers(text)
        if any(ch.isdigit() for ch in ident) and any(ch.isalpha() for ch in ident)
    ]
    written.update(coded)
    apart = set(words(without_identifiers(text))) if coded else set()
    parts = {part for ident in coded for part in words(ident)} - apart
    # A two-letter name ("VS" Code, "UK") is too short to be a keyword but names a thing.
    content = [
        *(w for w in keywords(text) if w not in parts),
        *(w for w in written if len(w) == 2 and w not in STOPWORDS),
    ]
    terms = stems(content)
    key: dict[str, str] = {}
    for word in content:
        term = next(iter(stems([word])), "")
        if term and term not in _TASK_STEMS and term not in key:
            key[term] = word
    names = tuple(term for term, word in key.items() if word in written)
    said = set(words(text))
    asked = {shape for shape, cues in _SHAPE_CUES.items() if said.intersection(cues)}
    # "When is …" asks for a date; "… when I share the branch" does not.
    if _WHEN_RE.search(text):
        asked.add("date")
    # "How do I …" asks for a way to do something; "how many" and "how long" a number.
    if "how" in said and not said.intersection(("many", "much", "long", "often")):
        asked.add("procedure")
    return RequestTerms(frozenset(terms), tuple(key), frozenset(asked), tuple(key.values()), names)


def _written_as_names(text: str) -> set[str]:
    """The words (lower-cased) that ``text`` writes as names at least once: with a digit
    and a letter, an inner capital, or a capital where no sentence opens. One pass."""
    names: set[str] = set()
    opens = True
    last = 0
    for match in _TOKEN_RE.finditer(text):
        gap = text[last : match.start()]
        if any(mark in gap for mark in ".!?:\n"):
            opens = True
        word = match.group()
        if (
            (any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word))
            or any(ch.isupper() for ch in word[1:])
            or (word[:1].isupper() and not opens)
        ):
            names.add(word.lower())
        opens = False
        last = match.end()
    return names


def names_in(text: str) -> frozenset[str]:
    """The names ``text`` gives (lower-cased): the words it writes as names (a capital
    where no sentence opens, an inner capital, letters after letters and digits: "Ostro",
    "MySQL", "B05S") and its identifiers whole ("SV-Q-0932"), less days and months
    ("Weds", "Oct"), what opens with a digit (a time, an ordinal, a price: "7.30pm",
    "14th", "58pp") and words of fewer than three letters."""
    found = _written_as_names(text) | {
        ident.lower() for ident in identifiers(text) if any(ch.isalpha() for ch in ident)
    }
    return frozenset(
        name
        for name in found
        if len(name) >= 3
        and not name[0].isdigit()
        and name not in _DATE_WORDS
        and name not in STOPWORDS
    )


def sentence_shapes(text: str) -> frozenset[str]:
    """The answer shapes a sentence holds: a date or time, a number, a person, a place,
    a procedure (code, a command)."""
    said = words(text)
    found: set[str] = set()
    if _TIME_RE.search(text) or _ISO_DATE_RE.search(text) or _DATE_WORDS.intersection(said):
        found.add("date")
    if _NUMBER_RE.search(text) or _NUMBER_WORDS.intersection(said):
        found.add("number")
    inner = _INNER_CAPITAL_RE.findall(text)
    if _PERSON_TITLES.intersection(said) or any(name.lower() not in _DATE_WORDS for name in inner):
        found.add("person")
    if _PLACE_WORDS.intersection(said) and inner:
        found.add("place")
    if "`" in text or text.lstrip().startswith("$ "):
        found.add("procedure")
    return frozenset(found)


@dataclass(frozen=True)
class Coverage:
    """Which of a request's key terms a bundle's facts hold."""

    key: tuple[str, ...]
    covered: tuple[str, ...]
    missing_words: tuple[str, ...]
    """The uncovered key terms as the request wrote them."""

    names: tuple[str, ...] = ()
    shape_missing: str = ""
    """The answer shape the request asks for that no fact on its topic has (``date`` or
    ``number``), else ``""``."""

    @property
    def enough(self) -> bool:
        """More than half of the key terms covered, every name, and a fact of the answer
        shape asked for (any covered fact when there are no key terms)."""
        if not self.key:
            return True
        named = all(name in self.covered for name in self.names)
        return named and not self.shape_missing and 2 * len(self.covered) > len(self.key)

    def missing_line(self) -> str:
        """What the facts do not say, for the bundle's ``Missing:`` line."""
        parts = []
        if self.missing_words:
            parts.append("nothing found on " + ", ".join(self.missing_words))
        if self.shape_missing:
            parts.append(f"no {_SHAPE_WORDS[self.shape_missing]} on the topic was found")
        return "; ".join(parts)


def coverage(request: RequestTerms, facts: Iterable[str]) -> Coverage:
    """How far ``facts`` (each a fact's text with what it cites) cover ``request``."""
    found: set[str] = set()
    wanted = set(request.key)
    asked = request.shapes & set(_SHAPE_WORDS)
    shaped: set[str] = set()
    for fact in facts:
        said = words(fact)
        if not _says_something(fact, said):
            continue
        # Every word counts here, two-letter names too ("UK", "V1"): the key holds none of
        # the stop words.
        on_topic = stems([*said, *identifiers(fact)]) & wanted
        found |= on_topic
        if on_topic and asked - shaped:
            shaped |= sentence_shapes(fact) & asked
    covered = tuple(term for term in request.key if term in found)
    missing = tuple(
        word for term, word in zip(request.key, request.words, strict=True) if term not in found
    )
    lacking = sorted(asked - shaped)
    return Coverage(request.key, covered, missing, request.names, lacking[0] if lacking else "")


_LIST_SHARE = 0.8


def _says_something(fact: str, said: list[str]) -> bool:
    """Whether a fact of these words says something, as a sentence, a row or a log line
    does: three words at least, a function word ("is", "by", "the") or a figure among
    them, and not a bare list of words ("deadline, budget, the, venue, price": one or two
    words between each comma or line), which holds the words of any request and answers
    none."""
    if len(said) < 3 or not any(word in STOPWORDS or word[:1].isdigit() for word in said):
        return False
    pieces = [piece for piece in _LIST_SPLIT_RE.split(fact) if piece.strip()]
    short = sum(1 for piece in pieces if len(words(piece)) <= 2)
    return len(pieces) < 4 or short < _LIST_SHARE * len(pieces)


def name_fit(terms: Iterable[str], name: str, about: str = "", *, in_notes: bool = False) -> int:
    """How well a tool, skill or file fits a request whose terms are ``terms``: the
    number of them shared with its ``name`` (with tags) and ``about`` (a description),
    or 0 when that is a single one, unless the user's own notes name it (``in_notes``:
    "Run the grant-budget-check skill before sending it") (see the module docstring)."""
    wanted = set(terms)
    shared = (stems(keywords(name)) | stems(keywords(about))) & wanted
    needed = 1 if in_notes else 2
    return len(shared) if len(shared) >= needed else 0


def named_in_notes(name: str, terms: Iterable[str], notes: Iterable[str]) -> bool:
    """Whether one of ``notes`` names ``name`` (a skill id, as written) and, apart from
    that name, shares at least two of ``terms`` with the request: the user's notes on
    this topic say to use it."""
    if len(name) <= 3:
        return False
    wanted = set(terms)
    lowered = name.lower()
    for note in notes:
        text = note.lower()
        if lowered in text and len(stems(keywords(text.replace(lowered, " "))) & wanted) >= 2:
            return True
    return False
