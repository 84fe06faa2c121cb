"""What a scout run hands back: its status, its trace and the envelope it produced."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, cast

from .._text import one_line
from ..bundle import ContextBundle
from ..config.secrets import mask_data
from ..errors import ModelError
from ..models.base import Message, ModelReply, Usage
from .grounding_report import GroundingReport
from .sources import RunSources

__all__ = ["PREVIEW_CHARS", "ScoutRun", "ScoutStatus", "StopCause", "TraceStep", "trace_summary"]

PREVIEW_CHARS = 300
"""How much of a step's text (a reply, a tool's result, the check's findings) the trace keeps."""


class ScoutStatus(str, Enum):
    """How a run ended; a ``str``, so JSON and text show the plain value."""

    COMPLETED = "completed"
    INCOMPLETE = "incomplete"
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value


class StopCause(str, Enum):
    """Why a run stopped before the model's final answer (``None`` when it did not)."""

    TIMEOUT = "timeout"
    ITERATION_CAP = "iteration_cap"
    CONTEXT_FULL = "context_full"
    MODEL_ERROR = "model_error"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class TraceStep:
    """One step of a run: a model call, a tool call or the grounding check, with timing.

    A ``"check"`` step is the grounding check of the envelope (SPEC §13): its
    ``result_preview`` says what it found ("grounded 3 of 4; dropped tool 'x': …") and
    ``ok`` is false when it emptied the bundle. A ``"deadline"`` step is the harness
    abandoning a scout at its pre-turn deadline (SPEC §16): ``started_ms`` is the
    deadline, ``result_preview`` says so and what prepared the turn instead.
    """

    kind: Literal["model", "tool", "check", "deadline"]
    iteration: int
    started_ms: float
    duration_ms: float
    # Model steps.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    text_preview: str = ""
    tool_calls: tuple[str, ...] = ()
    grace: bool = False
    attempts: int = 1
    """Requests the call made, retries included (a failed call says how many it tried, and
    so does one that succeeded after a retry)."""
    # Tool steps.
    tool: str = ""
    arguments: str = ""
    ok: bool = True
    refused: bool = False
    result_preview: str = ""
    result: str = field(default="", repr=False)
    """A tool's whole result, as the model received it (``result_preview`` is its start,
    on one line): what the Trace tab shows. Kept in memory only, not in :meth:`to_dict`."""
    prefetched: bool = False
    """A read the harness made before the first model call (``prefetch``), not the model."""
    late: bool = False
    """A read not done when the run's time was up: abandoned, never awaited (its result
    says so), and what it would have read is not in the run."""

    @classmethod
    def model_call(
        cls,
        iteration: int,
        started_ms: float,
        duration_ms: float,
        outcome: ModelReply | ModelError,
        *,
        grace: bool,
    ) -> TraceStep:
        """The step of one model call: its reply, or the error it ended with (a failed
        call is a step too, so the trace shows where a run broke)."""
        if isinstance(outcome, ModelError):
            return cls(
                kind="model",
                iteration=iteration,
                started_ms=started_ms,
                duration_ms=duration_ms,
                grace=grace,
                ok=False,
                text_preview=one_line(outcome, PREVIEW_CHARS),
                attempts=outcome.attempts,
            )
        message = outcome.message
        return cls(
            kind="model",
            iteration=iteration,
            started_ms=started_ms,
            duration_ms=duration_ms,
            prompt_tokens=outcome.usage.prompt_tokens,
            completion_tokens=outcome.usage.completion_tokens,
            finish_reason=outcome.finish_reason,
            text_preview=one_line(message.content or "", PREVIEW_CHARS),
            tool_calls=tuple(call.name for call in message.tool_calls),
            grace=grace,
            attempts=outcome.attempts,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        base: dict[str, Any] = {
            "kind": self.kind,
            "iteration": self.iteration,
            "started_ms": round(self.started_ms, 3),
            "duration_ms": round(self.duration_ms, 3),
        }
        if self.kind == "model":
            base.update(
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                finish_reason=self.finish_reason,
                text_preview=self.text_preview,
                tool_calls=list(self.tool_calls),
                grace=self.grace,
                ok=self.ok,
                attempts=self.attempts,
            )
        elif self.kind in ("check", "deadline"):
            base.update(ok=self.ok, result_preview=self.result_preview)
        else:
            base.update(
                tool=self.tool,
                arguments=self.arguments,
                ok=self.ok,
                refused=self.refused,
                result_preview=self.result_preview,
                prefetched=self.prefetched,
                late=self.late,
            )
        return base


@dataclass
class ScoutRun:
    """Everything one scout run produced, whether or not it yielded an envelope."""

    status: ScoutStatus
    reason: str | None
    output: str
    envelope: str | None
    bundle: ContextBundle | None
    problems: list[str]
    trace: list[TraceStep]
    usage: Usage
    model_calls: int
    elapsed_ms: float
    model_name: str
    definition_hash: str
    system_prompt: str = field(repr=False, default="")
    task_message: str = field(repr=False, default="")
    messages: list[Message] = field(repr=False, default_factory=list)
    stopped: StopCause | None = None
    grounding: GroundingReport | None = None
    """The grounding check of the envelope (``None`` when the run produced none)."""
    unchecked: ContextBundle | None = field(repr=False, default=None)
    """The bundle as the model wrote it, before the check changed it (else ``None``)."""
    sources: RunSources | None = field(repr=False, default=None)
    """What the run read, as citable sources (the panel shows cited notes from it)."""

    @property
    def ungrounded(self) -> bool:
        """True when the grounding check emptied the bundle (the turn starts cold)."""
        return self.grounding is not None and self.grounding.emptied

    @property
    def gathered(self) -> str:
        """What the model was given: the system prompt, the task and every tool result
        (prefetched or asked for), one text, for measuring what it could have cited."""
        return "\n".join(m.content or "" for m in self.messages if m.role != "assistant")

    @property
    def ok(self) -> bool:
        """True when the run produced a valid, bounded envelope."""
        return self.envelope is not None and self.bundle is not None

    @property
    def refused_calls(self) -> list[TraceStep]:
        return [step for step in self.trace if step.kind == "tool" and step.refused]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape printed by ``supercontext-lab scout --json``, with secrets
        masked in every text (the request, arguments, previews)."""
        return cast(dict[str, Any], mask_data(self._fields()))

    def _fields(self) -> dict[str, Any]:
        return {
            "envelope": self.envelope,
            "bundle": self.bundle.to_dict() if self.bundle is not None else None,
            "problems": list(self.problems),
            "trace": [step.to_dict() for step in self.trace],
            "elapsed_ms": round(self.elapsed_ms, 3),
            "status": str(self.status),
            "reason": self.reason,
            "model": self.model_name,
            "model_calls": self.model_calls,
            "tokens": self.usage.total_tokens,
            "definition_hash": self.definition_hash,
            "grounding": self.grounding.to_dict() if self.grounding is not None else None,
        }


def trace_summary(trace: Sequence[TraceStep]) -> dict[str, Any]:
    """Counts and totals of a trace, for reports and evaluation."""
    models = [s for s in trace if s.kind == "model"]
    tools = [s for s in trace if s.kind == "tool"]
    return {
        "model_calls": len(models),
        "tool_calls": len(tools),
        "prefetched": sum(1 for s in tools if s.prefetched),
        "refused": sum(1 for s in tools if s.refused),
        "tool_errors": sum(1 for s in tools if not s.ok),
        "tokens": sum(s.tokens for s in models),
        "tools_used": sorted({s.tool for s in tools if s.ok}),
        "model_ms": round(sum(s.duration_ms for s in models), 3),
        "tool_ms": round(sum(s.duration_ms for s in tools), 3),
    }
