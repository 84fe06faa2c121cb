"""What the MCP server answers, with no MCP in it: the pre-flight, recall and the notes.

:class:`ContextService` is bound to one workspace folder. Each request reads it as it is
now (a note written since the last request is seen) through a workspace no request
running at the same time uses (:class:`~.opened.OpenedWorkspaces`: one per worker thread,
opened anew when the folder changed), and goes through the harness's own pieces:

* :meth:`ContextService.prepare` is a thread's first turn without the orchestrator: the
  gate (:meth:`~supercontext_lab.harness.Thread.skip_reason`: the flag, then the message),
  then :func:`~supercontext_lab.harness.first_turn.prepare_turn` in the design of
  ``[preflight]`` (or the one asked for), with its grounding check, its deadline and its
  fallback. Nothing is archived and no recall is counted: no turn happens here;
* :meth:`ContextService.recall` is the scout's own ``memory_recall`` tool, read-only;
* :meth:`ContextService.profile` and :meth:`ContextService.note` read ``PROFILE.md`` and
  ``memory/<namespace>/<key>.md`` through the confined reader every workspace read uses:
  a name with ``..`` or a separator, or a file that is a link out of the workspace, is
  refused.

Whatever leaves here has the secret values in use (the configured routes' keys) replaced,
by the model boundary's one rule (:class:`~supercontext_lab.models.boundary.Secrets`): the
text goes to another program, which may log it.

The message is bounded twice: one longer than :data:`MAX_MESSAGE_CHARS` is refused, and
the pre-flight reads at most its first :data:`PREFLIGHT_CHARS` characters, because the
pack's time grows with the message (1.8 s for a 1 MB one on a two-core machine) and a
scout's prompt has to fit a small model's context.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._confine import read_confined
from .._text import plain_name
from ..agents.definition import AgentDefinition, default_agent_definition
from ..errors import PathRefusedError, ToolError, WorkspaceError
from ..harness import Thread, TurnResult, build_prepared_message
from ..models.boundary import Secrets
from ..sources.demo import open_workspace
from ..sources.memory.files import MAX_FILE_BYTES, ROOT_NAMESPACE
from ..sources.workspace import Workspace
from ..tools import build_scout_registry
from .opened import OpenedWorkspaces

__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_QUERY_CHARS",
    "PREFLIGHT_CHARS",
    "ContextService",
    "Prepared",
]

MAX_MESSAGE_CHARS = 8 << 20
"""A longer message is refused (the command line's bound on a message it reads)."""
PREFLIGHT_CHARS = 8_000
"""The pre-flight reads at most this much of a message: about 2,000 tokens, a quarter of
SmolLM2's context, and the pack prepares it in tens of milliseconds."""
MAX_QUERY_CHARS = 2_000
"""A longer recall query is refused: recall is a search by a few words."""


@dataclass
class Prepared:
    """One message's pre-flight: the turn record and how much of the message it read."""

    message: str
    result: TurnResult
    read_chars: int
    notes: list[str] = field(default_factory=list)
    secrets: Secrets = field(default_factory=Secrets)
    elapsed_ms: float = 0.0

    @property
    def prepared(self) -> bool:
        return self.result.prepared

    def text(self) -> str:
        """The envelope, or one line saying why there is none."""
        result = self.result
        if result.envelope is not None:
            return self.secrets.masked(result.envelope)
        reason = result.reason
        why = f"{reason}: {reason.explanation}" if reason is not None else "no envelope"
        detail = f" ({result.reason_detail})" if result.reason_detail else ""
        return self.secrets.masked(f"No context prepared: {why}{detail}")

    def payload(self) -> dict[str, Any]:
        """The structured result: the envelope, the bundle and what the pre-flight did."""
        result = self.result
        reason = result.reason
        data = {
            "prepared": result.prepared,
            "preparation": str(result.preparation),
            "design": result.design,
            "prepared_by": result.prepared_by,
            "reason": None if reason is None else reason.value,
            "reason_explanation": None if reason is None else reason.explanation,
            "reason_detail": result.reason_detail,
            "envelope": result.envelope,
            "bundle": result.bundle.to_dict() if result.bundle is not None else None,
            "deadline_ms": result.deadline_ms,
            "deadline_missed": result.deadline_missed,
            "preflight_note": result.preflight_note,
            "notes": [*self.notes, *result.notes],
            "message_chars": len(self.message),
            "read_chars": self.read_chars,
            "elapsed_ms": round(self.elapsed_ms, 3),
        }
        masked: dict[str, Any] = self.secrets.masked_data(data)
        return masked

    def first_turn(self) -> str:
        """The message as the harness sends it: the bundle in front of the whole message
        when the pre-flight prepared one, else the message alone."""
        result = self.result
        if result.envelope is None:
            return self.message
        sent = build_prepared_message(
            result.envelope, self.message, design=result.prepared_by or "scout"
        )
        return self.secrets.masked(sent)


class ContextService:
    """The pre-flight, recall and the notes of one workspace (see the module docstring).

    ``root`` ``None`` is the shipped demo's copy. ``design`` and ``deadline_ms`` override
    ``[preflight]`` for every request that does not name its own. Opening checks the
    folder and the lab's config at once: a :class:`~supercontext_lab.errors.WorkspaceError`
    or :class:`~supercontext_lab.errors.ConfigError` names what is wrong.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        design: str | None = None,
        deadline_ms: float | None = None,
        definition: AgentDefinition | None = None,
    ) -> None:
        self.root: Path = open_workspace(root).root
        self._opened = OpenedWorkspaces(self.root)
        self.definition = definition or default_agent_definition()
        self.design = design
        self.deadline_ms = deadline_ms
        self._thread(self.workspace(), design, deadline_ms)  # a bad [preflight] fails now

    def workspace(self) -> Workspace:
        """The workspace as it is now, for this thread alone (see the module docstring)."""
        return self._opened.get()

    def _thread(
        self, workspace: Workspace, design: str | None, deadline_ms: float | None
    ) -> Thread:
        # A thread that never archives and never counts recalls: only its first turn's
        # preparation runs, never a turn.
        return Thread(
            workspace,
            definition=self.definition,
            design=design if design is not None else self.design,
            deadline_ms=deadline_ms if deadline_ms is not None else self.deadline_ms,
            archive=False,
            record_recalls=False,
        )

    def prepare(
        self, message: str, *, design: str | None = None, deadline_ms: float | None = None
    ) -> Prepared:
        """Run the first turn's pre-flight on ``message``, as a new thread would.

        Raises :class:`~supercontext_lab.errors.ToolError` for a message longer than
        :data:`MAX_MESSAGE_CHARS`, :class:`~supercontext_lab.errors.ConfigError` for a bad
        design or deadline; whatever goes wrong in the pre-flight is a cold start with
        its reason, as in a thread.
        """
        if len(message) > MAX_MESSAGE_CHARS:
            raise ToolError(
                f"the message has {len(message):,} characters; at most "
                f"{MAX_MESSAGE_CHARS:,} are accepted"
            )
        started = time.perf_counter()
        read = message[:PREFLIGHT_CHARS]
        notes = []
        if len(read) < len(message):
            notes.append(
                f"the pre-flight read the first {len(read):,} of the message's "
                f"{len(message):,} characters"
            )
        thread = self._thread(self.workspace(), design, deadline_ms)
        result = thread.preview(read)
        took = (time.perf_counter() - started) * 1000.0
        return Prepared(message, result, len(read), notes, Secrets.in_use(), took)

    def recall(self, query: str, *, namespace: str = "global", limit: int = 5) -> dict[str, Any]:
        """The scout's ``memory_recall`` on this workspace: its hits, as the scout sees
        them. :class:`~supercontext_lab.errors.ToolError` with the tool's own one-line
        message when it refuses the call."""
        if len(query) > MAX_QUERY_CHARS:
            raise ToolError(
                f"the query has {len(query):,} characters; recall takes a few words "
                f"(at most {MAX_QUERY_CHARS:,} characters)"
            )
        registry = build_scout_registry(self.workspace())
        done = registry.call(
            "memory_recall", {"query": query, "namespace": namespace, "limit": limit}
        )
        if not done.ok:
            raise ToolError(done.content)
        payload: dict[str, Any] = Secrets.in_use().masked_data(done.data)
        return payload

    def profile(self) -> str:
        """``PROFILE.md`` (``""`` when there is none); :class:`~supercontext_lab.errors.PathRefusedError`
        when it is a link out of the workspace or not a regular file."""
        workspace = self.workspace()
        text = workspace.profile_md
        if workspace.refused("PROFILE.md"):
            raise PathRefusedError(_refusal(workspace))
        return Secrets.in_use().masked(text)

    def note(self, namespace: str, key: str) -> str:
        """The note ``memory/<namespace>/<key>.md`` (a ``global`` note may also lie
        straight under ``memory/``), read as the memory tree reads it.

        :class:`~supercontext_lab.errors.PathRefusedError` for a name that is not one
        plain path component (``..``, a separator, a hidden or invisible name) or a file
        leading out of the workspace; :class:`~supercontext_lab.errors.WorkspaceError`
        when there is no such note.
        """
        for name in (namespace, key):
            if not _component(name):
                raise PathRefusedError(
                    f"{name!r} is not a memory namespace or key (one plain name, no '..', "
                    "no separator, not hidden)"
                )
        workspace = self.workspace()
        memory = workspace.root / "memory"
        candidates = [memory / namespace / f"{key}.md"]
        if namespace == ROOT_NAMESPACE:
            candidates.append(memory / f"{key}.md")
        for path in candidates:
            if not path.exists() and not path.is_symlink():
                continue
            try:
                data, _more = read_confined(
                    workspace.root,
                    path,
                    MAX_FILE_BYTES,
                    allow_outside=workspace.allow_outside_links,
                )
            except FileNotFoundError:
                continue  # a link to nothing, or removed since
            except OSError as exc:
                raise WorkspaceError(
                    f"memory/{namespace}/{key}.md cannot be read ({exc.strerror or exc})"
                ) from None
            return Secrets.in_use().masked(data.decode("utf-8-sig", errors="replace"))
        raise WorkspaceError(f"there is no note memory/{namespace}/{key}.md in the workspace")


def _component(name: str) -> bool:
    """Whether ``name`` is one plain path component a memory folder or file may have."""
    return (
        bool(name)
        and name not in (".", "..")
        and not name.startswith(".")
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
        and plain_name(name)
    )


def _refusal(workspace: Workspace) -> str:
    """The workspace's own line on why PROFILE.md was not read."""
    for line in workspace.diagnostics:
        if line.startswith("PROFILE.md "):
            return line
    return "PROFILE.md was not read."
