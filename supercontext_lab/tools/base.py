"""Typed tools, validated arguments, calls that never raise.

A :class:`Tool` couples a name and description with a pydantic model of its arguments
(``extra="forbid"``, so a model inventing an argument gets told so) and a handler that
returns a :class:`ToolResult`. :meth:`ToolRegistry.call` is the single entry point the
scout uses: whatever the model sends (bad JSON, wrong types, an unknown tool) and whatever
a handler does, it answers with a ``ToolResult`` whose one-line ``content`` names the tool
and the problem, so the model can correct itself and the run goes on.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .._bounded import InputLimitError, json_loads
from .._json import json_type_name, to_json
from .._secrets import mask_values, masked_data
from .._text import describe_validation_error, one_line
from ..config.secrets import values_in_use
from ..errors import SupercontextError, ToolError, ToolNotAllowedError
from ..models.base import ToolSpec

__all__ = [
    "NoArgs",
    "Tool",
    "ToolArgs",
    "ToolRegistry",
    "ToolResult",
    "clean_json_schema",
    "make_tool",
    "masked_result",
    "to_json",
]

ArgsT = TypeVar("ArgsT", bound=BaseModel)
_WORDING = {"extra_forbidden": "unexpected argument"}


class ToolArgs(BaseModel):
    """Base of every tool's arguments: unknown keys are refused, so a model that invents
    an argument is told which one."""

    model_config = ConfigDict(extra="forbid")


class NoArgs(ToolArgs):
    """A tool without arguments."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool hands back.

    ``content`` is the text given to the model (compact JSON text for structured results,
    a one-line message for failures); ``data`` keeps the structured value for callers in
    Python (traces, widgets) and is never sent to a model.
    """

    ok: bool
    content: str
    data: Any = None

    @classmethod
    def success(cls, payload: Any) -> ToolResult:
        """A successful result whose content is ``payload`` as compact JSON text."""
        return cls(ok=True, content=to_json(payload), data=payload)

    @classmethod
    def failure(cls, message: str) -> ToolResult:
        """A failed result carrying a one-line message for the model."""
        return cls(ok=False, content=one_line(message))


@dataclass(frozen=True)
class Tool:
    """One tool a model may call.

    ``handler`` receives an already validated instance of ``args_model``; build tools with
    :func:`make_tool` so the handler can be typed with its own arguments model.
    """

    name: str
    description: str
    args_model: type[BaseModel]
    read_only: bool
    handler: Callable[[BaseModel], ToolResult]

    @property
    def parameters(self) -> dict[str, Any]:
        """The arguments' JSON schema in the plain shape OpenAI-style APIs expect."""
        return copy.deepcopy(_schema_of(self.args_model))

    def spec(self) -> ToolSpec:
        """The :class:`ToolSpec` offered to a chat model."""
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)


@functools.lru_cache(maxsize=256)
def _schema_of(args_model: type[BaseModel]) -> dict[str, Any]:
    # Generating a pydantic JSON schema is slow and every model call of a scout run
    # offers the same tools: build each schema once (callers get a copy).
    return clean_json_schema(args_model.model_json_schema())


def make_tool(
    name: str,
    description: str,
    args_model: type[ArgsT],
    handler: Callable[[ArgsT], ToolResult],
    *,
    read_only: bool = True,
) -> Tool:
    """Build a :class:`Tool` from a handler typed on its own arguments model."""

    def call(args: BaseModel) -> ToolResult:
        if not isinstance(args, args_model):
            raise TypeError(f"expected {args_model.__name__}, got {type(args).__name__}")
        return handler(args)

    return Tool(
        name=name,
        description=description,
        args_model=args_model,
        read_only=read_only,
        handler=call,
    )


def clean_json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Inline ``$ref``s, drop ``title`` keywords and normalise the top level.

    The result always has ``type: object``, ``properties`` and ``required``; pydantic's
    ``$defs`` are inlined because several OpenAI-compatible servers do not follow refs.
    """
    defs: Mapping[str, Any] = schema.get("$defs", {})

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node and isinstance(node["$ref"], str):
            target = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return clean(merged)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title", "$defs"):
                continue
            if key == "properties" and isinstance(value, dict):
                # Property names are data, not keywords: a property called "title" stays.
                out[key] = {prop: clean(sub) for prop, sub in value.items()}
            else:
                out[key] = clean(value)
        return out

    cleaned: dict[str, Any] = clean(dict(schema))
    result: dict[str, Any] = {
        "type": "object",
        "properties": cleaned.get("properties", {}),
        "required": list(cleaned.get("required", [])),
    }
    if "additionalProperties" in cleaned:
        result["additionalProperties"] = cleaned["additionalProperties"]
    if "description" in cleaned:
        result["description"] = cleaned["description"]
    return result


class ToolRegistry:
    """A fixed set of tools, looked up by name, called with raw model arguments."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"tool '{tool.name}' is registered twice")
            self._tools[tool.name] = tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({', '.join(self.names())})"

    def names(self) -> list[str]:
        """Tool names in registration order."""
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def specs(self, names: Iterable[str]) -> list[ToolSpec]:
        """Specs for ``names`` in the order given; an unknown name is a :class:`ToolError`."""
        specs: list[ToolSpec] = []
        for name in names:
            tool = self._tools.get(name)
            if tool is None:
                known = ", ".join(self._tools) or "none"
                raise ToolError(f"unknown tool '{name}'; known tools: {known}.")
            specs.append(tool.spec())
        return specs

    def check_allowed(self, name: str, allowlist: Iterable[str]) -> Tool:
        """The tool ``name`` when a read-only scout may call it under ``allowlist``.

        Raises :class:`ToolNotAllowedError` naming the reason otherwise: outside the
        allowlist, unknown here, or not read-only. This is the run-time half of the
        read-only rule (the loader's allowlist check is the other half).
        """
        allowed = list(allowlist)
        if name not in allowed:
            usable = [n for n in allowed if (t := self._tools.get(n)) is not None and t.read_only]
            raise ToolNotAllowedError(
                f"tool '{name}' is not allowed: it is not in this scout's read-only "
                f"allowlist ({', '.join(usable) or 'no tools'})."
            )
        tool = self._tools.get(name)
        if tool is None:
            raise ToolNotAllowedError(
                f"tool '{name}' is not allowed: no such tool is available here."
            )
        if not tool.read_only:
            raise ToolNotAllowedError(f"tool '{name}' is not allowed: it is not read-only.")
        return tool

    def call(self, name: str, arguments: str | Mapping[str, Any]) -> ToolResult:
        """Validate ``arguments`` (JSON text or a mapping) and run the tool; never raises."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.failure(f"unknown tool '{name}'")
        parsed = _parse_arguments(arguments)
        if isinstance(parsed, str):
            return ToolResult.failure(f"invalid arguments for tool '{name}': {parsed}")
        try:
            args = tool.args_model.model_validate(parsed)
        except ValidationError as exc:
            problems = describe_validation_error(exc, wording=_WORDING)
            return ToolResult.failure(f"invalid arguments for tool '{name}': {problems}")
        try:
            result = tool.handler(args)
        except SupercontextError as exc:
            return ToolResult.failure(f"tool '{name}' failed: {exc}")
        except Exception as exc:  # a tool bug must not end the scout's run
            return ToolResult.failure(f"tool '{name}' failed: {type(exc).__name__}: {exc}")
        if not isinstance(result, ToolResult):
            return ToolResult.failure(
                f"tool '{name}' failed: it returned {type(result).__name__}, not a ToolResult"
            )
        return masked_result(result)


def masked_result(result: ToolResult) -> ToolResult:
    """``result`` with secrets masked in what the model reads and in the structured data
    the trace, the run's sources and every writer of bundles take: a key pasted into an
    imported chat or a note is found by recall like any text."""
    values = values_in_use()
    data = masked_data(result.data, values)
    if result.data is not None and result.content == to_json(result.data):
        # Written again from the masked data: a cut private key block masked in the JSON
        # text would take the closing quotes with it.
        return ToolResult(ok=result.ok, content=to_json(data), data=data)
    return ToolResult(ok=result.ok, content=mask_values(result.content, values)[0], data=data)


def _parse_arguments(arguments: str | Mapping[str, Any]) -> dict[str, Any] | str:
    """The arguments as a dict, or a one-line reason why they are unusable."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if not isinstance(arguments, str):
        return f"expected a JSON object, got {type(arguments).__name__}"
    if not arguments.strip():
        # Several servers send "" for a call without arguments.
        return {}
    try:
        value = json_loads(arguments)
    except InputLimitError as exc:
        return f"not usable JSON ({exc})"
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if not isinstance(value, dict):
        return f"expected a JSON object, got {json_type_name(value)}"
    return value
