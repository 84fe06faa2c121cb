"""A chat model that plays back a script, for tests, notebooks and demos.

:class:`ScriptedModel` answers each call with the next step of its script and records
every call, so a test can drive the scout through an exact conversation and then check
what the model was sent. :func:`tool_call_message` and :func:`envelope` build the two
kinds of assistant output a scout run needs: tool calls and the final bundle.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from ..bundle.render import write_envelope
from ..errors import ModelError, ModelTimeoutError
from ..models.base import Message, ModelInfo, ModelReply, ToolCall, ToolSpec, estimate_usage
from ..models.choices import BundleChoices

__all__ = [
    "ScriptedCall",
    "ScriptedModel",
    "Step",
    "envelope",
    "tool_call_message",
]

StepResult: TypeAlias = "str | Message | ModelReply"
Step: TypeAlias = (
    "str | Message | ModelReply | "
    "Callable[[Sequence[Message], Sequence[ToolSpec] | None], str | Message | ModelReply]"
)


@dataclass(frozen=True)
class ScriptedCall:
    """One recorded call to a :class:`ScriptedModel`."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] | None
    tool_choice: str | None
    temperature: float | None
    timeout: float | None
    choices: BundleChoices | None = None


class ScriptedModel:
    """A :class:`~supercontext_lab.models.base.ChatModel` answering from a script.

    Each call consumes the next step: a ``str`` becomes an assistant text message, a
    :class:`Message` is answered as is (it must be an assistant message), a
    :class:`ModelReply` is returned as is, and a callable receives ``(messages, tools)``
    and returns any of those. Usage is estimated at four characters per token unless the
    step is a full reply. Every call is recorded in :attr:`calls`. When the script runs
    out, the call raises :class:`ModelError`.

    ``delay_s`` simulates latency: each call sleeps that long first, and when the caller's
    ``timeout`` is shorter it sleeps only the timeout and raises
    :class:`ModelTimeoutError` without consuming a step.

    ``info`` declares what the model plays (a local model's run budget and context
    window, a small model, ...); its ``label``, when set, is the model's name.
    """

    def __init__(
        self,
        steps: Iterable[Step],
        *,
        name: str = "scripted",
        delay_s: float = 0.0,
        info: ModelInfo | None = None,
    ) -> None:
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, not {delay_s!r}")
        self._steps: Iterator[Step] = iter(steps)
        declared = info or ModelInfo()
        self._info = declared if declared.label else replace(declared, label=name)
        self._name = self._info.label
        self.delay_s = delay_s
        self.calls: list[ScriptedCall] = []
        self._lock = threading.Lock()
        self._used = 0

    @property
    def name(self) -> str:
        """The display name given at construction (``scripted`` by default)."""
        return self._name

    @property
    def info(self) -> ModelInfo:
        """What the model was declared to be at construction."""
        return self._info

    def close(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return f"ScriptedModel(name={self._name!r}, calls={len(self.calls)})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        on_text: Callable[[str], None] | None = None,
        choices: BundleChoices | None = None,
    ) -> ModelReply:
        """Answer with the next step of the script (see the class docstring)."""
        call = ScriptedCall(
            messages=tuple(messages),
            tools=None if tools is None else tuple(tools),
            tool_choice=tool_choice,
            temperature=temperature,
            timeout=timeout,
            choices=choices,
        )
        with self._lock:
            self.calls.append(call)
        if self.delay_s > 0:
            if timeout is not None and self.delay_s > timeout:
                time.sleep(max(0.0, timeout))
                raise ModelTimeoutError(
                    f"The scripted model {self._name!r} takes {self.delay_s:g} s per call, "
                    f"more than the {timeout:g} s allowed; lower delay_s or raise the timeout."
                )
            time.sleep(self.delay_s)
        with self._lock:
            try:
                step = next(self._steps)
            except StopIteration:
                raise ModelError(
                    f"The scripted model {self._name!r} has no more steps (it answered "
                    f"{self._used} calls); add steps to its script for this call."
                ) from None
            self._used += 1
            number = self._used
        result = step(call.messages, call.tools) if callable(step) else step
        reply = self._reply(result, call.messages, number)
        if on_text is not None and reply.message.content:
            on_text(reply.message.content)
        return reply

    def _reply(self, result: object, messages: Sequence[Message], number: int) -> ModelReply:
        if isinstance(result, ModelReply):
            return result if result.model else replace(result, model=self._name)
        if isinstance(result, str):
            message = Message(role="assistant", content=result)
        elif isinstance(result, Message):
            if result.role != "assistant":
                raise ModelError(
                    f"Step {number} of the scripted model {self._name!r} is a "
                    f"{result.role!r} message; steps must be assistant messages."
                )
            message = result
        else:
            raise ModelError(
                f"Step {number} of the scripted model {self._name!r} produced a "
                f"{type(result).__name__}; steps give a str, a Message or a ModelReply."
            )
        return ModelReply(
            message=message,
            usage=estimate_usage(messages, message),
            finish_reason="tool_calls" if message.tool_calls else "stop",
            model=self._name,
        )


def tool_call_message(
    *calls: tuple[str, Mapping[str, Any] | str], content: str | None = None
) -> Message:
    """An assistant message calling tools: ``tool_call_message(("memory_recall", {...}))``.

    Arguments given as a mapping are serialised to JSON; a string is kept as written.
    Ids are ``call_1``, ``call_2``, … in order.
    """
    built = tuple(
        ToolCall(
            id=f"call_{index}",
            name=name,
            arguments=arguments if isinstance(arguments, str) else json.dumps(dict(arguments)),
        )
        for index, (name, arguments) in enumerate(calls, start=1)
    )
    return Message(role="assistant", content=content, tool_calls=built)


_ToolItem: TypeAlias = "Mapping[str, Any] | tuple[str, Mapping[str, Any] | str, str]"
_SkillItem: TypeAlias = "Mapping[str, Any] | tuple[str, bool | None, str]"


def _tool(item: _ToolItem) -> tuple[str, str, str]:
    if isinstance(item, Mapping):
        tool, args, why = item.get("tool", ""), item.get("args", {}), item.get("why", "")
    else:
        tool, args, why = item
    return str(tool), args if isinstance(args, str) else json.dumps(args), str(why)


def _skill(item: _SkillItem) -> tuple[str, bool | None, str]:
    if isinstance(item, Mapping):
        skill, installed, why = item.get("skill", ""), item.get("installed"), item.get("why", "")
    else:
        skill, installed, why = item
    return str(skill), installed if isinstance(installed, bool) else None, str(why)


def envelope(
    *,
    has_enough_context: bool | None = True,
    proposed_goal: str | None = None,
    summary: str = "",
    recommended_tool_calls: Sequence[_ToolItem] = (),
    recommended_skills: Sequence[_SkillItem] = (),
) -> str:
    """A ``[context_bundle] … [/context_bundle]`` envelope built from fields, written by
    the lab's one envelope writer (:func:`~supercontext_lab.bundle.render.write_envelope`).

    ``proposed_goal=None`` writes ``none``; ``has_enough_context=None`` leaves that line
    out. Tool calls are mappings with ``tool``/``args``/``why`` (or such triples; ``args``
    given as a mapping is written as JSON) and skills are mappings with
    ``skill``/``installed``/``why`` (or triples; ``installed`` neither true nor false
    leaves that line out).
    """
    return write_envelope(
        has_enough_context=has_enough_context,
        proposed_goal=proposed_goal,
        summary=summary,
        tool_calls=[_tool(item) for item in recommended_tool_calls],
        skills=[_skill(item) for item in recommended_skills],
    )
