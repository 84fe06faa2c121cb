"""The context-bundle contract: extract, parse and bound the scout's envelope (SPEC §2).

The scout answers with exactly one ``[context_bundle] … [/context_bundle]`` envelope.
This package is the one place that knows its format, and this module is its face:

* :mod:`.grammar` the tags, keys and line patterns; :mod:`.lookalikes` the rule that
  keeps untrusted text from forging them; :mod:`.records` the :class:`ContextBundle` and
  its items; :mod:`.render` the one writer; :mod:`.extract`, :mod:`.parse` (with
  :mod:`.findings`) and :mod:`.fit` the readers below; :mod:`.lint` the findings worded
  as warnings.

* :func:`extract_context_bundle` keeps the envelope and drops everything around it, or
  returns ``None`` when the tags are missing, unterminated, reversed, duplicated or the
  envelope is empty; :func:`bundle_rejection_reason` names the rule that failed.
* :func:`read_context_bundle` walks the envelope once and returns the
  :class:`ContextBundle` together with the :class:`Finding` records of what the walk
  skipped or read as unknown; :func:`parse_context_bundle` keeps only the bundle and
  never raises on text; :func:`parse_has_enough_context` and :func:`parse_proposed_goal`
  read the two line fields the harness acts on.
* :func:`fit_bundle` bounds an envelope to a number of characters (code points) and keeps
  it well-formed.

The grammar is line oriented. A *key line* is a line whose trimmed text starts with a key
immediately followed by ``:``; the five top-level keys are matched case-insensitively
(ASCII only) at any indentation, and every other line belongs to the field being read.
A line holding only :data:`TRUNCATION_MARKER` is structure written by :func:`fit_bundle`,
never content.

Every function here takes time linear in the length of its input, whatever the text: the
walk finds structural lines with one regular expression per section and hands the text
between them on in one piece, so no character is looked at more than a few times.
"""

from .extract import bundle_rejection_reason, extract_context_bundle
from .findings import MAX_FINDINGS, BundleReading, Finding, FindingKind
from .fit import MIN_FIT_CHARS, fit_bundle
from .grammar import CLOSE_TAG, OPEN_TAG, TRUNCATION_MARKER
from .parse import (
    parse_context_bundle,
    parse_has_enough_context,
    parse_proposed_goal,
    read_context_bundle,
)
from .records import ContextBundle, RecommendedSkill, RecommendedToolCall

__all__ = [
    "CLOSE_TAG",
    "MAX_FINDINGS",
    "MIN_FIT_CHARS",
    "OPEN_TAG",
    "TRUNCATION_MARKER",
    "BundleReading",
    "ContextBundle",
    "Finding",
    "FindingKind",
    "RecommendedSkill",
    "RecommendedToolCall",
    "bundle_rejection_reason",
    "extract_context_bundle",
    "fit_bundle",
    "parse_context_bundle",
    "parse_has_enough_context",
    "parse_proposed_goal",
    "read_context_bundle",
]
