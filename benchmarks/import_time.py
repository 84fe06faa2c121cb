"""Start-up costs, each measured in fresh interpreters.

* ``import supercontext_lab``: wall time of ``python -c "import supercontext_lab"`` minus
  that of ``python -c "pass"``, the two interleaved so drift hits both alike; the spread
  is that of the paired differences. The package loads its engine lazily, so the cost of
  a first real use (``supercontext_lab.Thread``) is measured the same way, and one
  ``-X importtime`` run of it names the heaviest imports.
* ``%load_ext supercontext_lab``: in a fresh process holding a bare IPython
  ``InteractiveShell``, the time of the ``%load_ext`` call (which imports the package and
  its notebook layer). Reported as pending while ``supercontext_lab.lab.extension`` does
  not exist.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from .report import MISS, PENDING, Section, Target, judge, markdown_table
from .stats import Summary, fmt_ms, summarize

__all__ = ["heaviest_imports", "run"]

TARGET_IMPORT_MS = 150.0
TARGET_LOAD_EXT_MS = 600.0

_LOAD_EXT_SCRIPT = """
import json, time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
started = time.perf_counter()
shell.run_line_magic("load_ext", "supercontext_lab")
elapsed = time.perf_counter() - started
print(json.dumps({
    "seconds": elapsed,
    "loaded": "supercontext_lab" in shell.extension_manager.loaded,
    "magics": sorted(shell.magics_manager.magics["line"]) + sorted(shell.magics_manager.magics["cell"]),
}))
"""


def _signed(seconds: float) -> str:
    text = fmt_ms(seconds)
    return text if text.startswith("-") else f"+{text}"


def _wall(args: list[str], env: dict[str, str], cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        args, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    return time.perf_counter() - started


_IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def heaviest_imports(stderr: str, limit: int = 8) -> list[dict[str, Any]]:
    """What ``import supercontext_lab`` spends its time on, slowest first.

    Reads ``-X importtime`` output, which lists children before their parent; only imports
    inside the package's own subtree count (a bare interpreter pays for the rest too).
    Third-party and standard packages count with everything they import (summed over
    the places the package's modules import them); the package's own modules count by
    their self time only.
    """
    rows = []
    for line in stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match:
            _self_us, cumulative_us, indent, name = match.groups()
            rows.append(((len(indent) - 1) // 2, name, int(_self_us), int(cumulative_us)))
    found: dict[str, int] = {}
    ancestors: list[str] = []
    for level, name, own, cumulative in reversed(rows):
        del ancestors[level:]
        root = ancestors[0] if ancestors else name
        ancestors.append(name)
        if root.split(".")[0] != "supercontext_lab":
            continue
        if name.startswith("supercontext_lab."):
            # The package's own modules count by their own (self) time.
            found[name] = max(found.get(name, 0), own)
        elif level > 0 and all(a.split(".")[0] == "supercontext_lab" for a in ancestors[:-1]):
            # The first module outside the package on a path counts with all it imports,
            # summed per top-level package (pydantic loads some submodules lazily).
            package = name.split(".")[0]
            found[package] = found.get(package, 0) + cumulative
    ranked = sorted(found.items(), key=lambda item: -item[1])[:limit]
    return [{"module": name, "ms": us / 1000.0} for name, us in ranked]


_HEAVY_ROOTS = (
    "pydantic",
    "httpx",
    "IPython",
    "ipywidgets",
    "numpy",
    "tomlkit",
    "matplotlib",
    "jupyter_server",
)
_ENGINE_SCRIPT = "import supercontext_lab; supercontext_lab.Thread"
_PROFILE_SCRIPT = (
    f"import sys, json; {_ENGINE_SCRIPT}; "
    f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({_HEAVY_ROOTS!r}))))"
)


def _import_time(repeats: int, env: dict[str, str], cwd: str) -> dict[str, Any]:
    python = sys.executable
    bare = [python, "-c", "pass"]
    package = [python, "-c", "import supercontext_lab"]
    # The package imports its engine lazily; a first real use (here Thread) pays for it.
    engine = [python, "-c", _ENGINE_SCRIPT]
    if repeats > 1:
        for args in (package, engine, bare):  # warm the file system cache and bytecode
            _wall(args, env, cwd)
    bare_s: list[float] = []
    package_s: list[float] = []
    engine_s: list[float] = []
    for _ in range(repeats):
        bare_s.append(_wall(bare, env, cwd))
        package_s.append(_wall(package, env, cwd))
        engine_s.append(_wall(engine, env, cwd))
    diffs = [p - b for p, b in zip(package_s, bare_s, strict=True)]
    engine_diffs = [e - b for e, b in zip(engine_s, bare_s, strict=True)]
    profile = subprocess.run(
        [python, "-X", "importtime", "-c", _PROFILE_SCRIPT],
        env=env,
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return {
        "_diff": summarize(diffs),
        "_engine_diff": summarize(engine_diffs),
        "_bare": summarize(bare_s),
        "_package": summarize(package_s),
        "_engine": summarize(engine_s),
        "heaviest": heaviest_imports(profile.stderr),
        "heavy_packages_loaded": json.loads(profile.stdout.strip().splitlines()[-1]),
    }


def extension_available() -> bool:
    """Whether the notebook layer's extension module exists yet."""
    try:
        return importlib.util.find_spec("supercontext_lab.lab.extension") is not None
    except (ImportError, ValueError):
        return False


def _load_ext(repeats: int, env: dict[str, str], cwd: str) -> dict[str, Any]:
    samples: list[float] = []
    walls: list[float] = []
    loaded = True
    magics: list[str] = []
    warm = 1 if repeats > 1 else 0  # a first run warms caches and is not counted
    for _ in range(repeats + warm):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _LOAD_EXT_SCRIPT],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return {"error": f"%load_ext failed: {last}"}
        payload = json.loads(done.stdout.strip().splitlines()[-1])
        loaded = loaded and bool(payload["loaded"])
        magics = payload["magics"]
        samples.append(float(payload["seconds"]))
        walls.append(wall)
    return {
        "_load": summarize(samples[warm:]),
        "_wall": summarize(walls[warm:]),
        "loaded": loaded,
        "magics": magics,
    }


def run(
    *,
    import_repeats: int = 15,
    load_ext_repeats: int = 7,
    log: Callable[[str], None] = print,
) -> Section:
    """Measure the import and the extension load in fresh interpreters."""
    env = dict(os.environ)
    area = "Start-up"
    targets: list[Target] = []
    data: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="scl-bench-import-") as cwd:
        log(f"imports: {import_repeats} × (python -c pass, python -c 'import supercontext_lab')")
        imp = _import_time(import_repeats, env, cwd)
        diff: Summary = imp["_diff"]
        bare: Summary = imp["_bare"]
        package: Summary = imp["_package"]
        added_ms = diff.median * 1000.0
        targets.append(
            Target(
                area,
                f"`import supercontext_lab` adds ≤ {TARGET_IMPORT_MS:g} ms over a bare interpreter",
                f"{_signed(diff.median)} (paired p5–p95 {fmt_ms(diff.p5)}–{fmt_ms(diff.p95)}, "
                f"n={diff.n})",
                f"bare `python -c pass` {fmt_ms(bare.median)}",
                f"{package.median / bare.median:.2f}× a bare start",
                judge(added_ms, TARGET_IMPORT_MS, at_most=True),
                round(added_ms, 3),
                TARGET_IMPORT_MS,
            )
        )
        engine_diff: Summary = imp["_engine_diff"]
        engine: Summary = imp["_engine"]
        data["import"] = {
            "added_ms": diff.scaled(1000.0).to_dict(),
            "engine_added_ms": engine_diff.scaled(1000.0).to_dict(),
            "engine_script": _ENGINE_SCRIPT,
            "bare_ms": bare.scaled(1000.0).to_dict(),
            "with_package_ms": package.scaled(1000.0).to_dict(),
            "with_engine_ms": engine.scaled(1000.0).to_dict(),
            "heaviest_imports": imp["heaviest"],
            "heavy_packages_loaded": imp["heavy_packages_loaded"],
        }
        if not extension_available():
            targets.append(
                Target(
                    area,
                    f"`%load_ext supercontext_lab` ≤ {TARGET_LOAD_EXT_MS:g} ms",
                    "pending: supercontext_lab.lab.extension does not exist yet",
                    status=PENDING,
                    limit=TARGET_LOAD_EXT_MS,
                )
            )
            data["load_ext"] = {"status": "pending"}
        else:
            log(f"imports: {load_ext_repeats} × %load_ext supercontext_lab in a fresh shell")
            ext = _load_ext(load_ext_repeats, env, cwd)
            if "error" in ext:
                targets.append(
                    Target(
                        area,
                        f"`%load_ext supercontext_lab` ≤ {TARGET_LOAD_EXT_MS:g} ms",
                        ext["error"],
                        status=MISS,
                        limit=TARGET_LOAD_EXT_MS,
                    )
                )
                data["load_ext"] = {"status": "failed", "error": ext["error"]}
            else:
                load: Summary = ext["_load"]
                wall: Summary = ext["_wall"]
                ms = load.median * 1000.0
                targets.append(
                    Target(
                        area,
                        f"`%load_ext supercontext_lab` ≤ {TARGET_LOAD_EXT_MS:g} ms",
                        f"{fmt_ms(load.median)} (p5–p95 {fmt_ms(load.p5)}–{fmt_ms(load.p95)}, "
                        f"n={load.n}); whole process {fmt_ms(wall.median)}",
                        "—",
                        "—",
                        judge(ms, TARGET_LOAD_EXT_MS, at_most=True) if ext["loaded"] else MISS,
                        round(ms, 3),
                        TARGET_LOAD_EXT_MS,
                    )
                )
                data["load_ext"] = {
                    "status": "measured",
                    "load_ext_ms": load.scaled(1000.0).to_dict(),
                    "process_wall_ms": wall.scaled(1000.0).to_dict(),
                    "magics": ext["magics"],
                }
    section = Section("startup", "Start-up", data, targets)
    rows = [
        ("python -c pass", fmt_ms(bare.median), f"{fmt_ms(bare.p5)}–{fmt_ms(bare.p95)}", "—"),
        (
            "python -c 'import supercontext_lab'",
            fmt_ms(package.median),
            f"{fmt_ms(package.p5)}–{fmt_ms(package.p95)}",
            _signed(diff.median),
        ),
        (
            f"python -c '{_ENGINE_SCRIPT}'",
            fmt_ms(engine.median),
            f"{fmt_ms(engine.p5)}–{fmt_ms(engine.p95)}",
            _signed(engine_diff.median),
        ),
    ]
    section.details.append(
        markdown_table(("Process", "Wall median", "p5–p95", "Added (paired median)"), rows)
    )
    heaviest = ", ".join(f"`{item['module']}` {item['ms']:.0f} ms" for item in imp["heaviest"][:6])
    section.details.append(
        f"Where the time of `{_ENGINE_SCRIPT}` goes (one `-X importtime` run, which "
        "inflates figures; packages with what they import, the package's own modules by "
        f"self time): {heaviest}."
    )
    return section
