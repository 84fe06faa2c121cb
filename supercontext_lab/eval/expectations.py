"""What a case expects: the ``expect`` object of a dataset line (:mod:`.dataset`).

A first message and each follow-up carry one; every key is optional, and a key left out
is not scored. Lists hold non-empty strings (trimmed), ``sources`` each written as a
bundle cites a document (SPEC §2), the booleans are JSON's ``true`` and ``false``. Every
problem is handed to the caller's ``error``, which names the file, the line and where in
it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._json import json_type_name
from .._text import one_line, visible
from ..bundle.records import find_attributions
from ..errors import DatasetError

__all__ = ["EXPECT_KEYS", "Expectations", "read_expectations"]

EXPECT_KEYS = (
    "skills",
    "tools",
    "has_goal",
    "has_enough_context",
    "mentions",
    "must_not_mention",
    "sources",
)
_LIST_KEYS = ("skills", "tools", "mentions", "must_not_mention", "sources")
_BOOL_KEYS = ("has_goal", "has_enough_context")


@dataclass(frozen=True)
class Expectations:
    """What a case expects of the bundle; ``None`` means "not scored for this case"."""

    skills: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    has_goal: bool | None = None
    has_enough_context: bool | None = None
    mentions: tuple[str, ...] | None = None
    must_not_mention: tuple[str, ...] | None = None
    sources: tuple[str, ...] | None = None
    """The documents that answer the case, as a bundle cites them (``memory: ns/key``)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``expect`` object as it would be written in the dataset (set keys only)."""
        out: dict[str, Any] = {}
        for key in EXPECT_KEYS:
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out


def _check_sources(error: Callable[[str], DatasetError], sources: tuple[str, ...]) -> None:
    """Each expected source must be written as a bundle cites one (SPEC §2), or it could
    never match a bullet's attribution."""
    for item in sources:
        found = find_attributions(f"({item})")
        if len(found) != 1 or found[0].end != len(item) + 2:
            shown = visible(one_line(item, 60))
            raise error(
                f'"expect.sources" holds "{shown}", which is no citation; write it as a '
                'bundle cites, e.g. "memory: global/decision-kernel" or "profile".'
            )


def read_expectations(raw: object, error: Callable[[str], DatasetError]) -> Expectations:
    """The ``expect`` object ``raw`` (decoded JSON) as :class:`Expectations`; ``error``
    makes the exception raised for a problem, from its words."""
    if not isinstance(raw, dict):
        raise error(f'"expect" must be an object, not {json_type_name(raw)}.')
    unknown = sorted(set(raw) - set(EXPECT_KEYS))
    if unknown:
        raise error(
            f'unknown key "expect.{unknown[0]}"; expectations are {", ".join(EXPECT_KEYS)}.'
        )
    values: dict[str, Any] = {}
    for key in _LIST_KEYS:
        if key not in raw:
            continue
        items = raw[key]
        if not isinstance(items, list):
            raise error(f'"expect.{key}" must be an array of strings, not {json_type_name(items)}.')
        # Name the item too: in a list of twenty mentions, "item 7" finds the typo.
        for number, item in enumerate(items, start=1):
            if not isinstance(item, str):
                raise error(
                    f'"expect.{key}" must be an array of strings; item {number} is '
                    f"{json_type_name(item)}."
                )
            if not item.strip():
                raise error(f'"expect.{key}" item {number} is an empty string; remove it.')
        cleaned = tuple(item.strip() for item in items)
        if key == "sources":
            _check_sources(error, cleaned)
        values[key] = cleaned
    for key in _BOOL_KEYS:
        if key not in raw:
            continue
        if not isinstance(raw[key], bool):
            raise error(f'"expect.{key}" must be true or false, not {json_type_name(raw[key])}.')
        values[key] = raw[key]
    return Expectations(**values)
