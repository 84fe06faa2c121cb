"""End to end: does a pre-flight improve the first reply? (SPEC §16, ``eval --end-to-end``).

Each case is sent as the first message of a new :class:`~supercontext_lab.harness.Thread`
under every variant, so the orchestrator answers it once per design, cold included, with
the same model at temperature 0 (:class:`AtTemperature`). The harness turn is the real
one: the gate (as for a provider with native tool calling), the variant's pre-flight
design, its deadline, the prepared block, the orchestrator's tool rounds. Evaluations
never count recalls and never archive. A case's ``focus`` is not used: a first turn has
none.

What is measured, per variant (:func:`reply_metrics`):

* ``reply_mention_rate``: the case's expected mentions found in the reply
  (case-insensitive), micro-averaged over the mentions;
* ``reply_forbidden_rate``: the forbidden mentions found in the reply;
* ``reply_lift``: ``reply_mention_rate`` minus the ``cold`` variant's, on the same cases
  (and repeats): what the pre-flight added to the reply (0.0 for ``cold`` itself, paired
  against itself);
* ``added_prompt_tokens``: the orchestrator's prompt tokens in the turn, minus those of
  the same case cold, averaged per turn;
* ``time_to_reply_p50_ms`` (and p95): from the message to the reply, the pre-flight
  included.

A later turn's record also says how much of its first request repeats, from the start,
what the thread's previous turn ended with (``reusable_prefix_tokens``,
:func:`reusable_prefix_tokens`): what a server's prompt cache (llama.cpp's
``cache_prompt``) can keep instead of reading again.

Rates come with their 95 % intervals (:mod:`.stats`): Wilson for the rates, a paired
bootstrap for the lift. An empty rate (0/0) has SPEC §11's value (1.0; 0.0 for the
forbidden mentions) and Wilson's interval of nothing measured, [0, 1];
:func:`reply_rate_counts` gives each its counts, and renderers show one of 0 of 0 as "–"
with no interval (:func:`~.scores.applicable`). The lift's counts are the variant's reply
mentions on the cases paired with cold's; ``cold`` is not paired with itself, so its lift
counts 0 of 0 and reads "–".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..models.base import ChatModel, Message, ModelInfo, ModelReply, ToolSpec, estimate_tokens
from ..models.choices import BundleChoices
from .metrics import percentile
from .scores import ratio
from .stats import CaseCounts, paired_bootstrap, wilson

if TYPE_CHECKING:
    from ..harness.turn import TurnResult
    from .dataset import Expectations
    from .results import CaseResult

__all__ = [
    "COLD",
    "REPLY_METRICS",
    "REPLY_RATES",
    "AtTemperature",
    "mention_counts",
    "paired_counts",
    "reply_counts",
    "reply_metrics",
    "reply_rate_counts",
    "reusable_prefix_tokens",
    "turn_record",
]

COLD = "cold"
"""The variant every end-to-end variant is paired against."""

REPLY_RATES: tuple[str, ...] = ("reply_mention_rate", "reply_forbidden_rate")
REPLY_METRICS: tuple[str, ...] = (
    "reply_mention_rate",
    "reply_forbidden_rate",
    "reply_lift",
    "added_prompt_tokens",
    "time_to_reply_p50_ms",
    "time_to_reply_p95_ms",
    "reply_cases",
)
"""The end-to-end metrics, in display order (``reply_cases``: the turns counted)."""


class AtTemperature:
    """A :class:`ChatModel` that sends every request of ``inner`` at ``temperature``."""

    def __init__(self, inner: ChatModel, temperature: float = 0.0) -> None:
        self.inner = inner
        self.temperature = temperature

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def info(self) -> ModelInfo:
        return self.inner.info

    def close(self) -> None:
        self.inner.close()

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
        return self.inner.complete(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            temperature=self.temperature,
            timeout=timeout,
            on_text=on_text,
            choices=choices,
        )


def _present(items: Sequence[str] | None, text: str) -> tuple[int, int] | None:
    if items is None:
        return None
    wanted = list(dict.fromkeys(item.strip() for item in items if item.strip()))
    lowered = text.casefold()
    return sum(1 for item in wanted if item.casefold() in lowered), len(wanted)


def reply_counts(expect: Expectations, reply: str) -> dict[str, Any]:
    """Which of the case's expected and forbidden mentions the reply holds: ``found`` and
    ``expected`` (``None`` when the case sets no mentions), ``forbidden`` and
    ``forbidden_expected``."""
    mentions = _present(expect.mentions, reply)
    forbidden = _present(expect.must_not_mention, reply)
    return {
        "found": None if mentions is None else mentions[0],
        "expected": None if mentions is None else mentions[1],
        "forbidden": None if forbidden is None else forbidden[0],
        "forbidden_expected": None if forbidden is None else forbidden[1],
    }


def reusable_prefix_tokens(previous: Sequence[Message], request: Sequence[Message]) -> int:
    """The estimated tokens of the messages ``request`` (a turn's first request) starts
    with, unchanged, from ``previous`` (everything the turn before read and wrote, its
    reply last): the whole messages a prefix cache holds, counted to the first that
    differs (a cache keeps the part of that one before the difference too; left out
    here, so this is the low side)."""
    reused = 0
    for before, now in zip(previous, request, strict=False):
        if before != now:
            break
        reused += estimate_tokens(now.content or "")
    return reused


def turn_record(turn: TurnResult, expect: Expectations) -> dict[str, Any]:
    """What an end-to-end result keeps of its first turn (JSON-ready)."""
    return {
        "design": turn.design,
        "prepared_by": turn.prepared_by,
        "preparation": str(turn.preparation),
        "reason": None if turn.reason is None else turn.reason.value,
        "deadline_ms": turn.deadline_ms,
        "deadline_missed": turn.deadline_missed,
        "reply": turn.reply,
        "orchestrator_model": turn.orchestrator_model,
        "orchestrator_error": turn.orchestrator_error,
        "orchestrator_tool_calls": list(turn.orchestrator_tool_calls),
        "prompt_tokens": turn.usage.prompt_tokens,
        "completion_tokens": turn.usage.completion_tokens,
        "preparation_ms": round(turn.timings_ms.get("preparation_ms", 0.0), 3),
        "time_to_reply_ms": round(turn.timings_ms.get("total_ms", 0.0), 3),
        "reply_scores": reply_counts(expect, turn.reply),
    }


def _counts(result: CaseResult, kind: str) -> CaseCounts | None:
    scores = (result.turn or {}).get("reply_scores") or {}
    found = scores.get("found" if kind == "mentions" else "forbidden")
    expected = scores.get("expected" if kind == "mentions" else "forbidden_expected")
    if not isinstance(found, int) or not isinstance(expected, int):
        return None
    return CaseCounts(found, expected)


def mention_counts(results: Sequence[CaseResult]) -> dict[str, CaseCounts]:
    """Per ``"case id#repeat"``, the reply's expected mentions found of expected (cases
    that set mentions only)."""
    out: dict[str, CaseCounts] = {}
    for result in results:
        counts = _counts(result, "mentions")
        if counts is not None:
            out[f"{result.id}#{result.repeat}"] = counts
    return out


def reply_metrics(
    results: Sequence[CaseResult], cold: Sequence[CaseResult]
) -> tuple[dict[str, float | int], dict[str, tuple[float, float]]]:
    """The end-to-end metrics of one variant's ``results`` against the ``cold`` variant's
    (see the module docstring), and their 95 % intervals."""
    turns = [r for r in results if r.turn is not None]
    (found, expected), (bad, banned) = _reply_sums(turns)
    mine, theirs = mention_counts(turns), mention_counts(cold)
    shared = [key for key in mine if key in theirs]
    lift, low, high = paired_bootstrap([mine[k] for k in shared], [theirs[k] for k in shared])
    cold_tokens = {
        f"{r.id}#{r.repeat}": int((r.turn or {}).get("prompt_tokens", 0)) for r in cold if r.turn
    }
    added = [
        int((r.turn or {}).get("prompt_tokens", 0)) - cold_tokens[key]
        for r in turns
        if (key := f"{r.id}#{r.repeat}") in cold_tokens
    ]
    times = [float((r.turn or {}).get("time_to_reply_ms", 0.0)) for r in turns]
    metrics: dict[str, float | int] = {
        "reply_mention_rate": ratio(found, expected),
        "reply_forbidden_rate": ratio(bad, banned, empty=0.0),
        "reply_lift": lift,
        "added_prompt_tokens": sum(added) / len(added) if added else 0.0,
        "time_to_reply_p50_ms": percentile(times, 50),
        "time_to_reply_p95_ms": percentile(times, 95),
        "reply_cases": len(turns),
    }
    intervals = {
        "reply_mention_rate": wilson(found, expected),
        "reply_forbidden_rate": wilson(bad, banned),
        "reply_lift": (low, high),
    }
    return metrics, intervals


def _reply_sums(turns: Sequence[CaseResult]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The replies' expected mentions found of expected, and forbidden found of set."""
    mentions = [c for r in turns if (c := _counts(r, "mentions")) is not None]
    forbidden = [c for r in turns if (c := _counts(r, "forbidden")) is not None]
    return (
        (sum(c.found for c in mentions), sum(c.expected for c in mentions)),
        (sum(c.found for c in forbidden), sum(c.expected for c in forbidden)),
    )


def reply_rate_counts(
    results: Sequence[CaseResult], cold: Sequence[CaseResult], *, is_cold: bool = False
) -> dict[str, tuple[int, int]]:
    """The counts, ``(k, n)``, behind :func:`reply_metrics`' rates and lift, for
    :func:`~.scores.applicable`; ``is_cold``: the results are cold's own, not paired with
    themselves, so its lift counts 0 of 0."""
    turns = [r for r in results if r.turn is not None]
    mentions, forbidden = _reply_sums(turns)
    mine, theirs = mention_counts(turns), mention_counts(cold)
    paired = [] if is_cold else [mine[key] for key in mine if key in theirs]
    return {
        "reply_mention_rate": mentions,
        "reply_forbidden_rate": forbidden,
        "reply_lift": (sum(c.found for c in paired), sum(c.expected for c in paired)),
    }


def paired_counts(
    results_by_variant: Mapping[str, Sequence[CaseResult]],
) -> dict[str, dict[str, CaseCounts]]:
    """:func:`mention_counts` of every variant, for the paired comparisons."""
    return {name: mention_counts(results) for name, results in results_by_variant.items()}
