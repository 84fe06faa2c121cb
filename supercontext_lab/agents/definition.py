"""Agent definitions: the strict ``agent.toml`` model and its loader.

An agent is an ``agent.toml`` (validated by :class:`AgentDefinition`) plus a role prompt,
``prompt.md``, read from beside the TOML file or, when there is none, the shipped one.
Every rule the loader enforces produces an :class:`AgentDefinitionError` whose message
names the key (for a tool, the tool) and the reason, in one line.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictStr,
    ValidationError,
    field_validator,
)

from .._bounded import MAX_TOML_CHARS, InputLimitError, TOMLDecodeError, toml_loads
from .._confine import read_confined
from .._hashing import fingerprint
from .._text import describe_validation_error
from ..errors import AgentDefinitionError, PathRefusedError
from .known_tools import KNOWN_TOOLS

_ANYWHERE = Path("/")
"""The root agent files are read under: any folder, links anywhere, but never the kernel's
and devices' trees (see :func:`~supercontext_lab._confine.read_confined`)."""

_MAX_PROMPT_BYTES = 1_000_000
"""Largest prompt.md read: a role prompt is a page or two."""

__all__ = [
    "AgentDefinition",
    "GroundingMode",
    "ModelSection",
    "PrefetchMode",
    "SubagentsSection",
    "ToolsSection",
    "default_agent_definition",
    "default_agent_toml",
    "default_prompt",
    "load_agent_definition",
    "read_agent_file",
]

_PACKAGE_DIR = "context_scout"


def _reject_bool(value: Any) -> Any:
    # TOML booleans must not pass as numbers (pydantic's lax mode would turn true into 1).
    if isinstance(value, bool):
        raise ValueError("must be a number, not a boolean")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_default=True, use_attribute_docstrings=True
    )


PrefetchMode = Literal["auto", "always", "never"]
"""``prefetch`` in agent.toml (see :attr:`AgentDefinition.prefetch`)."""

GroundingMode = Literal["drop", "mark", "off"]
"""``grounding`` in agent.toml (see :attr:`AgentDefinition.grounding`)."""


class ModelSection(_Strict):
    """The ``[model]`` table: which model route the agent runs on."""

    hint: StrictStr = Field(default="burst", min_length=1)
    """Route name resolved through the lab's ``[models.<hint>]`` config tables."""


class ToolsSection(_Strict):
    """The ``[tools]`` table: the agent's tool allowlist."""

    named: list[StrictStr] = Field(default_factory=list)
    """Tool names the agent may call; nothing else is ever offered or executed."""


class SubagentsSection(_Strict):
    """The ``[subagents]`` table: agents this one may delegate to (never for workers)."""

    named: list[StrictStr] = Field(default_factory=list)
    """Agent ids this agent may spawn."""


class AgentDefinition(_Strict):
    """A validated ``agent.toml``. Unknown keys are rejected at every level."""

    id: StrictStr = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """Stable identifier (letters, digits, ``_ . -``), e.g. ``context_scout``."""
    display_name: StrictStr = ""
    """Human-readable name; defaults to the id."""
    when_to_use: StrictStr = ""
    """When an orchestrator should use this agent."""
    temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    """Sampling temperature sent with every model call, 0 to 2."""
    max_iterations: int = Field(default=8, ge=1)
    """Maximum number of model calls in one run."""
    iteration_policy: Literal["extended", "strict"] = "extended"
    """``extended`` grants one last tool-less call asking for the result at the cap."""
    prefetch: PrefetchMode = "auto"
    """Whether the harness runs the scout's first gathering round before the first model
    call and hands its results to the model: ``auto`` on local routes and routes set up as
    small models (``small_model = true``), ``always`` on every route, ``never`` on none."""
    grounding: GroundingMode = "drop"
    """The grounding check of every envelope: ``drop`` removes unknown tools and skills and
    unsupported summary lines, ``mark`` lists them and keeps them, ``off`` only measures."""
    max_result_chars: int = Field(default=5000, ge=500)
    """Upper bound, in characters, of the result handed back to the caller."""
    sandbox_mode: Literal["read_only", "workspace_write"] = "read_only"
    """``read_only`` allows only tools that never change state."""
    agent_tier: Literal["worker", "orchestrator"] = "worker"
    """Workers are leaves: they gather and stop, and may not delegate."""
    omit_identity: StrictBool = True
    """Leave the generic identity preamble out of the system prompt."""
    omit_memory_context: StrictBool = True
    """Leave the generic memory-context block out of the system prompt."""
    omit_safety_preamble: StrictBool = True
    """Leave the generic safety preamble out of the system prompt."""
    omit_profile: StrictBool = False
    """Leave PROFILE.md out of the system prompt."""
    omit_memory_md: StrictBool = False
    """Leave MEMORY.md out of the system prompt."""
    model: ModelSection = Field(default_factory=ModelSection)
    """The ``[model]`` table."""
    tools: ToolsSection = Field(default_factory=ToolsSection)
    """The ``[tools]`` table."""
    subagents: SubagentsSection | None = None
    """The ``[subagents]`` table; forbidden for workers."""

    _prompt: str = PrivateAttr(default="")
    _source: str = PrivateAttr(default="")

    @field_validator("temperature", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        return _reject_bool(value)

    @field_validator("max_iterations", "max_result_chars", mode="before")
    @classmethod
    def _whole_number(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be a whole number")
        return value

    @property
    def prompt(self) -> str:
        """The role prompt (``prompt.md``) this definition runs with."""
        return self._prompt

    @property
    def source(self) -> str:
        """Where the definition came from: a file path, ``<text>`` or ``<shipped>``."""
        return self._source

    @property
    def name(self) -> str:
        """The display name, or the id when none is set."""
        return self.display_name or self.id

    def with_prompt(self, prompt: str) -> AgentDefinition:
        """Return a copy that runs with ``prompt`` as its role prompt."""
        if not prompt.strip():
            raise AgentDefinitionError("prompt.md: the role prompt is empty; write one.")
        copy = self.model_copy()
        copy._prompt = prompt
        copy._source = self._source
        return copy

    def fingerprint(self) -> str:
        """The sha256 of the definition and its prompt: equal exactly when both are."""
        return fingerprint([self.model_dump(mode="json"), self.prompt])

    def definition_hash(self) -> str:
        """The first 12 digits of :meth:`fingerprint`, for provenance shown to people."""
        return self.fingerprint()[:12]


def _check_rules(definition: AgentDefinition) -> None:
    """Rules that span several keys, checked after the per-field validation."""
    if definition.agent_tier == "worker" and definition.subagents is not None:
        raise AgentDefinitionError(
            "subagents: a worker agent may not delegate; remove the [subagents] table "
            'or set agent_tier = "orchestrator".'
        )
    seen: set[str] = set()
    for tool in definition.tools.named:
        if tool in seen:
            raise AgentDefinitionError(f"tools.named: '{tool}' is listed twice.")
        seen.add(tool)
        known = KNOWN_TOOLS.get(tool)
        if known is None:
            raise AgentDefinitionError(
                f"tools.named: unknown tool '{tool}'; known tools are "
                f"{', '.join(sorted(KNOWN_TOOLS))}."
            )
        if definition.sandbox_mode == "read_only" and not known.read_only:
            raise AgentDefinitionError(
                f"tools.named: tool '{tool}' is not allowed in a read_only sandbox "
                f"(it {known.why})."
            )


_WORDING = {
    "extra_forbidden": "unknown key; remove it or check its spelling",
    "missing": "required key is missing",
}


def _describe(error: ValidationError) -> str:
    problem = describe_validation_error(
        error, first_only=True, wording=_WORDING, show_input=True, location="agent.toml"
    )
    return problem + "."


def _from_mapping(data: dict[str, Any], *, prompt: str, source: str) -> AgentDefinition:
    try:
        definition = AgentDefinition.model_validate(data)
    except ValidationError as exc:
        raise AgentDefinitionError(_describe(exc)) from None
    _check_rules(definition)
    if not definition.display_name:
        definition = definition.model_copy(update={"display_name": definition.id})
    definition = definition.with_prompt(prompt)
    definition._source = source
    return definition


def _parse_toml(text: str, *, where: str) -> dict[str, Any]:
    try:
        return toml_loads(text)
    except InputLimitError as exc:
        raise AgentDefinitionError(f"{where}: {exc}.") from None
    except TOMLDecodeError as exc:
        hint = ""
        if "\n" not in text and text.strip().endswith(".toml"):
            hint = " (to load a file, pass a pathlib.Path, not a str)"
        raise AgentDefinitionError(f"{where}: invalid TOML: {exc}{hint}.") from None


def _read_file(path: Path, max_bytes: int) -> str:
    """The UTF-8 text of ``path``: a regular file of at most ``max_bytes`` (a FIFO or a
    device given as an agent file must not block or fill memory), never under /proc, /sys
    or /dev (a definition folder is often somebody else's: ``agent.toml ->
    /proc/self/environ`` would put the environment, keys included, into the editor)."""
    try:
        data, more = read_confined(_ANYWHERE, path, max_bytes, allow_outside=True)
        if more:
            raise AgentDefinitionError(
                f"{path}: the file is too large (more than {max_bytes:,} bytes)."
            )
        return data.decode("utf-8")
    except (PathRefusedError, OSError, UnicodeDecodeError) as exc:
        raise AgentDefinitionError(f"{path}: cannot read the file ({exc}).") from None


def read_agent_file(path: str | os.PathLike[str]) -> str | None:
    """The text of the agent file ``path`` (an ``agent.toml``, or a ``prompt.md`` when so
    named), or ``None`` when nothing is there (a dangling link or a link loop included).

    Read like :func:`load_agent_definition` reads it: a regular file only, bounded, never
    waiting on a FIFO. Raises :class:`AgentDefinitionError` naming the file and the cause.
    """
    file = Path(path)
    if "\0" in str(file):
        raise AgentDefinitionError(f"{str(file)!r}: not a file name (it holds a NUL).")
    if not file.exists():
        return None
    limit = _MAX_PROMPT_BYTES if file.name == "prompt.md" else 4 * MAX_TOML_CHARS
    return _read_file(file, limit)


def default_agent_toml() -> str:
    """The text of the shipped ``context_scout/agent.toml``."""
    return (
        resources.files(__package__)
        .joinpath(_PACKAGE_DIR)
        .joinpath("agent.toml")
        .read_text("utf-8")
    )


def default_prompt() -> str:
    """The text of the shipped ``context_scout/prompt.md``."""
    return (
        resources.files(__package__).joinpath(_PACKAGE_DIR).joinpath("prompt.md").read_text("utf-8")
    )


def load_agent_definition(
    source: str | os.PathLike[str], *, prompt: str | None = None
) -> AgentDefinition:
    """Load and validate an agent definition.

    ``source`` is a path to an ``agent.toml`` (``pathlib.Path`` or any ``os.PathLike``)
    or a ``str`` holding TOML text. The role prompt is ``prompt`` when given, else the
    ``prompt.md`` beside the file, else the shipped one.

    Raises :class:`AgentDefinitionError` naming the key and the reason.
    """
    if isinstance(source, str):
        data = _parse_toml(source, where="agent.toml")
        return _from_mapping(
            data, prompt=default_prompt() if prompt is None else prompt, source="<text>"
        )
    path = Path(source)
    text = _read_file(path, 4 * MAX_TOML_CHARS)
    data = _parse_toml(text, where=str(path))
    if prompt is None:
        beside = path.with_name("prompt.md")
        prompt = _read_file(beside, _MAX_PROMPT_BYTES) if beside.is_file() else default_prompt()
    try:
        return _from_mapping(data, prompt=prompt, source=str(path))
    except AgentDefinitionError as exc:
        raise AgentDefinitionError(f"{path}: {exc}") from None


def default_agent_definition() -> AgentDefinition:
    """The shipped context scout, validated like any other definition."""
    definition = load_agent_definition(default_agent_toml())
    definition._source = "<shipped>"
    return definition
