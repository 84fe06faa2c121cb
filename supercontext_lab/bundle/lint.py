"""Warnings about an envelope the harness accepts but reads less than it says.

The acceptance rule is SPEC §2.1 and stays as it is: any well-formed envelope is used.
Parsing is tolerant, so an envelope can be accepted while parts of it are silently read
as "unknown" or dropped — a ``has_enough_context: maybe``, a ``foo: bar`` line, a missing
summary. The parser's own walk records each of those as a
:class:`~supercontext_lab.bundle.Finding` (:func:`~supercontext_lab.bundle.read_context_bundle`);
:func:`bundle_warnings` only words them, in envelope order, so that
``supercontext-lab bundle check`` can report them (and ``--strict`` can refuse them).
"""

from __future__ import annotations

import re

from .._text import one_line
from . import Finding, read_context_bundle
from .grammar import HAS_ENOUGH_CONTEXT, LIST_KINDS, ONE_LINE_KEYS

__all__ = ["bundle_warnings", "describe_finding"]

# A line that looks like "key: value" (optionally as a list item), key a plain word.
_KEYISH_RE = re.compile(r"(?:[-*+•]\s*)?([A-Za-z_][\w-]*)\s*:")
# Envelope text is quoted shortened and with repr(), which also escapes the control
# characters a hostile envelope could send to the terminal of `bundle check`.
_SHOWN = 60


def _where(finding: Finding) -> str:
    if finding.field is None:
        return "before the first field"
    if finding.field in ONE_LINE_KEYS:
        return f"after {finding.field}"
    if finding.item is None:
        return f"in {finding.field}"
    return f"in {finding.field} item {finding.item!r}"


def describe_finding(finding: Finding) -> str:
    """One finding as a one-line warning."""
    if finding.kind == "ignored_line":
        where = _where(finding)
        key = _KEYISH_RE.match(finding.text)
        shown = one_line(finding.text, _SHOWN)
        if key is not None:
            return f"unknown key {key.group(1)!r} {where} is ignored: {shown!r}"
        return f"text {where} is ignored: {shown!r}"
    if finding.kind == "not_boolean":
        shown = repr(one_line(finding.text, _SHOWN)) if finding.text else "nothing"
        if finding.item is None:
            return f"{finding.field}: {shown} is not true or false; it is read as unknown"
        return (
            f"{finding.field} {finding.item!r}: installed {shown} is not true or false; "
            "it is read as unknown"
        )
    if finding.kind == "repeated_field":
        return f"{finding.field} appears again; only the first one counts"
    if finding.kind == "unnamed_item":
        kind = LIST_KINDS.get(finding.field or "", "item")
        return f"{finding.field}: an item has no {kind} name"
    if finding.kind == "empty_summary":
        return "summary is empty: the bundle gives the orchestrator no context"
    if finding.field in ONE_LINE_KEYS:
        read_as = "unknown" if finding.field == HAS_ENOUGH_CONTEXT else "none"
        return f"{finding.field} is missing; it is read as {read_as}"
    return "summary is missing: the bundle gives the orchestrator no context"


def bundle_warnings(output: str) -> list[str]:
    """What the parser would read as unknown, empty or not at all in ``output``'s envelope.

    An empty list for a clean envelope, and for output with no envelope (that is a
    rejection, see :func:`~supercontext_lab.bundle.bundle_rejection_reason`). Past
    :data:`~supercontext_lab.bundle.MAX_FINDINGS` warnings, one line says how many more
    there are.
    """
    reading = read_context_bundle(output)
    if reading is None:
        return []
    warnings = [describe_finding(finding) for finding in reading.findings]
    if reading.findings_left_out:
        lined = sum(1 for finding in reading.findings if finding.line is not None)
        warnings.insert(
            lined, f"… and {reading.findings_left_out} more like these, not listed one by one"
        )
    return warnings
