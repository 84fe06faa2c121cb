"""Warnings about an envelope the harness accepts but reads less than it says.

The acceptance rule is SPEC §2.1 and stays as it is: any well-formed envelope is used.
Parsing is tolerant, so an envelope can be accepted while parts of it are silently read
as "unknown" or dropped — a ``has_enough_context: maybe``, a ``foo: bar`` line, a missing
summary. :func:`bundle_warnings` names each of those, in envelope order, so that
``supercontext-lab bundle check`` can report them (and ``--strict`` can refuse them).
"""

from __future__ import annotations

import re

from .bundle import (
    _HEC_KEY,
    _ITEM_RE,
    _LIST_KINDS,
    _SUBKEY_RE,
    _SUBKEYS,
    _SUMMARY_KEY,
    _TOP_KEY_RE,
    TRUNCATION_MARKER,
    _body_lines,
    _inside,
    _parse_bool,
    _unquote,
    extract_context_bundle,
)

__all__ = ["bundle_warnings"]

# A line that looks like "key: value" (optionally as a list item), key a plain word.
_KEYISH_RE = re.compile(r"(?:[-*+•]\s*)?([A-Za-z_][\w-]*)\s*:")
_SHOWN = 60
_ONE_LINE_KEYS = (_HEC_KEY, "proposed_goal")


def _quoted(line: str) -> str:
    text = line.strip()
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…")


def _ignored(line: str, where: str) -> str:
    key = _KEYISH_RE.match(line.strip())
    if key is not None:
        return f"unknown key {key.group(1)!r} {where} is ignored: {_quoted(line)}"
    return f"text {where} is ignored: {_quoted(line)}"


def bundle_warnings(output: str) -> list[str]:
    """What the parser would read as unknown, empty or not at all in ``output``'s envelope.

    An empty list for a clean envelope, and for output with no envelope (that is a
    rejection, see :func:`~supercontext_lab.bundle.bundle_rejection_reason`).
    """
    envelope = extract_context_bundle(output)
    if envelope is None:
        return []
    warnings: list[str] = []
    seen: set[str] = set()
    section: str | None = None
    item: tuple[str, str] | None = None  # (kind, name) of the list item being read
    item_has_subkey = False
    summary_text: list[str] = []
    for raw in _body_lines(_inside(envelope)):
        line = raw.strip()
        if not line or line == TRUNCATION_MARKER:
            continue
        match = _TOP_KEY_RE.match(line)
        if match:
            section, item = match.group(1).lower(), None
            rest = line[match.end() :].strip()
            if section in seen and section in _ONE_LINE_KEYS:
                warnings.append(f"{section} appears again; only the first one counts")
            seen.add(section)
            if section == _HEC_KEY and _parse_bool(rest) is None:
                shown = repr(rest) if rest else "nothing"
                warnings.append(
                    f"has_enough_context: {shown} is not true or false; it is read as unknown"
                )
            elif section == _SUMMARY_KEY:
                summary_text.append(rest)
            elif section in _LIST_KINDS and rest not in ("", "[]"):
                item, item_has_subkey = _list_item(rest, section, item, warnings)
            continue
        if section is None:
            warnings.append(_ignored(line, "before the first field"))
        elif section == _SUMMARY_KEY:
            summary_text.append(line)
        elif section in _LIST_KINDS:
            kind = _LIST_KINDS[section]
            item_match = _ITEM_RE.match(line)
            if item_match and item_match.group(1).lower() == kind:
                item, item_has_subkey = _list_item(line, section, item, warnings)
                continue
            sub = _SUBKEY_RE.match(line)
            if item is not None and sub and sub.group(1).lower() in _SUBKEYS[kind]:
                item_has_subkey = True
                if sub.group(1).lower() == "installed":
                    value = line[sub.end() :].strip()
                    if _parse_bool(value) is None:
                        warnings.append(
                            f"recommended_skills {item[1]!r}: installed {value!r} is not true "
                            "or false; it is read as unknown"
                        )
            elif item is None or not item_has_subkey:
                where = f"in {section}" if item is None else f"in {section} item {item[1]!r}"
                warnings.append(_ignored(line, where))
            # Otherwise a continuation line of the item's last sub-key: kept.
        else:
            # After a one-line field (has_enough_context, proposed_goal).
            warnings.append(_ignored(line, f"after {section}"))
    for key in _ONE_LINE_KEYS:
        if key not in seen:
            read_as = "unknown" if key == _HEC_KEY else "none"
            warnings.append(f"{key} is missing; it is read as {read_as}")
    if _SUMMARY_KEY not in seen:
        warnings.append("summary is missing: the bundle gives the orchestrator no context")
    elif not "".join(summary_text).strip():
        warnings.append("summary is empty: the bundle gives the orchestrator no context")
    return warnings


def _list_item(
    line: str, section: str, previous: tuple[str, str] | None, warnings: list[str]
) -> tuple[tuple[str, str] | None, bool]:
    """Start a list item from its ``tool:``/``skill:`` line; anything else is ignored."""
    kind = _LIST_KINDS[section]
    match = _ITEM_RE.match(line)
    if not match or match.group(1).lower() != kind:
        warnings.append(_ignored(line, f"in {section}"))
        return previous, True
    # Read as the parser reads it, so a name that is only quotes counts as missing.
    name = _unquote(line[match.end() :])
    if not name:
        warnings.append(f"{section}: an item has no {kind} name")
    return (kind, name), False
