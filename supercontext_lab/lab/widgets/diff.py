"""Field-by-field differences between two context bundles, for side-by-side comparisons.

Fields are compared in envelope order: ``has_enough_context``, ``proposed_goal``,
``summary`` (line by line), ``recommended_tool_calls`` and ``recommended_skills`` (item by
item). A missing bundle (``None``, a cold start) differs from any bundle in every field.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from ...bundle import ContextBundle, RecommendedSkill, RecommendedToolCall
from .html import badge, escape, render_attributions, strip_bullet

__all__ = ["FIELDS", "bundle_diff_html", "changed_fields", "text_diff_html"]

FIELDS: tuple[str, ...] = (
    "has_enough_context",
    "proposed_goal",
    "summary",
    "recommended_tool_calls",
    "recommended_skills",
)
"""The compared fields, named as in the envelope, in envelope order."""

# Dark text on a pale tint, so removed lines stay as readable as added ones; the coloured
# border and the +/− mark say which is which (no strike-through over the words).
_INS = (
    '<ins class="scl-ins" style="background:#e6ffec; color:#0f3d14; text-decoration:none; '
    'display:block; padding:0 4px; border-left:3px solid #2e7d32;">'
    '<span class="scl-mark" style="color:#1b5e20; font-weight:700;">+</span> '
)
_DEL = (
    '<del class="scl-del" style="background:#fff0f0; color:#2b1111; text-decoration:none; '
    'display:block; padding:0 4px; border-left:3px solid #c62828;">'
    '<span class="scl-mark" style="color:#b71c1c; font-weight:700;">−</span> '
)
_SAME = '<div class="scl-same" style="color:#616161; padding:0 4px;">'


def _summary_lines(bundle: ContextBundle | None) -> list[str]:
    if bundle is None:
        return []
    return [line.strip() for line in bundle.summary.splitlines() if line.strip()]


def _tool_text(call: RecommendedToolCall) -> str:
    parts = [call.tool]
    if call.args:
        parts.append(call.args)
    return " ".join(parts) + (f" — {call.why}" if call.why else "")


def _skill_text(skill: RecommendedSkill) -> str:
    state = {True: "installed", False: "not installed", None: "installed: unknown"}
    return f"{skill.skill} ({state[skill.installed]})" + (f" — {skill.why}" if skill.why else "")


def _items(bundle: ContextBundle | None, name: str) -> list[str]:
    if bundle is None:
        return []
    if name == "recommended_tool_calls":
        return [_tool_text(call) for call in bundle.recommended_tool_calls]
    return [_skill_text(skill) for skill in bundle.recommended_skills]


def _scalar(bundle: ContextBundle | None, name: str) -> str:
    if bundle is None:
        return "(no bundle)"
    if name == "has_enough_context":
        return {True: "true", False: "false", None: "unknown"}[bundle.has_enough_context]
    return bundle.proposed_goal if bundle.proposed_goal is not None else "none"


def _values(bundle: ContextBundle | None, name: str) -> list[str]:
    if name in ("has_enough_context", "proposed_goal"):
        return [_scalar(bundle, name)]
    if name == "summary":
        return _summary_lines(bundle)
    return _items(bundle, name)


def changed_fields(old: ContextBundle | None, new: ContextBundle | None) -> list[str]:
    """The names of the fields (see :data:`FIELDS`) whose values differ, in order.

    Two missing bundles differ nowhere; a missing and a present bundle differ everywhere.
    """
    if old is None and new is None:
        return []
    if old is None or new is None:
        return list(FIELDS)
    return [name for name in FIELDS if _values(old, name) != _values(new, name)]


def _line_diff(old: Sequence[str], new: Sequence[str], render: Callable[[str], str]) -> str:
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            out.extend(f"{_SAME}{render(line)}</div>" for line in old[a0:a1])
            continue
        out.extend(f"{_DEL}{render(line)}</del>" for line in old[a0:a1])
        out.extend(f"{_INS}{render(line)}</ins>" for line in new[b0:b1])
    return "".join(out) or '<div style="color:#757575; font-style:italic;">empty</div>'


def text_diff_html(old: str, new: str, *, title: str, context: int = 2) -> str:
    """HTML marking, line by line, what ``new`` added (``<ins>``) to or removed (``<del>``)
    from ``old`` (two versions of one file, ``title``), with ``context`` unchanged lines
    around each change; every line is escaped."""
    before, after = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    hunks = [
        _line_diff(before[group[0][1] : group[-1][2]], after[group[0][3] : group[-1][4]], escape)
        for group in matcher.get_grouped_opcodes(context)
    ]
    gap = '<div class="scl-same" style="color:#9e9e9e; padding:0 4px;">…</div>'
    return (
        f'<div class="scl-text-diff" data-file="{escape(title)}" style="margin:6px 0;">'
        f'<div style="font-weight:600; margin-bottom:2px;">{escape(title)}</div>'
        '<div style="font-family:monospace; font-size:12px; white-space:pre-wrap; '
        f'line-height:1.4;">{gap.join(hunks)}</div></div>'
    )


def _summary_line_html(line: str) -> str:
    # The +/− mark takes the place of the line's own bullet.
    return render_attributions(strip_bullet(line))


def _field_html(name: str, old: ContextBundle | None, new: ContextBundle | None) -> str:
    before, after = _values(old, name), _values(new, name)
    changed = before != after
    state = badge("changed", "warn") if changed else badge("unchanged", "neutral")
    if name in ("has_enough_context", "proposed_goal"):
        if changed:
            body = f"{_DEL}{escape(before[0])}</del>{_INS}{escape(after[0])}</ins>"
        else:
            body = f"{_SAME}{escape(before[0])}</div>"
    else:
        body = _line_diff(before, after, _summary_line_html if name == "summary" else escape)
    return (
        f'<div class="scl-diff-field" data-field="{name}" data-changed="{str(changed).lower()}" '
        'style="margin:6px 0; border-left:3px solid '
        f'{"#ef6c00" if changed else "#e0e0e0"}; padding-left:8px;">'
        f'<div style="font-weight:600; margin-bottom:2px;">{escape(name)} {state}</div>'
        f'<div style="font-size:12.5px; white-space:pre-wrap; line-height:1.5;">{body}</div></div>'
    )


def bundle_diff_html(old: ContextBundle | None, new: ContextBundle | None) -> str:
    """HTML marking, field by field, what ``new`` added (``<ins>``), removed (``<del>``) or
    left unchanged compared with ``old``; every string from either bundle is escaped."""
    changed = changed_fields(old, new)
    if old is None and new is None:
        headline = "Neither run produced a bundle."
    elif not changed:
        headline = "The bundles are identical field by field."
    else:
        headline = "Changed: " + ", ".join(changed)
    notes = []
    if old is None and new is not None:
        notes.append("the earlier run produced no bundle")
    if new is None and old is not None:
        notes.append("the new run produced no bundle")
    extra = f" ({'; '.join(notes)})" if notes else ""
    fields = "".join(_field_html(name, old, new) for name in FIELDS) if old or new else ""
    return (
        '<div class="scl-diff" style="font-family: var(--jp-ui-font-family, sans-serif); '
        'font-size:13px;">'
        f'<div style="font-weight:700; margin-bottom:4px;">{escape(headline + extra)}</div>'
        f"{fields}</div>"
    )
