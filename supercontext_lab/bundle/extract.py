"""Extraction: the one envelope in a reply, or the rule it breaks (SPEC §2.1)."""

from __future__ import annotations

from .grammar import (
    CLOSE_TAG,
    OPEN_TAG,
)
from .lookalikes import LOOKALIKE_TAG_RE

__all__ = ["bundle_rejection_reason", "extract_context_bundle", "locate_envelope"]


"""The smallest ``max_chars`` :func:`fit_bundle` accepts."""

"""The most :class:`Finding` records one reading keeps (the first ones, in envelope order);
how many more there were is :attr:`BundleReading.findings_left_out`."""

_ELLIPSIS = "…"

# --------------------------------------------------------------------------- extraction


def locate_envelope(output: str) -> tuple[int, int] | str:
    """Return the envelope's ``(start, end)`` span, or the one-line reason it is rejected.

    Extraction and the rejection reason share this one function so they cannot disagree.
    """
    opens = output.count(OPEN_TAG)
    closes = output.count(CLOSE_TAG)
    if opens == 0:
        return "no [context_bundle] opening tag" + _near_miss(output, closing=False, joiner=" (")
    if opens > 1:
        return f"{opens} opening tags; exactly one is allowed"
    if closes == 0:
        hint = _near_miss(output, closing=True, joiner="; ")
        return f"the opening tag has no closing [/context_bundle] tag (unterminated{hint or ')'}"
    if closes > 1:
        return f"{closes} closing tags; exactly one is allowed"
    start = output.index(OPEN_TAG)
    close = output.index(CLOSE_TAG)
    if close < start:
        return "the closing tag comes before the opening tag"
    inside = output[start + len(OPEN_TAG) : close]
    if not inside:
        return "the envelope is empty"
    if not inside.strip():
        return "the envelope is empty (whitespace only)"
    return start, close + len(CLOSE_TAG)


_HINT_WINDOW = 2048


def _near_miss(output: str, *, closing: bool, joiner: str) -> str:
    """Point at a tag written with the wrong case, spacing or brackets, the usual slip.

    Only the first and the last :data:`_HINT_WINDOW` characters are searched, where a
    model writes its tags: the hint is a courtesy, and a long reply full of brackets must
    not cost more to reject than it cost to read.
    """
    windows = [output]
    if len(output) > 2 * _HINT_WINDOW:
        windows = [output[:_HINT_WINDOW], output[-_HINT_WINDOW:]]
    for window in windows:
        if not any(letter in window for letter in "bB\uff42\uff22"):
            continue  # no "bundle" in any spelling: nothing to point at
        for match in LOOKALIKE_TAG_RE.finditer(window):
            if (match.group("slash") is not None) == closing:
                found = match.group(0)
                return f"{joiner}found {found!r}; tags are exact: lower case, no spaces)"
    return ""


def extract_context_bundle(output: str) -> str | None:
    """Return the single ``[context_bundle] … [/context_bundle]`` envelope in ``output``.

    The envelope runs from the start of the opening tag to the end of the closing tag and
    is returned byte for byte; prose, code fences and whitespace outside it are dropped.
    ``None`` unless there is exactly one opening and one closing tag, in that order, with
    something other than whitespace between them.
    """
    span = locate_envelope(output)
    if isinstance(span, str):
        return None
    return output[span[0] : span[1]]


def bundle_rejection_reason(output: str) -> str | None:
    """Say in one line why :func:`extract_context_bundle` rejects ``output``.

    ``None`` exactly when extraction succeeds.
    """
    span = locate_envelope(output)
    return span if isinstance(span, str) else None
