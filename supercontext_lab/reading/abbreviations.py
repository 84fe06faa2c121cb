"""Abbreviations: the words whose full stop may not end a sentence, and what it means.

The kinds of abbreviation (:class:`Kind`), each a rule about the word after it:

* ``TITLE`` (Dr. Prof. Mr. St.) comes before a name: never the end of a sentence.
* ``INLINE`` (e.g. i.e. cf. vs. approx.) always has more of its sentence after it.
* ``NUMBER`` (No. Fig. Eq. Sec. Vol. p. pp. ca. al. and the months and weekdays) is
  followed by a number, where it does not end the sentence ("No. 5", "Fig. S1", "et al.
  (2020)", "14 Mar. 2026"); before a word it does ("… said no. Then"). Case matters
  where a word has another meaning: "Sun." and "Mar." are dates, "sun." and "mar." are
  not; "p." is a page, "P." an initial.
* ``TIME`` (a.m. p.m.) ends a sentence before a capitalised word, except a weekday,
  a month or a time zone ("9 a.m. Tuesday", "10 a.m. CET"), or when the time opens the
  sentence ("At 5 a.m. Mr. Smith went…").
* ``INITIALISM`` (U.S. U.K. E.U.) is often followed by a name ("U.S. Government"), so it
  ends a sentence only before a common sentence opener ("… in the U.S. How about you?").
* ``ENDING`` (etc. Inc. Ltd. Co. Corp. Jr. Sr. Dept. Univ.) may close a sentence and is
  rarely followed by a name inside one, so a capitalised word after it starts a new
  sentence ("pens, paper, etc. The order goes out Monday." is two sentences; "etc. and"
  is one).
"""

from __future__ import annotations

import enum

__all__ = [
    "ABBREVIATIONS",
    "ADDRESS_STARTS",
    "CALENDAR",
    "LONGEST",
    "LOWER_OPENERS",
    "OPENER_WORDS",
    "TAKES_NUMBER",
    "Kind",
    "abbreviation_kind",
]


LONGEST = 12
"""No abbreviation or initialism is longer than this, so longer words skip the look-ups."""


class Kind(enum.Enum):
    """What an abbreviation's full stop means; see the module docstring."""

    TITLE = "title"
    INLINE = "inline"
    NUMBER = "number"
    TIME = "time"
    INITIALISM = "initialism"
    ENDING = "ending"


def _table(spec: dict[Kind, str]) -> dict[str, Kind]:
    return {word: kind for kind, words in spec.items() for word in words.split()}


_MONTHS_SHORT = "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
_DAYS_SHORT = "Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun"

#: Abbreviations spelt exactly so (without their final full stop). Titles, months and
#: weekdays are capitalised words; in lower case most of them are ordinary words.
_CASED = _table(
    {
        Kind.TITLE: "Dr Drs Prof Profs Mr Mrs Ms Mx Messrs Mme Mmes Mlle St Mt Ft Rev Fr "
        "Hon Gen Col Capt Lt Sgt Maj Adm Cmdr Gov Sen Rep Pres Supt Insp",
        Kind.NUMBER: f"No Nos Nr Fig Figs Eq Eqs Sec Secs Vol Vols Ch Chap Tab Art Ref Refs "
        f"Para Pt Suppl N° Nº Ext Tel {_MONTHS_SHORT} {_DAYS_SHORT}",
    }
)

#: Abbreviations spelt exactly so in lower case: "p." is a page, "P." an initial; "al."
#: is "et al.", "Al." a name.
_LOWER = _table(
    {
        Kind.NUMBER: "no nos nr n° nº fig figs eq eqs sec secs vol vols ch chap p pp para ca c "
        "al ref refs ext tel",
    }
)

#: Abbreviations in any case (keys in lower case, internal full stops kept).
_UNCASED = _table(
    {
        Kind.INLINE: "e.g eg i.e ie cf vs viz approx incl excl esp resp w.r.t a.k.a p.s ps",
        Kind.TIME: "a.m p.m",
        Kind.INITIALISM: "u.s u.k e.u u.s.a u.n n.y d.c",
        # sp. spp. ssp. var.: a species, several, a subspecies, a variety ("Laminaria sp.").
        Kind.ENDING: "etc co inc ltd corp llc plc bros dept univ jr sr esq ph.d phd ibid "
        "sp spp ssp subsp var",
    }
)

#: Every abbreviation the segmenter knows (without its final full stop) and its kind.
#: Capitalised and lower-case spellings are matched exactly; the keys of the words
#: matched in any case are in lower case.
ABBREVIATIONS: dict[str, Kind] = {**_UNCASED, **_LOWER, **_CASED}

# Words that often open a sentence and are rarely part of a name; after an initial or an
# initialism ("Plan B.", "the U.S.") only one of these shows a new sentence.
OPENER_WORDS = frozenset(
    """
    The A An This That These Those There Then It Its He She We They I You My Our Your His
    Her Their How What When Where Why Who Which Whose If But And Or So Also However Yet
    Still Now Here In On At For To From As After Before Although Though Because Since
    While Meanwhile Next Finally First Second Third Last Please Let Do Does Did Is Are Was
    Were Has Have Had Can Could Will Would Should Might Must Not All Some Each Every Both
    Most Many Any No Yes Only Just Even Thus Hence Therefore Otherwise Instead Again Today
    Tomorrow Yesterday One Another Such
    """.split()
)
# Words in lower case that open a new sentence in quickly typed notes and messages ("…
# that means? where did you grow up?"), after a full stop, "!" or "?" with no quote or
# bracket after it. Conjunctions and prepositions are left out: "etc. and", "co. at".
LOWER_OPENERS = frozenset(
    """
    i the it we they you he she this that these those there what how why where when who
    my our your his her their please let also then now so if
    """.split()
)
# A web address opens a sentence though it is written in lower case.
ADDRESS_STARTS = ("http://", "https://", "www.")
# After "9 a.m." these continue the sentence: weekdays, months (time zones are checked by
# shape: a short word in capitals).
CALENDAR = frozenset(
    """
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April
    May June July August September October November December
    """.split()
    + _MONTHS_SHORT.split()
    + _DAYS_SHORT.split()
)
# Words before a number that belongs to them, so "2." after one is not a new list item.
TAKES_NUMBER = frozenset(
    """
    section sec chapter ch aim step table tab figure fig page p pp part phase task no
    number room box site year week day version v vol volume eq equation
    """.split()
)


def abbreviation_kind(stem: str) -> Kind | None:
    """The kind of abbreviation ``stem`` (a word without its final full stop) is, if any."""
    if len(stem) > LONGEST:
        return None
    kind = ABBREVIATIONS.get(stem)
    if kind is None and not stem.islower():
        kind = _UNCASED.get(stem.lower())
    if kind is not None or "." not in stem:
        return kind
    parts = stem.split(".")
    if all(0 < len(part) <= 2 and part.isalpha() for part in parts):
        return Kind.INITIALISM
    return None
