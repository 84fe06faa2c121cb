"""Words: the one stemmer and the one stop-word list of the package.

The memory index analyses its documents and queries with :func:`stem`, the skill registry
search matches with it, and the offline scout picks its keywords and scores overlaps with
it, so all three agree about which words match (``figures`` finds ``figure`` everywhere).

Deterministic and dependency-free on purpose: the offline models must behave the same on
every machine so notebooks and tests can compare their output exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["STOPWORDS", "keywords", "overlap", "stem", "stems", "tokens"]

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done down during
    each few for from further get got had has have having he her here hers herself him
    himself his how i if in into is it its itself just let like make me more most my
    myself need needs no nor not now of off on once only or other our ours ourselves out
    over own please same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very want
    was we were what when where which while who whom why will with would you your yours
    yourself yourselves help us know tell give show find thing things something anything
    ok okay hi hello hey thanks thank yes lot really let's i'm i've it's that's what's
    per il lo la le gli un una uno di da del della che e è in con su mi ti ci puoi
    one two three four five week weeks day days month months year years
    """.split()
)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits; inner hyphens and apostrophes kept)."""
    return [match.group(0).lower() for match in _WORD.finditer(text)]


def stem(word: str) -> str:
    """A light English stemmer, enough to match figure/figures/figured,
    deadline/deadlines, format/formatted/formatting and decide/decided."""
    word = word.lower()
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ations", "ation", "ings", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            # formatt(ed) -> format, but keep "ll"/"ss" (install, process).
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def keywords(text: str) -> list[str]:
    """Content words of ``text`` in order of first appearance, stopwords dropped."""
    seen: set[str] = set()
    out: list[str] = []
    for token in tokens(text):
        if token in STOPWORDS or (len(token) < 3 and not token.isdigit()):
            continue
        if token not in seen:
            seen.add(token)
            out.append(token)
    return out


def stems(words: Iterable[str]) -> set[str]:
    """The stems of ``words``."""
    return {stem(word) for word in words}


def overlap(query_stems: set[str], text: str) -> int:
    """How many of ``query_stems`` occur in ``text`` (as stems of its content words)."""
    return len(query_stems & stems(keywords(text)))
