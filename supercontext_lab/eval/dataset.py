"""Evaluation datasets: JSONL files, one case a line.

A line is a JSON object::

    {"id": "kernel-decision", "message": "What did we decide about the dispersal kernel?",
     "focus": "grant Section 3.2", "workspace": "../my-workspace", "structure": "prose",
     "cluster": "kernel-thread",
     "expect": {"skills": ["lit-review-digest"], "tools": ["delegate_gmail"],
                "has_goal": false, "has_enough_context": true,
                "mentions": ["2Dt"], "must_not_mention": ["sourdough"],
                "sources": ["memory: global/decision-kernel"]},
     "follow_ups": [{"message": "Who decided it with me?", "expect": {"mentions": ["Amara"]}},
                    {"message": "When is the renewal due?", "topic_change": true,
                     "expect": {"mentions": ["2026-12-15"], "must_not_mention": ["2Dt"]}}]}

``id`` and ``message`` are required; everything else is optional, and an expectation that
is absent is simply not scored. ``follow_ups`` are the thread's later messages (at most
:data:`MAX_FOLLOW_UPS`), sent one after another in the same thread by an end-to-end
evaluation and scored on their replies with their own ``expect``; ``topic_change`` marks a
message on another topic than the one before it, where context looked up for an earlier
message is stale. An evaluation of bundles alone scores the first message only. ``structure`` says how the text that answers the case is
laid out (one of :data:`STRUCTURES`: a table, an email thread, a chat, a log, a list, prose
or code), so results can be broken down by it; it is not scored. ``sources`` names the
documents that answer the case as a bundle cites them (``memory: <namespace>/<key>``,
``transcript: <conversation id>``, ``memory``, ``profile``): a bullet citing one of them
addresses the request (bullet precision) even where it quotes another sentence of it.
``cluster`` names a group of cases that are not independent of each other (follow-ups of
one conversation, say, each a case of its own); without it a case's cluster is its
workspace (:func:`~.clusters.case_clusters`), and the statistics cluster their standard
errors by it. A relative ``workspace``
is resolved against the folder of the dataset file; no ``workspace`` means the
evaluation's default (the demo workspace unless another is given). Blank lines are
skipped. Every problem raises :class:`~supercontext_lab.errors.DatasetError` naming the
file, the line and the field (and which item of a list); the README's "Dataset format"
documents every key.

A dataset is somebody's file too, and an evaluation walks and indexes each workspace it
names, so a line may name only a folder below the dataset's own folder, the shipped demo,
or a folder the caller allows (``allowed_workspaces``: on the command line, the
``--workspace`` options); ``"/"`` or a home folder named by a downloaded dataset is
refused. The file must be a regular file of at most :data:`MAX_DATASET_BYTES`, a line at
most :data:`MAX_LINE_CHARS` characters; lone surrogates (``"\\ud800"`` in JSON) read as
U+FFFD.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._bounded import json_loads
from .._confine import read_limited
from .._json import json_type_name
from .._text import one_line, visible, without_surrogates
from ..bundle.records import find_attributions
from ..errors import DatasetError, PathRefusedError, WorkspaceError
from .dataset_lines import Line as _Line
from .dataset_lines import optional_text as _optional_text
from .dataset_lines import required_text as _required_text

__all__ = [
    "CASE_KEYS",
    "EXPECT_KEYS",
    "FOLLOW_UP_KEYS",
    "MAX_DATASET_BYTES",
    "MAX_FOLLOW_UPS",
    "MAX_LINE_CHARS",
    "STRUCTURES",
    "EvalCase",
    "Expectations",
    "FollowUp",
    "load_dataset",
    "parse_dataset",
]

MAX_DATASET_BYTES = 64 << 20
"""Largest dataset file read (the shipped one is 20 kB)."""
MAX_LINE_CHARS = 1_000_000
"""Longest line (one case) read."""

CASE_KEYS = ("id", "message", "focus", "workspace", "structure", "cluster", "expect", "follow_ups")
FOLLOW_UP_KEYS = ("message", "expect", "topic_change")
MAX_FOLLOW_UPS = 8
"""Later messages a case may hold."""
STRUCTURES = ("table", "email", "chat", "log", "list", "prose", "code")
"""The values ``structure`` may take: how the text that answers a case is laid out."""
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


@dataclass(frozen=True)
class FollowUp:
    """A later message of a case's thread and what its reply should hold."""

    message: str
    expect: Expectations = field(default_factory=Expectations)
    topic_change: bool = False
    """The message is on another topic than the one before it."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "expect": self.expect.to_dict()}
        return {**out, "topic_change": True} if self.topic_change else out


@dataclass(frozen=True)
class EvalCase:
    """One evaluation case: a first message, an optional focus and workspace, expectations,
    and the thread's later messages (``follow_ups``)."""

    id: str
    message: str
    focus: str | None = None
    workspace: Path | None = None
    expect: Expectations = field(default_factory=Expectations)
    line: int = 0
    structure: str | None = None
    """How the answering text is laid out (one of :data:`STRUCTURES`), or ``None``."""
    cluster: str | None = None
    """The group of cases this one is not independent of (``None``: its workspace's)."""
    follow_ups: tuple[FollowUp, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The case as a dataset line (the workspace as an absolute path)."""
        out: dict[str, Any] = {"id": self.id, "message": self.message}
        if self.focus is not None:
            out["focus"] = self.focus
        if self.workspace is not None:
            out["workspace"] = str(self.workspace)
        if self.structure is not None:
            out["structure"] = self.structure
        if self.cluster is not None:
            out["cluster"] = self.cluster
        out["expect"] = self.expect.to_dict()
        if self.follow_ups:
            out["follow_ups"] = [follow_up.to_dict() for follow_up in self.follow_ups]
        return out


def _structure(where: _Line, data: Mapping[str, Any]) -> str | None:
    value = data.get("structure")
    if value is None:
        return None
    if not isinstance(value, str):
        raise where.error(
            f'"structure" must be a string or null, not {json_type_name(value)}; '
            f"use one of {', '.join(STRUCTURES)}."
        )
    if value not in STRUCTURES:
        shown = visible(one_line(value, 40))
        raise where.error(f'unknown structure "{shown}"; use one of {", ".join(STRUCTURES)}.')
    return value


def _check_sources(where: _Line, sources: tuple[str, ...]) -> None:
    """Each expected source must be written as a bundle cites one (SPEC §2), or it could
    never match a bullet's attribution."""
    for item in sources:
        found = find_attributions(f"({item})")
        if len(found) != 1 or found[0].end != len(item) + 2:
            shown = visible(one_line(item, 60))
            raise where.error(
                f'"expect.sources" holds "{shown}", which is no citation; write it as a '
                'bundle cites, e.g. "memory: global/decision-kernel" or "profile".'
            )


def _expectations(where: _Line, raw: object, at: str = "") -> Expectations:
    """The ``expect`` object; ``at`` names where it is (a follow-up's) in every error."""
    if at:
        where = _Line(where.source, where.number, at)
    if not isinstance(raw, dict):
        raise where.error(f'"expect" must be an object, not {json_type_name(raw)}.')
    unknown = sorted(set(raw) - set(EXPECT_KEYS))
    if unknown:
        raise where.error(
            f'unknown key "expect.{unknown[0]}"; expectations are {", ".join(EXPECT_KEYS)}.'
        )
    values: dict[str, Any] = {}
    for key in _LIST_KEYS:
        if key not in raw:
            continue
        items = raw[key]
        if not isinstance(items, list):
            raise where.error(
                f'"expect.{key}" must be an array of strings, not {json_type_name(items)}.'
            )
        # Name the item too: in a list of twenty mentions, "item 7" finds the typo.
        for number, item in enumerate(items, start=1):
            if not isinstance(item, str):
                raise where.error(
                    f'"expect.{key}" must be an array of strings; item {number} is '
                    f"{json_type_name(item)}."
                )
            if not item.strip():
                raise where.error(f'"expect.{key}" item {number} is an empty string; remove it.')
        cleaned = tuple(item.strip() for item in items)
        if key == "sources":
            _check_sources(where, cleaned)
        values[key] = cleaned
    for key in _BOOL_KEYS:
        if key not in raw:
            continue
        if not isinstance(raw[key], bool):
            raise where.error(
                f'"expect.{key}" must be true or false, not {json_type_name(raw[key])}.'
            )
        values[key] = raw[key]
    return Expectations(**values)


def _follow_ups(where: _Line, raw: object) -> tuple[FollowUp, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise where.error(f'"follow_ups" must be an array of objects, not {json_type_name(raw)}.')
    if len(raw) > MAX_FOLLOW_UPS:
        raise where.error(
            f'"follow_ups" holds {len(raw)} messages; a case has at most {MAX_FOLLOW_UPS}.'
        )
    out = []
    for number, item in enumerate(raw, start=1):
        at = f"follow_ups item {number}: "
        if not isinstance(item, dict):
            raise where.error(f"{at}must be an object, not {json_type_name(item)}.")
        unknown = sorted(set(item) - set(FOLLOW_UP_KEYS))
        if unknown:
            raise where.error(
                f'{at}unknown key "{unknown[0]}"; a follow-up has {", ".join(FOLLOW_UP_KEYS)}.'
            )
        message = item.get("message")
        if not isinstance(message, str) or not message.strip():
            raise where.error(f'{at}"message" must be a non-empty string.')
        change = item.get("topic_change", False)
        if not isinstance(change, bool):
            raise where.error(
                f'{at}"topic_change" must be true or false, not {json_type_name(change)}.'
            )
        out.append(FollowUp(message, _expectations(where, item.get("expect", {}), at), change))
    return tuple(out)


class _Workspaces:
    """Which folders the lines of one dataset may name as their workspace."""

    def __init__(self, base: Path | None, allowed: Iterable[str | os.PathLike[str]]) -> None:
        self.base = base
        self.roots = [Path(folder).expanduser().resolve() for folder in allowed]
        if base is not None:
            self.roots.append(base.resolve())
        self._demo: Path | None = None

    def allows(self, folder: Path) -> bool:
        if any(folder.is_relative_to(root) for root in self.roots):
            return True
        if self._demo is None:  # found only when needed: finding it may copy it
            from ..sources.demo import demo_workspace_path

            try:
                self._demo = demo_workspace_path().resolve()
            except WorkspaceError:
                return False
        return folder == self._demo

    def describe(self) -> str:
        own = f"below the dataset's folder ({self.base}), " if self.base is not None else ""
        return f"a dataset may name only folders {own}the shipped demo or a --workspace given"


def _workspace(where: _Line, value: str | None, workspaces: _Workspaces) -> Path | None:
    if value is None:
        return None
    if not value.strip():
        raise where.error('"workspace" is empty; give a folder or leave the key out.')
    path = Path(value).expanduser()
    if not path.is_absolute() and workspaces.base is not None:
        path = workspaces.base / path
    if not path.is_dir():
        raise where.error(f'"workspace": the folder "{path}" does not exist; fix the path.')
    folder = path.resolve()
    if not workspaces.allows(folder):
        raise where.error(f'"workspace": "{folder}" is refused: {workspaces.describe()}.')
    return folder


def _scrubbed(value: Any) -> Any:
    """``value`` (decoded JSON) with lone surrogates in its strings read as U+FFFD."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, list):
        return [_scrubbed(item) for item in value]
    if isinstance(value, dict):
        return {without_surrogates(k): _scrubbed(v) for k, v in value.items()}
    return value


def _case(where: _Line, text: str, workspaces: _Workspaces) -> EvalCase:
    if len(text) > MAX_LINE_CHARS:
        raise where.error(
            f"the line is {len(text):,} characters long; a case has at most {MAX_LINE_CHARS:,}."
        )
    try:
        data = _scrubbed(json_loads(text))
    except ValueError as exc:
        raise where.error(f"invalid JSON ({exc}); write one JSON object per line.") from exc
    if not isinstance(data, dict):
        raise where.error(f"a case must be a JSON object, not {json_type_name(data)}.")
    unknown = sorted(set(data) - set(CASE_KEYS))
    if unknown:
        raise where.error(f'unknown key "{unknown[0]}"; a case has {", ".join(CASE_KEYS)}.')
    case_id = _required_text(where, data, "id")
    message = _required_text(where, data, "message")
    focus = _optional_text(where, data, "focus")
    workspace = _workspace(where, _optional_text(where, data, "workspace"), workspaces)
    structure = _structure(where, data)
    cluster = _optional_text(where, data, "cluster")
    if cluster is not None and not cluster.strip():
        raise where.error('"cluster" is empty; name the group of cases or leave the key out.')
    expect = _expectations(where, data.get("expect", {}))
    follow_ups = _follow_ups(where, data.get("follow_ups"))
    return EvalCase(
        id=case_id.strip(),
        message=message,
        focus=focus if focus and focus.strip() else None,
        workspace=workspace,
        expect=expect,
        line=where.number,
        structure=structure,
        cluster=None if cluster is None else cluster.strip(),
        follow_ups=follow_ups,
    )


def parse_dataset(
    text: str,
    *,
    source: str = "<text>",
    base: Path | None = None,
    allowed_workspaces: Iterable[str | os.PathLike[str]] = (),
) -> list[EvalCase]:
    """Parse JSONL ``text`` into cases; ``base`` (the dataset's folder) resolves relative
    workspaces.

    A case's workspace must lie below ``base``, below one of ``allowed_workspaces``, or be
    the shipped demo. Raises :class:`DatasetError` naming ``source`` and the line for bad
    JSON, a missing or empty ``id``/``message``, duplicate ids, unknown keys, wrong types,
    a line that is too long and a workspace that is missing or refused.
    """
    workspaces = _Workspaces(base, allowed_workspaces)
    cases: list[EvalCase] = []
    first_line: dict[str, int] = {}
    # Split on newlines only: str.splitlines would also break at U+2028 and friends, which
    # JSON allows inside strings, and the line numbers would stop matching an editor's.
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        where = _Line(source, number)
        case = _case(where, raw, workspaces)
        if case.id in first_line:
            raise where.error(
                f'duplicate id "{case.id}" (first used on line {first_line[case.id]}); '
                "ids must be unique."
            )
        first_line[case.id] = number
        cases.append(case)
    if not cases:
        raise DatasetError(f"{source}: the dataset holds no cases; write one JSON object a line.")
    return cases


def load_dataset(
    path: str | os.PathLike[str], *, allowed_workspaces: Iterable[str | os.PathLike[str]] = ()
) -> list[EvalCase]:
    """Read a JSONL dataset file (see the module docstring for the format and for which
    workspaces its lines may name)."""
    file = Path(path).expanduser()
    if file.is_dir():
        raise DatasetError(f"{file}: is a folder; pass a .jsonl dataset file.")
    try:
        data, more = read_limited(file, MAX_DATASET_BYTES)
    except FileNotFoundError as exc:
        raise DatasetError(f"{file}: no such dataset file; check the path.") from exc
    except PathRefusedError as exc:
        # A FIFO would block the evaluation, /dev/zero would never end.
        raise DatasetError(f"{file}: cannot be read: {exc}; pass a .jsonl file.") from exc
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise DatasetError(f"{file}: cannot be read ({exc}).") from exc
    if more:
        raise DatasetError(f"{file}: is larger than {MAX_DATASET_BYTES >> 20} MiB; split it.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{file}: is not UTF-8 text ({exc}); save it as UTF-8.") from exc
    return parse_dataset(
        text,
        source=str(file),
        base=file.resolve().parent,
        allowed_workspaces=allowed_workspaces,
    )
