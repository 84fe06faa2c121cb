"""Print (or write into docs/reliability.md) the table of cases the reliability suite tries.

    python tests/reliability/count_cases.py            # print the table
    python tests/reliability/count_cases.py --write    # refresh docs/reliability.md

Counts are read from the test functions themselves: each ``parametrize`` case counts
once (stacked ones multiply) and a hypothesis test counts its ``max_examples``. Tests
that live elsewhere and belong in the table are listed in ``ELSEWHERE``; each is checked
to exist.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import math
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DOC = REPO / "docs" / "reliability.md"
START = "<!-- reliability-table:start (python tests/reliability/count_cases.py --write) -->"
END = "<!-- reliability-table:end -->"

GROUPS = [
    ("1. Model faults", ["test_model_faults"]),
    ("2. Prompt injection", ["test_injection", "test_forged_structure"]),
    ("3. Fuzzing", ["test_fuzz"]),
    ("4. No data lost", ["test_no_data_lost", "test_corrupt_files"]),
    ("5. Nothing let in", ["test_nothing_let_in"]),
    (
        "6. Hostile workspaces and input",
        ["test_hostile_input", "test_rest_bodies", "test_linear_parsing"],
    ),
    (
        "7. Hostile input at the boundaries",
        [
            "test_linear_parsers",
            "test_document_linear",
            "test_network_bodies",
            "test_open_race",
            "test_terminal_output",
            "test_dataset_boundaries",
            "test_bounded_walks",
            "test_agent_files",
            "test_cache_identity",
            "test_special_files",
        ],
    ),
    (
        "8. Gamed checks, shipped indexes and names",
        [
            "test_gamed_grounding",
            "test_index_trust",
            "test_exports",
            "test_workspace_check",
            "test_resumed_threads",
            "test_panel_invisibles",
            "test_result_keys",
            "test_other_boundaries",
        ],
    ),
    (
        "9. Round 4",
        [
            "test_forgetting",
            "test_conversation_imports",
            "test_cached_envelope",
            "test_secrets_in_chats",
            "test_steered_recommendations",
            "test_workspace_copies",
            "test_notes_of_words",
            "test_model_request_bounds",
            "test_deadline_fallback",
        ],
    ),
]

ELSEWHERE: dict[str, list[tuple[str, str, str]]] = {
    "4. No data lost": [
        (
            "tests/config/test_store_processes.py",
            "test_concurrent_writers_lose_no_update",
            "8 processes flipping the flag 100 times each (and a reader) leave a valid "
            "config.toml with every update",
        ),
    ],
    "5. Nothing let in": [
        (
            "tests/lab/test_server.py",
            "test_unauthenticated_requests_are_refused",
            "the REST endpoint refuses requests without Jupyter's token",
        ),
        (
            "tests/lab/test_server.py",
            "test_a_wrong_token_is_refused",
            "the REST endpoint refuses a wrong token",
        ),
        (
            "tests/lab/widgets/test_panel.py",
            "test_script_from_memory_stays_text_in_every_html_value",
            "widget HTML escapes a script planted in memory",
        ),
        (
            "tests/lab/widgets/test_panel.py",
            "test_script_from_model_output_stays_text_in_every_html_value",
            "widget HTML escapes a script in model output",
        ),
        (
            "tests/lab/test_display.py",
            "test_provenance_of_a_real_run_never_contains_the_key",
            "saved provenance (notebook metadata) never holds the API key",
        ),
        (
            "tests/lab/test_magics.py",
            "test_config_model_routes_the_scout_and_never_leaks_the_key",
            "magics route the scout to a server and never show the key",
        ),
        (
            "tests/eval/test_cache.py",
            "test_the_api_key_is_neither_in_the_key_nor_stored",
            "the response cache neither keys on nor stores the API key",
        ),
    ],
}


@dataclass(frozen=True)
class Row:
    """One test function: what it tries and how many times."""

    name: str
    what: str
    count: int
    unit: str  # "cases" or "examples"


def _modules() -> Iterator[tuple[str, list[ModuleType]]]:
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    for title, names in GROUPS:
        yield title, [importlib.import_module(f"{HERE.name}.{name}") for name in names]


def _what(name: str, func: Callable[..., Any]) -> str:
    doc = inspect.getdoc(func)
    if doc:
        return doc.splitlines()[0].rstrip(".")
    return name.removeprefix("test_").replace("_", " ")


def rows(module: ModuleType) -> list[Row]:
    """One row per test function of ``module``, in source order."""
    found: list[tuple[int, Row]] = []
    for name, func in vars(module).items():
        if not name.startswith("test_") or not callable(func):
            continue
        line = inspect.getsourcelines(inspect.unwrap(func))[1]
        settings = getattr(func, "_hypothesis_internal_use_settings", None)
        if getattr(func, "is_hypothesis_test", False) and settings is not None:
            count, unit = int(settings.max_examples), "examples"
        else:
            marks = [m for m in getattr(func, "pytestmark", []) if m.name == "parametrize"]
            count, unit = math.prod(len(m.args[1]) for m in marks), "cases"
        found.append((line, Row(name, _what(name, func), count, unit)))
    return [row for _, row in sorted(found, key=lambda pair: pair[0])]


def _exists(path: str, name: str) -> bool:
    target = REPO / path
    return target.is_file() and f"def {name}(" in target.read_text(encoding="utf-8")


def build_table() -> str:
    """The markdown table of every group, then the totals."""
    out: list[str] = []
    totals = {"faults": 0, "hostile": 0, "examples": 0, "cases": 0}
    for title, modules in _modules():
        group = [
            (module.__name__.split(".")[-1], row) for module in modules for row in rows(module)
        ]
        out += [f"### {title}", "", "| what is tried | tried | test |", "| --- | ---: | --- |"]
        for module_name, row in group:
            shown = f"{row.count} {row.unit}" if row.count != 1 else f"1 {row.unit[:-1]}"
            out.append(f"| {row.what} | {shown} | `{module_name}::{row.name}` |")
            totals["examples" if row.unit == "examples" else "cases"] += row.count
            if title.startswith("1.") and row.name.startswith("test_turn_survives"):
                totals["faults"] += row.count
            if title.startswith(("2.", "5.", "6.", "7.", "8.", "9.")) and row.unit == "cases":
                totals["hostile"] += row.count
        for path, name, what in ELSEWHERE.get(title, []):
            state = "" if _exists(path, name) else " (missing)"
            out.append(f"| {what} | see test | `{path}::{name}`{state} |")
        cases = sum(row.count for _, row in group if row.unit == "cases")
        examples = sum(row.count for _, row in group if row.unit == "examples")
        parts = [f"{cases} cases"] if cases else []
        parts += [f"{examples} hypothesis examples"] if examples else []
        out += ["", f"Group total: {' and '.join(parts)}.", ""]
        for module in modules:
            note = getattr(module, "CASES_NOTE", None)
            if note:
                out += [note, ""]
    out += [
        "### Totals",
        "",
        f"- faults injected into a full turn: **{totals['faults']}**",
        f"- hostile inputs tried (injection corpus, URLs, paths, echoes, markup, linked "
        f"and special workspace files, parser bombs, REST bodies, quadratic markup, "
        f"lying and compressed bodies, odd charsets, terminal escapes, undecodable "
        f"input, check/open races, datasets naming other folders, linked and special "
        f"agent files, claims built to pass the grounding check, shipped and tampered "
        f"memory indexes, spreadsheet formulas, names forging report lines or hiding "
        f"characters, forgotten secrets, killed updates, exports of one name, JSON "
        f"layouts, planted cached envelopes, keys pasted in old chats, steering chats, "
        f"workspaces copied for a notebook, notes of words, megabyte notes sent to a "
        f"model, 3,000 notes under a 50 ms deadline): "
        f"**{totals['hostile']}**",
        f"- fuzz examples per run: **{totals['examples']}**",
        f"- every case and example together: **{totals['cases'] + totals['examples']}**",
    ]
    return "\n".join(out)


def refreshed(document: str, table: str) -> str:
    """``document`` with the text between the markers replaced by ``table``."""
    head, start, rest = document.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"{DOC}: the table markers are missing; add {START} and {END}.")
    return f"{head}{START}\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"refresh {DOC.name}")
    args = parser.parse_args(argv)
    table = build_table()
    if args.write:
        DOC.write_text(refreshed(DOC.read_text(encoding="utf-8"), table), encoding="utf-8")
        print(f"updated {DOC}")
    else:
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
