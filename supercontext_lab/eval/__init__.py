"""Evaluate and compare scout variants on a dataset of first messages (and, end to end,
the later messages of their threads).

    from supercontext_lab.eval import Variant, baseline, evaluate

    report = evaluate("cases.jsonl", [baseline(), Variant.from_path("v2", "v2/agent.toml")])
    report.metrics("v2")["mention_rate"]

Datasets are JSONL (:mod:`.dataset`), metrics follow SPEC §11 (:mod:`.metrics`), runs go
through a sequential, threaded or Dask executor (:mod:`.executors`) and model replies
through the response cache (:mod:`supercontext_lab.models.cache`).

Names load on first access (PEP 562), so the command line can register ``eval`` without
importing the engine; nothing here imports Jupyter, Dask or tqdm at import time.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .dataset import EvalCase, Expectations, FollowUp, load_dataset, parse_dataset
    from .executors import EXECUTORS, run_tasks
    from .metrics import METRIC_NAMES, CaseScores, aggregate, score_case
    from .report import EvalReport, VariantReport
    from .results import CaseResult
    from .runner import evaluate
    from .variants import BASELINE, Variant, baseline, pick_baselines

# The public names of each submodule, imported on first access.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "dataset": ("EvalCase", "Expectations", "FollowUp", "load_dataset", "parse_dataset"),
    "executors": ("EXECUTORS", "run_tasks"),
    "metrics": ("METRIC_NAMES", "CaseScores", "aggregate", "score_case"),
    "report": ("EvalReport", "VariantReport"),
    "results": ("CaseResult",),
    "runner": ("evaluate",),
    "variants": ("BASELINE", "Variant", "baseline", "pick_baselines"),
}

__all__ = [
    "BASELINE",
    "EXECUTORS",
    "METRIC_NAMES",
    "CaseResult",
    "CaseScores",
    "EvalCase",
    "EvalReport",
    "Expectations",
    "FollowUp",
    "Variant",
    "VariantReport",
    "aggregate",
    "baseline",
    "demo_dataset_path",
    "demo_variant_path",
    "evaluate",
    "load_dataset",
    "parse_dataset",
    "pick_baselines",
    "run_tasks",
    "score_case",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


def demo_dataset_path() -> str:
    """The shipped dataset of cases for the demo workspace (a JSONL file)."""
    return str(resources.files(__name__).joinpath("data").joinpath("demo_dataset.jsonl"))


def demo_variant_path(name: str = "no_memory_recall") -> str:
    """The ``agent.toml`` of a shipped demo variant (``data/variants/<name>/agent.toml``)."""
    path = (
        resources.files(__name__)
        .joinpath("data")
        .joinpath("variants")
        .joinpath(name)
        .joinpath("agent.toml")
    )
    if not path.is_file():
        raise FileNotFoundError(f"no shipped demo variant named {name!r}")
    return str(path)
