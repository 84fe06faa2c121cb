"""The pre-flight designs and the ``[preflight]`` settings (SPEC §16).

A turn can be prepared in seven ways:

* ``"scout"``: the context scout, a model with read-only tools (SPEC §5), as before;
* ``"pack"``: no model. The harness's gathering round, the facts it found ranked for the
  request and fitted to a token budget, written with the one envelope writer
  (:mod:`.pack`);
* ``"cached"``: an envelope built ahead of time from the workspace (profile, MEMORY.md,
  the notes most recalled or most recent), stored under ``.supercontext/`` and served
  without reading the request (:mod:`.cached`);
* ``"prefetch"``: nothing waits on the live turn. After each turn a pack is built in the
  background from that turn's message, and the thread's next turn is sent the last one
  completed, labelled as from an earlier lookup; the first turn of a thread gets none
  (:mod:`.prefetch`);
* ``"full-context"``: no scout. Every note of the workspace (PROFILE.md, MEMORY.md, the
  memory notes), in a stable order, cut at note boundaries to fit the orchestrator's
  declared window (:mod:`.baselines`), the baseline a reviewer asks for;
* ``"tool-only"``: no pre-flight; the orchestrator is offered the read-only
  ``memory_recall`` and may call it itself for a few rounds (:mod:`.orchestrator`);
* ``"cold"``: no pre-flight at all.

Where the bundle sits (``placement``): ``"prepend"`` puts it in front of the message it
prepares, kept in the thread's history; ``"system-tail"`` sends it as a system message at
the tail of that turn's request only, never stored in the thread (later turns do not
carry it, and the prompt before it is the same from turn to turn).

``config.toml`` holds the defaults::

    [preflight]
    design = "scout"        # scout | pack | cached | prefetch | full-context | tool-only | cold
    deadline_ms = 1500      # a scout not done by then is abandoned (default: none)
    fallback = "pack"       # what prepares a turn whose scout missed it: pack | cold
    pack_tokens = 600       # the pack's budget, in tokens (four characters a token)
    cached_tokens = 1000    # the cached envelope's budget
    prefetch_ttl_s = 60     # a prefetched pack older than this is not sent
    prefetch_pending = 8    # background builds running or in line in a process, at most
    placement = "prepend"   # prepend | system-tail

A thread (``Thread(..., design=..., deadline_ms=..., placement=...)``), a run (``scout --design``) and
an evaluation (``eval --design``) override them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from ..config import config_path, load_config
from ..errors import ConfigError

__all__ = [
    "DEFAULT_CACHED_TOKENS",
    "DEFAULT_DESIGN",
    "DEFAULT_PACK_TOKENS",
    "DEFAULT_PREFETCH_PENDING",
    "DEFAULT_PREFETCH_TTL_S",
    "DESIGNS",
    "FALLBACKS",
    "NO_BLOCK",
    "PLACEMENTS",
    "PREFLIGHT_TABLE",
    "Design",
    "Fallback",
    "Placement",
    "PreflightSettings",
    "check_deadline_ms",
    "check_design",
    "check_placement",
    "design_for_route",
    "preflight_settings",
]

Design = Literal["scout", "pack", "cached", "prefetch", "full-context", "tool-only", "cold"]
DESIGNS: tuple[str, ...] = get_args(Design)
"""The pre-flight designs, in the order reports list them."""
DEFAULT_DESIGN: Design = "scout"

NO_BLOCK: tuple[str, ...] = ("tool-only", "cold")
"""The designs that send no prepared block, so where a block sits does not apply."""

Fallback = Literal["pack", "cold"]
FALLBACKS: tuple[str, ...] = get_args(Fallback)

Placement = Literal["prepend", "system-tail"]
PLACEMENTS: tuple[str, ...] = get_args(Placement)

PREFLIGHT_TABLE = "preflight"
DEFAULT_PACK_TOKENS = 600
"""The pack's budget: about the size of a scout's summary of six facts with their
attributions."""
DEFAULT_CACHED_TOKENS = 1000
"""The cached envelope's budget: it is sent on every first turn, whatever the request."""
DEFAULT_PREFETCH_TTL_S = 60.0
"""How long a prefetched pack may be sent after it was built: the reference system's
60 s."""
DEFAULT_PREFETCH_PENDING = 8
"""Background pack builds running or in line at once in one process; a thread that finds
the cap reached keeps its last pack (the build is CPU work on the same cores as the live
turn)."""
_MIN_TOKENS = 50
_MAX_TOKENS = 100_000
_MAX_TTL_S = 86_400.0
_MAX_PENDING = 256
_KEYS = (
    "design",
    "deadline_ms",
    "fallback",
    "pack_tokens",
    "cached_tokens",
    "prefetch_ttl_s",
    "prefetch_pending",
    "placement",
)


def check_design(name: object) -> Design:
    """``name`` as a :data:`Design`; ``ValueError`` naming them all otherwise."""
    for design in get_args(Design):
        if name == design:
            return design  # type: ignore[no-any-return]
    raise ValueError(f"design must be one of {', '.join(DESIGNS)}, not {name!r}")


def check_deadline_ms(value: object) -> float | None:
    """A deadline in milliseconds: ``None`` (no deadline) or a finite number above 0;
    ``ValueError`` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"deadline_ms must be a number of milliseconds, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"deadline_ms must be a finite number above 0, not {value!r}")
    return float(value)


def _check_fallback(value: object) -> Fallback:
    for fallback in get_args(Fallback):
        if value == fallback:
            return fallback  # type: ignore[no-any-return]
    raise ValueError(f"fallback must be one of {', '.join(FALLBACKS)}, not {value!r}")


def check_placement(value: object) -> Placement:
    """``value`` as a :data:`Placement`; ``ValueError`` naming both otherwise."""
    for placement in get_args(Placement):
        if value == placement:
            return placement  # type: ignore[no-any-return]
    raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, not {value!r}")


def _check_tokens(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be a whole number of tokens, not {value!r}")
    if not _MIN_TOKENS <= value <= _MAX_TOKENS:
        raise ValueError(f"{key} must be between {_MIN_TOKENS} and {_MAX_TOKENS:,}, not {value}")
    return value


def _check_ttl(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"prefetch_ttl_s must be a number of seconds, not {value!r}")
    if not math.isfinite(value) or not 0 < value <= _MAX_TTL_S:
        raise ValueError(
            f"prefetch_ttl_s must be above 0 and at most {_MAX_TTL_S:,.0f} seconds, not {value!r}"
        )
    return float(value)


def _check_pending(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"prefetch_pending must be a whole number, not {value!r}")
    if not 1 <= value <= _MAX_PENDING:
        raise ValueError(f"prefetch_pending must be between 1 and {_MAX_PENDING}, not {value}")
    return value


@dataclass(frozen=True)
class PreflightSettings:
    """How first turns are prepared: the ``[preflight]`` table, or its defaults."""

    design: Design = DEFAULT_DESIGN
    design_chosen: bool = False
    """Whether ``design`` was chosen (in ``config.toml`` or for this thread or run) rather
    than left at its default, which a local route changes (see :func:`design_for_route`)."""
    deadline_ms: float | None = None
    """A scout not done this long after the preparation started is abandoned (``None``:
    no deadline; the scout's own time limit still bounds it)."""
    fallback: Fallback = "pack"
    """What prepares a turn whose scout missed the deadline."""
    pack_tokens: int = DEFAULT_PACK_TOKENS
    cached_tokens: int = DEFAULT_CACHED_TOKENS
    prefetch_ttl_s: float = DEFAULT_PREFETCH_TTL_S
    """A prefetched pack older than this (since its build ended) is not sent."""
    prefetch_pending: int = DEFAULT_PREFETCH_PENDING
    """Background pack builds running or in line in the process, at most."""
    placement: Placement = "prepend"
    """Where the bundle sits in the orchestrator's request (see the module docstring)."""

    def with_overrides(
        self,
        *,
        design: str | None = None,
        deadline_ms: float | None = None,
        placement: str | None = None,
    ) -> PreflightSettings:
        """These settings with a thread's or a run's ``design``, ``deadline_ms`` and
        ``placement`` (each kept when ``None``);
        :class:`~supercontext_lab.errors.ConfigError` for a bad value."""
        changed = self
        try:
            if placement is not None:
                changed = replace(changed, placement=check_placement(placement))
            if design is not None:
                changed = replace(changed, design=check_design(design), design_chosen=True)
            if deadline_ms is not None:
                changed = replace(changed, deadline_ms=check_deadline_ms(deadline_ms))
        except ValueError as exc:
            raise ConfigError(f"{exc}.") from None
        return changed

    def to_dict(self) -> dict[str, Any]:
        return {
            "design": self.design,
            "deadline_ms": self.deadline_ms,
            "fallback": self.fallback,
            "pack_tokens": self.pack_tokens,
            "cached_tokens": self.cached_tokens,
            "prefetch_ttl_s": self.prefetch_ttl_s,
            "prefetch_pending": self.prefetch_pending,
            "placement": self.placement,
        }


def design_for_route(settings: PreflightSettings, route_kind: str) -> PreflightSettings:
    """``settings`` for a scout whose configured route is of ``route_kind``: a ``local``
    route prepares with the ``pack`` unless a design was chosen.

    Why: with notes read as documents, SmolLM2 as the scout gives the same facts as the
    ranking it is handed, on every dataset measured (``python -m benchmarks structures
    --model local:smollm2``; docs/performance.md), at 1 to 4 s a bundle, where the pack
    takes milliseconds. The local model then answers as the orchestrator."""
    if settings.design_chosen or route_kind != "local":
        return settings
    return replace(settings, design="pack")


def preflight_settings() -> PreflightSettings:
    """The ``[preflight]`` table of ``config.toml`` (defaults for what it leaves out).

    Raises :class:`~supercontext_lab.errors.ConfigError` naming the file and the key for
    an unknown key or a bad value.
    """
    table = load_config().get(PREFLIGHT_TABLE)
    if table is None:
        return PreflightSettings()
    path = config_path()
    if not isinstance(table, dict):
        raise ConfigError(f"Config file {path}: [{PREFLIGHT_TABLE}] must be a table.")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigError(
            f"Config file {path}: unknown key {PREFLIGHT_TABLE}.{unknown[0]}; the keys are "
            f"{', '.join(_KEYS)}."
        )
    try:
        return PreflightSettings(
            design=check_design(table.get("design", DEFAULT_DESIGN)),
            design_chosen="design" in table,
            deadline_ms=check_deadline_ms(table.get("deadline_ms")),
            fallback=_check_fallback(table.get("fallback", "pack")),
            pack_tokens=_check_tokens("pack_tokens", table.get("pack_tokens", DEFAULT_PACK_TOKENS)),
            cached_tokens=_check_tokens(
                "cached_tokens", table.get("cached_tokens", DEFAULT_CACHED_TOKENS)
            ),
            prefetch_ttl_s=_check_ttl(table.get("prefetch_ttl_s", DEFAULT_PREFETCH_TTL_S)),
            prefetch_pending=_check_pending(
                table.get("prefetch_pending", DEFAULT_PREFETCH_PENDING)
            ),
            placement=check_placement(table.get("placement", "prepend")),
        )
    except ValueError as exc:
        raise ConfigError(f"Config file {path}: {PREFLIGHT_TABLE}.{exc}; fix it.") from None
