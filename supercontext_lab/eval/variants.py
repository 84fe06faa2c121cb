"""Scout variants: a name, an agent definition (agent.toml + prompt.md) and a model route.

A variant may also name a pre-flight design (SPEC §16): ``pack``, ``cached``, ``prefetch``,
``full-context``, ``tool-only`` or ``cold`` prepare the case without the scout
(:func:`design_variant`, named after the design); ``scout``, the default, runs it. Its
``placement`` says where the prepared block sits in the orchestrator's request
(``prepend`` or ``system-tail``; :mod:`supercontext_lab.harness.designs`).

A variant travels to other threads and processes (a Dask worker) as plain data — the TOML
text, the prompt text and the route as a dict — and is rebuilt there; see
:meth:`Variant.spec`.
"""

from __future__ import annotations

import functools
import os
import re
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from ..agents.definition import AgentDefinition, default_agent_definition, load_agent_definition
from ..harness.designs import DESIGNS, NO_BLOCK, PLACEMENTS
from ..models.base import ChatModel
from ..routes import BASELINES, DEFAULT_LOCAL_MODEL, ModelRoute, get_model_route

__all__ = [
    "BASELINE",
    "Variant",
    "VariantSpec",
    "baseline",
    "check_variant_name",
    "definition_from_text",
    "design_variant",
    "design_variants",
    "pick_baselines",
    "split_agent_option",
    "uses_a_model",
]

BASELINE = "baseline"
"""The name of the shipped definition's variant."""

_DESIGN_LABELS = {
    "pack": "pack (no model)",
    "cached": "cached (built ahead, no model)",
    "prefetch": "prefetch (an earlier lookup, no model)",
    "full-context": "full-context (every note, no model)",
    "tool-only": "tool-only (the orchestrator recalls itself)",
    "cold": "cold (no pre-flight)",
}

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")


def check_variant_name(name: str) -> str:
    """Return ``name`` when it is a usable variant name, else raise ``ValueError``."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ValueError(
            f"variant name {name!r} must be 1-64 letters, digits or _ . + -, starting with a "
            "letter or digit"
        )
    return name


def split_agent_option(option: str) -> tuple[str, Path]:
    """``NAME=PATH`` or ``PATH`` (named after the agent.toml's folder, else the file's stem),
    as given to ``--agent``; ``ValueError`` when no path is given."""
    name, sep, path_text = option.partition("=")
    if not sep:
        name, path_text = "", option
    if not path_text.strip():
        raise ValueError(f"--agent {option!r} names no agent.toml; use --agent NAME=PATH")
    path = Path(path_text.strip()).expanduser()
    if not name.strip():
        name = path.parent.name if path.name == "agent.toml" and path.parent.name else path.stem
    return name.strip(), path


@functools.lru_cache(maxsize=64)
def definition_from_text(toml_text: str, prompt: str) -> AgentDefinition:
    """Rebuild a definition from its TOML text and prompt (memoised: definitions are
    immutable and every task of a variant asks for the same one)."""
    return load_agent_definition(toml_text, prompt=prompt)


def _definition_toml(definition: AgentDefinition) -> str:
    return tomlkit.dumps(definition.model_dump(mode="json", exclude_none=True))


@dataclass(frozen=True)
class VariantSpec:
    """A variant as plain, picklable data for a worker thread or process."""

    name: str
    toml_text: str
    prompt: str
    route: dict[str, Any] | None
    model_factory: Callable[[], ChatModel] | None
    design: str = "scout"
    placement: str = "prepend"

    def definition(self) -> AgentDefinition:
        """The agent definition, rebuilt and validated."""
        return definition_from_text(self.toml_text, self.prompt)


@dataclass(frozen=True)
class Variant:
    """One way of running the scout: ``definition`` on ``route`` (or ``model_factory``).

    ``route`` ``None`` means the lab's configured route for the definition's model hint
    (offline unless configured otherwise), read when the evaluation starts.
    ``model_factory`` overrides the route: it is called once per run and must return a
    fresh :class:`ChatModel` (for a Dask cluster it must also be picklable). ``design``
    is the pre-flight design that prepares each case (``"scout"``: the scout runs);
    ``placement`` where its block sits in the orchestrator's request.
    """

    name: str
    definition: AgentDefinition
    route: ModelRoute | None = None
    model_factory: Callable[[], ChatModel] | None = None
    design: str = "scout"
    placement: str = "prepend"

    def __post_init__(self) -> None:
        check_variant_name(self.name)
        if self.placement not in PLACEMENTS:
            raise ValueError(
                f"variant {self.name!r}: placement must be one of {', '.join(PLACEMENTS)}, "
                f"not {self.placement!r}"
            )
        if self.design not in DESIGNS:
            raise ValueError(
                f"variant {self.name!r}: design must be one of {', '.join(DESIGNS)}, "
                f"not {self.design!r}"
            )
        if not isinstance(self.definition, AgentDefinition):
            raise TypeError(
                f"variant {self.name!r}: definition must be an AgentDefinition, "
                f"not {type(self.definition).__name__}"
            )
        if self.route is not None and not isinstance(self.route, ModelRoute):
            raise TypeError(
                f"variant {self.name!r}: route must be a ModelRoute or None, "
                f"not {type(self.route).__name__}"
            )

    @classmethod
    def from_path(
        cls,
        name: str,
        agent_toml_path: str | os.PathLike[str],
        route: ModelRoute | None = None,
    ) -> Variant:
        """A variant from an ``agent.toml`` (and the ``prompt.md`` beside it, else the
        shipped prompt). Raises ``AgentDefinitionError`` for an invalid or missing file."""
        return cls(name, load_agent_definition(Path(agent_toml_path)), route=route)

    @classmethod
    def baseline(cls, route: ModelRoute | None = None) -> Variant:
        """The shipped definition, named ``baseline``."""
        return cls(BASELINE, default_agent_definition(), route=route)

    def renamed(self, name: str) -> Variant:
        """The same variant under another name."""
        return Variant(
            name, self.definition, self.route, self.model_factory, self.design, self.placement
        )

    def resolved_route(self) -> ModelRoute:
        """The route this variant runs on now (the configured one when unset)."""
        return self.route or get_model_route(self.definition.model.hint)

    def model_label(self) -> str:
        """A short description of the model, for reports."""
        if self.design != "scout":
            return _DESIGN_LABELS[self.design]
        factory = self.model_factory
        if factory is not None:
            named = isinstance(factory, types.FunctionType | types.MethodType | type)
            return factory.__name__ if named else "custom model"
        route = self.resolved_route()
        if route.kind == "offline":
            return "offline"
        if route.kind == "baseline":
            return f"baseline:{route.model} (no model)"
        if route.kind == "local":
            model = route.model or DEFAULT_LOCAL_MODEL
            return f"local:{model} ({route.resolved_bundle_format()})"
        return f"{route.model} at {route.base_url}"

    def spec(self) -> VariantSpec:
        """The picklable form sent to executors (reads the configured route now)."""
        route = None if self.model_factory is not None else self.resolved_route()
        return VariantSpec(
            name=self.name,
            toml_text=_definition_toml(self.definition),
            prompt=self.definition.prompt,
            route=route.model_dump() if route is not None else None,
            model_factory=self.model_factory,
            design=self.design,
            placement=self.placement,
        )


def baseline(route: ModelRoute | None = None) -> Variant:
    """The shipped definition on the configured ``burst`` route, named ``baseline``."""
    return Variant.baseline(route)


def pick_baselines(definition: AgentDefinition | None = None) -> list[Variant]:
    """The no-model baselines of SPEC §14, ``rank`` and ``random``, on ``definition`` (the
    shipped one by default): reported beside every model variant, so a model's picks can
    be compared with the ranking it was handed and with chance."""
    chosen = definition or default_agent_definition()
    return [
        Variant(
            name, chosen, route=ModelRoute(kind="baseline", model=name, label=f"baseline:{name}")
        )
        for name in BASELINES
    ]


def design_variant(
    design: str,
    route: ModelRoute | None = None,
    definition: AgentDefinition | None = None,
    *,
    placement: str = "prepend",
) -> Variant:
    """The shipped definition (or ``definition``) prepared in ``design``, named after it
    (``<design>-system-tail`` with that placement); ``route`` is the scout's model for
    the ``scout`` design (the configured one when ``None``) and, in an end-to-end
    evaluation, what ``agent_prepare_context`` runs on."""
    name = design if placement == "prepend" else f"{design}-{placement}"
    return Variant(
        name,
        definition or default_agent_definition(),
        route=route,
        design=design,
        placement=placement,
    )


def uses_a_model(variant: Variant) -> bool:
    """Whether ``variant``'s bundles come from a model (not the offline scout, a
    baseline, or a design that runs no scout)."""
    if variant.design != "scout":
        return False
    if variant.model_factory is not None:
        return True
    return variant.resolved_route().kind not in ("offline", "baseline")


def design_variants(
    designs: Iterable[str], route: ModelRoute | None = None, placements: Iterable[str] = ()
) -> list[Variant]:
    """One :func:`design_variant` per design and placement (``prepend`` when none is
    given), each once, in the order given; a design that sends no block (``cold``,
    ``tool-only``) runs once, whatever the placements."""
    placed = list(dict.fromkeys(placements)) or ["prepend"]
    return [
        design_variant(design, route, placement=placement)
        for design in dict.fromkeys(designs)
        for placement in (["prepend"] if design in NO_BLOCK else placed)
    ]
