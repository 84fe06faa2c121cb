"""The layering of docs/architecture.md, held by a test.

Every ``import`` in the package (at module level, inside functions and under
``TYPE_CHECKING`` alike) must point down the layers, or stay inside its own group; and no
imports may form a cycle, whether it is closed at module level, by an import deferred into
a function, or by one under ``TYPE_CHECKING`` (two modules that name each other's types
still cannot be read one without the other), or through a package whose ``__init__``
re-exports the module that closes it. The check reads the source with ``ast``, so
it also covers modules that a plain ``import supercontext_lab`` never loads.

A capability a caller needs is declared on the protocol (``ChatModel.info``), never
probed: no ``getattr``/``hasattr`` with a literal attribute name anywhere in the package,
except the platform constants of :data:`ALLOWED_LITERAL_GETATTR`.

Run ``python tests/test_layers.py DIR`` to check another checkout (``DIR`` holding a
``supercontext_lab`` folder) and print what it finds.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "supercontext_lab"
ROOT = Path(__file__).resolve().parent.parent

# Lowest layer first: a module may import from a lower layer, or from its own group.
# A group is a top-level module or subpackage (its prefix); groups of one layer do not
# import each other, except the contract modules, which form one group.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("errors", "limits")),  # and every private helper (_text, _http, ...)
    ("reading", ("reading",)),
    ("contract", ("bundle", "gate", "config", "routes")),
    ("definitions, sources, models", ("agents", "sources", "models")),
    ("past conversations", ("conversations",)),
    ("tools", ("tools",)),
    ("engine: scout", ("scout",)),
    ("engine: harness", ("harness",)),
    ("evaluation, test doubles", ("eval", "testing")),
    ("integrations: MCP server", ("mcp_server",)),
    ("front ends: command line, lab", ("cli", "lab")),
    ("entry point", ("__main__",)),
)
ONE_GROUP_LAYERS = frozenset({"foundation", "contract"})


@dataclass(frozen=True)
class Import:
    source: str  # importing module, e.g. "sources.web"
    target: str  # imported module, e.g. "tools.base"
    line: int
    module_level: bool
    type_only: bool = False


def _module_name(path: Path, package_dir: Path) -> str:
    parts = list(path.relative_to(package_dir).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, package_dir: Path, known: set[str]) -> list[Import]:
    name = _module_name(path, package_dir)
    is_package = path.name == "__init__.py"
    here = name.split(".") if name else []
    if not is_package:
        here = here[:-1]
    found: list[Import] = []

    def resolve(module: str) -> str | None:
        # "a.b.c" -> the longest prefix that is a module of the package.
        parts = module.split(".")
        while parts:
            candidate = ".".join(parts)
            if candidate in known:
                return candidate
            parts.pop()
        return None

    def visit(nodes: list[ast.stmt], module_level: bool, type_only: bool = False) -> None:
        for node in nodes:
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [
                    alias.name[len(PACKAGE) + 1 :]
                    for alias in node.names
                    if alias.name.startswith(PACKAGE + ".")
                ]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                    module = ".".join([*base, *([node.module] if node.module else [])])
                elif node.module and node.module.startswith(PACKAGE + "."):
                    module = node.module[len(PACKAGE) + 1 :]
                else:
                    module = ""
                if module or node.level:
                    # "from . import x" may name submodules.
                    subs = [f"{module}.{a.name}" if module else a.name for a in node.names]
                    named = [s for s in subs if s in known]
                    targets = named or [module]
            for target in targets:
                resolved = resolve(target) if target else None
                if resolved is not None and resolved != name:
                    found.append(Import(name, resolved, node.lineno, module_level, type_only))
            if isinstance(node, ast.If) and _is_type_checking(node):
                visit(node.body, module_level=False, type_only=True)
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    inner = module_level and not isinstance(
                        node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                    )
                    # Class bodies run at import time; only function bodies are deferred.
                    if isinstance(node, ast.ClassDef):
                        inner = module_level
                    visit([c for c in children if isinstance(c, ast.stmt)], inner, type_only)
            if isinstance(node, ast.ExceptHandler):
                visit(node.body, module_level, type_only)

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    visit(tree.body, module_level=True)
    return found


def package_imports(root: Path) -> list[Import]:
    """Every import between modules of the package found below ``root``."""
    package_dir = root / PACKAGE
    paths = sorted(package_dir.rglob("*.py"))
    known = {_module_name(p, package_dir) for p in paths}
    imports: list[Import] = []
    for path in paths:
        imports.extend(_imports(path, package_dir, known))
    return imports


def _place(module: str) -> tuple[int, str, str] | None:
    """(layer index, layer name, group) of ``module``; ``None`` for the package façade."""
    if not module:
        return None
    top = module.split(".")[0]
    if top.startswith("_") and top != "__main__":
        top = "errors"  # private helper modules (_text, _http, ...) belong to the foundation
    for index, (layer, groups) in enumerate(LAYERS):
        if top in groups:
            group = layer if layer in ONE_GROUP_LAYERS else top
            return index, layer, group
    raise AssertionError(f"module '{module}' is in no layer; add it to LAYERS")


def layer_violations(imports: list[Import]) -> list[str]:
    """Imports that point up the layers or across groups of one layer."""
    problems: list[str] = []
    for imp in imports:
        source, target = _place(imp.source), _place(imp.target)
        if source is None or target is None:
            continue
        if target[0] > source[0]:
            problems.append(
                f"{imp.source}:{imp.line} imports {imp.target}: "
                f"'{source[1]}' must not import the higher layer '{target[1]}'"
            )
        elif target[0] == source[0] and target[2] != source[2]:
            problems.append(
                f"{imp.source}:{imp.line} imports {imp.target}: "
                f"'{source[2]}' and '{target[2]}' share a layer and stay independent"
            )
    return problems


def import_cycles(
    imports: list[Import], *, deferred: bool = False, type_only: bool = False
) -> list[list[str]]:
    """Cycles among module-level imports (each cycle once, as a closed path).

    With ``deferred``, imports inside functions count too: a cycle closed by a lazy
    import is still two modules that cannot be understood one without the other. With
    ``type_only`` as well, so do the imports under ``TYPE_CHECKING``.
    """
    graph: dict[str, set[str]] = {}
    for imp in imports:
        counted = imp.module_level or (deferred and (type_only or not imp.type_only))
        # A package's __init__ importing its own submodules counts too: importing the
        # package runs them, so a module that imports a package needs what it re-exports.
        if counted:
            graph.setdefault(imp.source, set()).add(imp.target)
    cycles: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    cycles.append(cycle)
            elif nxt not in state:
                walk(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)
    return cycles


ALLOWED_LITERAL_GETATTR = frozenset(
    {
        # open() flags some platforms lack (Windows has neither): the fallback is 0.
        ("os", "O_NONBLOCK"),
        ("os", "O_NOCTTY"),
        ("os", "O_NOFOLLOW"),
        ("os", "O_CLOEXEC"),
        # Linux-only flags for walking a folder without reading it.
        ("os", "O_PATH"),
        ("os", "O_DIRECTORY"),
    }
)
"""``(object, attribute)`` pairs a literal ``getattr`` may name: platform constants of
``os``, which exist or not by platform rather than by what an object can do."""


def literal_getattrs(root: Path) -> list[str]:
    """Every ``getattr(obj, "name", ...)`` / ``hasattr(obj, "name")`` in the package below
    ``root`` that is not allowed, as ``module:line getattr(obj, 'name')``."""
    package_dir = root / PACKAGE
    found: list[str] = []
    for path in sorted(package_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                continue
            target, name = ast.unparse(node.args[0]), node.args[1].value
            if (target, name) not in ALLOWED_LITERAL_GETATTR:
                module = _module_name(path, package_dir)
                found.append(f"{module}:{node.lineno} {node.func.id}({target}, {name!r})")
    return found


def test_imports_point_down_the_layers() -> None:
    problems = layer_violations(package_imports(ROOT))
    assert problems == [], "\n".join(problems)


def test_the_reading_path_and_the_contract_import_only_below_them() -> None:
    """The two packages the layout names: the reading path never imports what uses it
    (sources, the engine, the lab), and the envelope contract never imports a source."""
    imports = package_imports(ROOT)
    reading = {
        i.target
        for i in imports
        if i.source.split(".")[0] == "reading" and not i.target.startswith(("reading", "_"))
    }
    assert reading <= {"errors", "limits"}, sorted(reading)
    bundle = {
        i.target
        for i in imports
        if i.source.split(".")[0] == "bundle"
        and i.target.startswith(("sources", "reading", "models", "scout", "harness", "lab"))
    }
    assert bundle == set(), sorted(bundle)


def test_module_level_imports_have_no_cycle() -> None:
    cycles = import_cycles(package_imports(ROOT))
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)


def test_no_cycle_hides_behind_a_deferred_import() -> None:
    cycles = import_cycles(package_imports(ROOT), deferred=True)
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)


def test_no_cycle_hides_behind_a_type_checking_import() -> None:
    cycles = import_cycles(package_imports(ROOT), deferred=True, type_only=True)
    assert cycles == [], "\n".join(" -> ".join(c) for c in cycles)


def test_the_check_sees_an_upward_import_and_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    (package / "sources").mkdir(parents=True)
    (package / "tools").mkdir()
    (package / "lab").mkdir()
    for folder in (package, package / "sources", package / "tools", package / "lab"):
        (folder / "__init__.py").write_text("")
    (package / "lab" / "display.py").write_text("")
    (package / "errors.py").write_text("")
    (package / "sources" / "web.py").write_text("from ..tools.base import ToolResult\n")
    (package / "tools" / "base.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from . import web\n"
        "if TYPE_CHECKING:\n    from ..lab import display\n"
        "def later() -> None:\n    from ..sources import web\n"
    )
    (package / "tools" / "web.py").write_text("from .base import later\n")
    # Two modules naming each other's types: one at module level, one for the checker only.
    (package / "tools" / "records.py").write_text("from .types import Kind\n")
    (package / "tools" / "types.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .records import Record\n"
    )
    imports = package_imports(tmp_path)
    problems = layer_violations(imports)
    assert any("sources.web:1 imports tools.base" in p for p in problems), problems
    assert any("tools.base:5 imports lab" in p for p in problems), problems
    assert not any("tools.base:7" in p for p in problems), problems
    assert import_cycles(imports) == [["tools.base", "tools.web", "tools.base"]]
    assert ["sources.web", "tools.base", "sources.web"] in import_cycles(imports, deferred=True)
    typed = ["tools.records", "tools.types", "tools.records"]
    assert typed not in import_cycles(imports, deferred=True)
    assert typed in import_cycles(imports, deferred=True, type_only=True)


def test_the_check_sees_a_cycle_through_a_package_that_re_exports(tmp_path: Path) -> None:
    # lab.display builds a widget from lab.widgets, whose __init__ re-exports the panel,
    # which names the display's helpers: a circle, though no two modules name each other.
    package = tmp_path / PACKAGE
    (package / "lab" / "widgets").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "lab" / "__init__.py").write_text("")
    (package / "lab" / "widgets" / "__init__.py").write_text("from .panel import Panel\n")
    (package / "lab" / "widgets" / "panel.py").write_text("from ..display import helper\n")
    (package / "lab" / "display.py").write_text(
        "def helper() -> None: ...\ndef widget() -> None:\n    from .widgets import Panel\n"
    )
    imports = package_imports(tmp_path)
    assert import_cycles(imports) == []
    assert import_cycles(imports, deferred=True) == [
        ["lab.display", "lab.widgets", "lab.widgets.panel", "lab.display"]
    ]


def test_no_capability_is_probed_with_getattr() -> None:
    probes = literal_getattrs(ROOT)
    assert probes == [], "declare these on the protocol instead:\n" + "\n".join(probes)


def test_the_check_sees_a_literal_getattr_and_allows_os_constants(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    (package / "scout").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "scout" / "loop.py").write_text(
        "import os\n"
        "flags = getattr(os, 'O_NONBLOCK', 0)\n"
        "def window(model, name):\n"
        "    size = getattr(model, 'context_tokens', None)\n"
        "    other = getattr(model, name)\n"
        "    return hasattr(model, 'stream') or getattr(model.inner, 'close')\n"
    )
    assert literal_getattrs(tmp_path) == [
        "scout.loop:4 getattr(model, 'context_tokens')",
        "scout.loop:6 hasattr(model, 'stream')",
        "scout.loop:6 getattr(model.inner, 'close')",
    ]


def test_every_module_has_a_layer() -> None:
    for imp in package_imports(ROOT):
        _place(imp.source)
        _place(imp.target)


if __name__ == "__main__":
    checkout = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    found = package_imports(checkout)
    for problem in layer_violations(found):
        print("layer:", problem)
    # Each cycle is reported under the first mode that sees it.
    module_level = import_cycles(found)
    seen = {frozenset(c) for c in module_level}
    deferred = [c for c in import_cycles(found, deferred=True) if frozenset(c) not in seen]
    seen |= {frozenset(c) for c in deferred}
    typed = [
        c for c in import_cycles(found, deferred=True, type_only=True) if frozenset(c) not in seen
    ]
    for cycle in module_level:
        print("cycle:", " -> ".join(cycle))
    for cycle in deferred:
        print("cycle through a deferred import:", " -> ".join(cycle))
    for cycle in typed:
        print("cycle through a TYPE_CHECKING import:", " -> ".join(cycle))
    print(
        f"import cycles: {len(module_level)} module-level, {len(deferred)} deferred, "
        f"{len(typed)} TYPE_CHECKING"
    )
    for probe in literal_getattrs(checkout):
        print("probe:", probe)
