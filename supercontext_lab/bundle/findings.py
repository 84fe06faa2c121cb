"""What a reading of an envelope skipped or read as unknown, and the reading itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .records import ContextBundle

__all__ = ["MAX_FINDINGS", "BundleReading", "Finding", "FindingKind"]

MAX_FINDINGS = 100
"""The most :class:`Finding` records one reading keeps (the first ones, in envelope order);
how many more there were is :attr:`BundleReading.findings_left_out`."""

# ------------------------------------------------------------------------ the findings

FindingKind = Literal[
    "ignored_line",
    "not_boolean",
    "repeated_field",
    "missing_field",
    "empty_summary",
    "unnamed_item",
]
"""What a :class:`Finding` is about:

``ignored_line``
    a non-blank line the parser reads as nothing: before the first field, after a
    one-line field, in a list before its first item, or under an item before its first
    sub-key (``text`` is the line, trimmed);
``not_boolean``
    ``has_enough_context`` (its first line) or an item's ``installed`` value is not
    ``true``/``false`` and is read as unknown (``text`` is the value);
``repeated_field``
    a one-line field appears again; only the first one counts;
``missing_field``
    ``has_enough_context``, ``proposed_goal`` or ``summary`` is not there;
``empty_summary``
    the summary is there but says nothing;
``unnamed_item``
    a list item has no name (or only quotes).
"""


@dataclass(frozen=True)
class Finding:
    """One thing the parser skipped or read as unknown in an accepted envelope.

    ``field`` is the top-level key it concerns or sits under (``None`` before the first
    field), ``item`` the name of the list item it sits in, ``line`` its line number in
    the envelope (the opening tag's line is 1; ``None`` for what is missing).
    """

    kind: FindingKind
    field: str | None
    text: str = ""
    item: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class BundleReading:
    """What :func:`read_context_bundle` read: the bundle and what it left unread."""

    bundle: ContextBundle
    findings: tuple[Finding, ...]
    """In envelope order; the missing fields last. At most :data:`MAX_FINDINGS` of those
    with a line."""
    findings_left_out: int = 0
    """How many findings with a line there were beyond :data:`MAX_FINDINGS`."""
