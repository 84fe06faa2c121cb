"""Evaluation throughput against an OpenAI-compatible server that answers after 50 ms.

The offline scout model is served over real HTTP on 127.0.0.1 by
:class:`supercontext_lab.testing.OpenAITestServer` with an artificial delay, in a process
of its own (``python -m benchmarks.eval_throughput serve DELAY``): a real model server is
never inside the client's process, and one that was would share its interpreter lock and
slow the client's threads down. The evaluated variant's route points at it, so each scout
run makes real requests and waits like it would on a remote model. The same distinct cases
run sequentially and then at a concurrency of 16 (several times; each concurrent pass is
cheap), and the ratio of wall times is the speed-up.

The cases go through ``supercontext_lab.eval.evaluate`` (``executor="sequential"``, then
``executor="local", concurrency=16``), whose caches make the reruns: one run fills an
empty cache at concurrency 16 (the model's replies and the finished results), and reruns
with the filled cache, which reuse every result without running anything, are timed
against it.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .report import MISS, PENDING, Section, Target, judge, markdown_table
from .stats import Summary, fmt_ms, summarize

__all__ = ["ServerProcess", "eval_api", "make_cases", "run", "serve"]

TARGET_CONCURRENCY_SPEEDUP = 10.0
TARGET_CACHE_SPEEDUP = 50.0
MODEL_NAME = "bench-scout"

_TASKS = (
    "Help me plan {topic}.",
    "What did we decide about {topic}?",
    "Draft an email to the team about {topic}.",
    "I need to prepare {topic} before the grant deadline.",
    "Summarise what we know about {topic}.",
    "Find the notes we took on {topic} last time.",
    "Which skills would help with {topic}?",
    "Put {topic} on the calendar for next week.",
    "Check the budget implications of {topic}.",
    "Make a to-do list for {topic}.",
)
_TOPICS = (
    "the grant renewal budget",
    "the dispersal kernel",
    "the sensitivity analysis",
    "the reviewer's comments",
    "the figure polish for the renewal",
    "the data pipeline run",
    "the literature review digest",
    "the citation formatting",
    "the lab meeting notes",
    "the field season logistics",
    "the Zotero library clean-up",
    "the GitHub release of the model code",
    "the postdoc hiring plan",
    "the conference abstract",
    "the seed trap data",
    "the Bayesian calibration",
    "the collaborators in Oslo",
    "the student's thesis chapter",
    "the ethics approval",
    "the open data deposit",
)


def make_cases(count: int) -> list[str]:
    """``count`` distinct first messages (so no response is ever served twice by chance)."""
    cases: list[str] = []
    for index in range(count):
        task = _TASKS[index % len(_TASKS)]
        topic = _TOPICS[(index // len(_TASKS)) % len(_TOPICS)]
        round_no = index // (len(_TASKS) * len(_TOPICS))
        text = task.format(topic=topic)
        cases.append(text if round_no == 0 else f"{text} (round {round_no + 1})")
    return cases


_SERVER_START_S = 60.0
_SERVER_STOP_S = 10.0


def _read_line(stream: IO[str], timeout: float) -> str | None:
    """One line from ``stream`` within ``timeout`` seconds (``None`` when none came)."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else None


class ServerProcess:
    """The offline scout model served with a delay by a child process on 127.0.0.1.

    The child prints ``{"port": N}`` once it listens, serves until its stdin closes, then
    prints ``{"requests": N, "errors": N}`` and exits; :meth:`close` closes its stdin,
    reads those counts and kills the child if it has not ended by then.
    """

    def __init__(self, delay_s: float) -> None:
        root = Path(__file__).resolve().parent.parent
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.eval_throughput", "serve", repr(delay_s)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.stats: dict[str, int] = {"requests": 0, "errors": 0}
        try:
            assert self._proc.stdout is not None
            line = _read_line(self._proc.stdout, _SERVER_START_S)
            if not line:
                raise RuntimeError(
                    f"the model server process did not start within {_SERVER_START_S:g} s "
                    f"(exit status {self._proc.poll()})"
                )
            self.port = int(json.loads(line)["port"])
        except BaseException:
            self._proc.kill()
            self._proc.wait()
            raise

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int:
        return self._proc.pid

    def close(self) -> None:
        """Stop the child, keeping its request counts (idempotent)."""
        if self._proc.returncode is not None:
            return
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            if self._proc.stdout is not None:
                line = _read_line(self._proc.stdout, _SERVER_STOP_S)
                if line:
                    self.stats = {k: int(v) for k, v in json.loads(line).items()}
            self._proc.wait(timeout=_SERVER_STOP_S)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            pass
        finally:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def serve(delay_s: float) -> None:
    """The child's side of :class:`ServerProcess`."""
    from supercontext_lab import OfflineScoutModel
    from supercontext_lab.testing import OpenAITestServer

    with OpenAITestServer(model=OfflineScoutModel(), delay_s=delay_s) as server:
        print(json.dumps({"port": server.port}), flush=True)
        sys.stdin.read()
        stats = {"requests": len(server.requests), "errors": len(server.errors)}
    print(json.dumps(stats), flush=True)


def eval_api() -> tuple[Any, Any] | str:
    """``(evaluate, CachedModel)`` when the evaluation package is importable, else why not."""
    try:
        evaluate = importlib.import_module("supercontext_lab.eval").evaluate
        cached = importlib.import_module("supercontext_lab.models.cache").CachedModel
    except (ImportError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return evaluate, cached


def _evaluate_call(
    api: tuple[Any, Any],
    cases: Sequence[str],
    base_url: str,
    *,
    concurrency: int,
    cache_path: Path | None,
) -> dict[str, Any]:
    """One ``evaluate`` over the cases on the served model, timed from outside."""
    from supercontext_lab import ModelRoute
    from supercontext_lab.eval import EvalCase, Variant

    evaluate, _ = api
    dataset = [EvalCase(id=f"case-{i:03d}", message=m) for i, m in enumerate(cases)]
    variant = Variant.baseline(
        route=ModelRoute(kind="openai", base_url=base_url, model=MODEL_NAME, timeout_s=60.0)
    )
    started = time.perf_counter()
    report = evaluate(
        dataset,
        [variant],
        executor="local" if concurrency > 1 else "sequential",
        concurrency=concurrency,
        cache=cache_path is not None,
        cache_path=cache_path,
        progress=False,
    )
    wall = time.perf_counter() - started
    statuses: dict[str, int] = {}
    for result in report.results:
        statuses[result.status] = statuses.get(result.status, 0) + 1
    return {
        "wall_s": wall,
        "case_s": [r.elapsed_ms / 1000.0 for r in report.results],
        "statuses": statuses,
        "cache_hits": sum(r.cache_hits for r in report.results),
        "cache_misses": sum(r.cache_misses for r in report.results),
        "reused": sum(1 for r in report.results if getattr(r, "from_cache", False)),
    }


def _speedup_target(seq: dict[str, Any], conc: Summary, cases: int, concurrency: int) -> Target:
    speedup = seq["wall_s"] / conc.median
    per_case = summarize(seq["case_s"])
    return Target(
        "Evaluation throughput",
        f"{cases} cases at concurrency {concurrency} ≥ {TARGET_CONCURRENCY_SPEEDUP:g}× faster "
        "than sequential (server answers after 50 ms)",
        f"{conc.median:.2f} s at {concurrency} (min–max {conc.min:.2f}–{conc.max:.2f} s, "
        f"n={conc.n})",
        f"sequential {seq['wall_s']:.2f} s (per case p50 {fmt_ms(per_case.median)}, "
        f"p5–p95 {fmt_ms(per_case.p5)}–{fmt_ms(per_case.p95)})",
        f"{speedup:.1f}× faster",
        judge(speedup, TARGET_CONCURRENCY_SPEEDUP, at_most=False),
        round(speedup, 3),
        TARGET_CONCURRENCY_SPEEDUP,
    )


def run(
    *,
    cases: int = 200,
    concurrency: int = 16,
    delay_s: float = 0.05,
    concurrent_repeats: int = 2,
    cache_reruns: int = 2,
    log: Callable[[str], None] = print,
) -> Section:
    """Time the cases sequentially, concurrently and from the caches."""
    messages = make_cases(cases)
    api = eval_api()
    data: dict[str, Any] = {
        "cases": cases,
        "concurrency": concurrency,
        "server_delay_s": delay_s,
        "driver": "eval.evaluate",
        "server": "separate process",
    }
    targets: list[Target] = []
    with ServerProcess(delay_s) as server:
        if isinstance(api, str):
            # Without the evaluation package there is nothing to measure yet.
            for target in (
                f"{cases} cases at concurrency {concurrency} ≥ {TARGET_CONCURRENCY_SPEEDUP:g}× "
                "faster than sequential",
                f"cached rerun ≥ {TARGET_CACHE_SPEEDUP:g}× faster than the first run",
            ):
                targets.append(
                    Target(
                        "Evaluation throughput",
                        target,
                        f"pending: supercontext_lab.eval is not importable ({api})",
                        status=PENDING,
                    )
                )
            data["cache"] = {"status": "pending", "reason": api}
            all_ok = True
        else:
            all_ok = _run_evaluate(
                api,
                server.base_url,
                messages,
                concurrency=concurrency,
                concurrent_repeats=concurrent_repeats,
                cache_reruns=cache_reruns,
                data=data,
                targets=targets,
                log=log,
            )
    data["server_requests"] = server.stats["requests"]
    data["server_errors"] = server.stats["errors"]
    if not all_ok:
        targets = [
            Target(
                t.area,
                t.target,
                t.measured + " — some runs failed",
                t.peer,
                t.ratio,
                MISS,
                t.value,
                t.limit,
            )
            if t.status != PENDING
            else t
            for t in targets
        ]
    section = Section("eval_throughput", "Evaluation throughput", data, targets)
    section.details.append(_detail_table(data))
    return section


def _run_evaluate(
    api: tuple[Any, Any],
    base_url: str,
    messages: Sequence[str],
    *,
    concurrency: int,
    concurrent_repeats: int,
    cache_reruns: int,
    data: dict[str, Any],
    targets: list[Target],
    log: Callable[[str], None],
) -> bool:
    """The evaluation-package path: sequential, concurrent, then cached reruns."""
    _, cached_model = api
    n = len(messages)
    log(f"eval: evaluate() over {n} cases, sequential, no cache")
    seq = _evaluate_call(api, messages, base_url, concurrency=1, cache_path=None)
    concurrent = []
    for repeat in range(concurrent_repeats):
        log(f"eval: evaluate() at concurrency {concurrency}, no cache ({repeat + 1})")
        concurrent.append(
            _evaluate_call(api, messages, base_url, concurrency=concurrency, cache_path=None)
        )
    conc = summarize(c["wall_s"] for c in concurrent)
    targets.append(_speedup_target(seq, conc, n, concurrency))
    with tempfile.TemporaryDirectory(prefix="scl-bench-eval-") as tmp:
        cache_path = Path(tmp) / "responses.sqlite3"
        log(f"eval: evaluate() at concurrency {concurrency} filling a fresh cache, then reruns")
        first = _evaluate_call(
            api, messages, base_url, concurrency=concurrency, cache_path=cache_path
        )
        reruns = [
            _evaluate_call(api, messages, base_url, concurrency=concurrency, cache_path=cache_path)
            for _ in range(cache_reruns)
        ]
    rerun = summarize(r["wall_s"] for r in reruns)
    speedup = first["wall_s"] / rerun.median
    served = all(r["cache_misses"] == 0 and r["cache_hits"] > 0 for r in reruns)
    targets.append(
        Target(
            "Evaluation throughput",
            f"cached rerun ≥ {TARGET_CACHE_SPEEDUP:g}× faster than the first run",
            f"rerun {fmt_ms(rerun.median)} (min–max {fmt_ms(rerun.min)}–{fmt_ms(rerun.max)}, "
            f"n={rerun.n}; {reruns[0]['reused']} of {n} results reused, "
            f"{reruns[0]['cache_hits']} replies not asked for, "
            f"{reruns[0]['cache_misses']} misses)",
            f"first run {first['wall_s']:.2f} s at concurrency {concurrency}",
            f"{speedup:.1f}× faster",
            judge(speedup, TARGET_CACHE_SPEEDUP, at_most=False) if served else MISS,
            round(speedup, 3),
            TARGET_CACHE_SPEEDUP,
        )
    )
    data["cached_model_class"] = f"{cached_model.__module__}.{cached_model.__qualname__}"
    data["sequential"] = {
        "wall_s": round(seq["wall_s"], 3),
        "case_ms": summarize(seq["case_s"]).scaled(1000.0).to_dict(),
        "statuses": seq["statuses"],
    }
    data["concurrent"] = {
        "wall_s": conc.to_dict(),
        "case_ms": summarize(t for c in concurrent for t in c["case_s"]).scaled(1000.0).to_dict(),
        "statuses": concurrent[0]["statuses"],
    }
    data["cache"] = {
        "status": "measured",
        "first_run_s": round(first["wall_s"], 3),
        "first_run_misses": first["cache_misses"],
        "rerun_s": rerun.to_dict(),
        "rerun_hits": reruns[0]["cache_hits"],
        "rerun_misses": reruns[0]["cache_misses"],
        "rerun_reused": reruns[0]["reused"],
    }
    runs = [seq, *concurrent, first, *reruns]
    return all(r["statuses"].get("completed", 0) == n for r in runs)


def _detail_table(data: dict[str, Any]) -> str:
    rows = []
    seq = data.get("sequential", {})
    conc = data.get("concurrent", {})
    if "wall_s" in seq:
        rows.append(("sequential", f"{seq['wall_s']:.2f} s", "1 run"))
    if isinstance(conc.get("wall_s"), dict):
        c = conc["wall_s"]
        rows.append(
            (
                f"concurrency {data['concurrency']}",
                f"{c['median']:.2f} s",
                f"min–max {c['min']:.2f}–{c['max']:.2f} s, n={c['n']}",
            )
        )
    cache = data.get("cache", {})
    if cache.get("status") == "measured":
        r = cache["rerun_s"]
        rows.append(("first run (filling the cache)", f"{cache['first_run_s']:.2f} s", "1 run"))
        rows.append(
            (
                "cached rerun",
                fmt_ms(r["median"]),
                f"min–max {fmt_ms(r['min'])}–{fmt_ms(r['max'])}, n={r['n']}",
            )
        )
    table = markdown_table(("Mode", "Wall time", "Spread"), rows)
    return (
        f"{data['cases']} distinct scout runs through {data['driver']}, offline scout model "
        f"served over HTTP on 127.0.0.1 by a separate process with a "
        f"{data['server_delay_s'] * 1000:.0f} ms delay per answer "
        f"({data.get('server_requests', 0)} requests).\n\n{table}"
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(float(sys.argv[2]))
    else:
        sys.exit("usage: python -m benchmarks.eval_throughput serve DELAY_S")
