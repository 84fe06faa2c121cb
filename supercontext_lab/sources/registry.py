"""The scout's tool registry: typed tools, validated arguments, calls that never raise.

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
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from .._bounded import InputLimitError, json_loads
from .._json import json_type_name
from ..errors import SupercontextError, ToolError
from ..models.base import ToolSpec

if TYPE_CHECKING:
    from .web import WebSearchProvider
    from .workspace import Workspace

__all__ = [
    "Tool",
    "ToolRegistry",
    "ToolResult",
    "build_scout_registry",
    "clean_json_schema",
    "format_validation_error",
    "make_tool",
    "to_json",
]

ArgsT = TypeVar("ArgsT", bound=BaseModel)


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
        return cls(ok=False, content=_one_line(message))


def to_json(payload: Any) -> str:
    """Compact, UTF-8-friendly JSON text (what models read best and what the trace stores)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


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


def format_validation_error(exc: ValidationError) -> str:
    """One line listing each invalid field and why (``limit: Input should be ...``)."""
    parts: list[str] = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(item) for item in error.get("loc", ())) or "arguments"
        message = str(error.get("msg", "invalid value"))
        if error.get("type") == "extra_forbidden":
            message = "unexpected argument"
        parts.append(f"{location}: {message}")
    return "; ".join(parts) or "invalid arguments"


def _one_line(text: str) -> str:
    return " ".join(text.split())


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
            return ToolResult.failure(
                f"invalid arguments for tool '{name}': {format_validation_error(exc)}"
            )
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
        return result


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


def build_scout_registry(
    workspace: Workspace,
    *,
    web_search: WebSearchProvider | None = None,
    allow_private_addresses: bool | None = None,
    registry_url: str | None = None,
    web_timeout: float | None = None,
) -> ToolRegistry:
    """Every read-only tool of ``known_tools.READ_ONLY_TOOLS``, bound to ``workspace``.

    ``web_search`` is the search provider (without one ``web_search_tool`` answers that
    search is not configured); ``allow_private_addresses`` lets ``web_fetch`` reach
    loopback and private networks (``None`` reads ``web.allow_private_addresses`` from the
    lab's config, default false); ``registry_url`` adds a remote skill registry (a JSON list
    shaped like ``registry.json``); ``web_timeout`` bounds each fetch in seconds (``None``
    reads ``web.timeout_s``, default 10).
    """
    # Imported here because the tool modules build on Tool/ToolResult defined above.
    from .tools import web_tools, workspace_tools

    return ToolRegistry(
        [
            *workspace_tools(workspace, registry_url=registry_url),
            *web_tools(
                web_search=web_search,
                allow_private_addresses=allow_private_addresses,
                timeout=web_timeout,
            ),
        ]
    )
