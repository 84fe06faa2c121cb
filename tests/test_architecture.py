"""Architecture rules as tests: light imports, a complete public surface, one error tree."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import supercontext_lab
from supercontext_lab import errors

JUPYTER_MODULES = (
    "IPython",
    "ipywidgets",
    "ipykernel",
    "jupyter_server",
    "tornado",
    "traitlets",
    "jupyter_ai_persona_manager",
    "jupyterlab_chat",
)

SPEC_NAMES = [
    "extract_context_bundle",
    "parse_context_bundle",
    "ContextBundle",
    "RecommendedToolCall",
    "RecommendedSkill",
    "parse_has_enough_context",
    "parse_proposed_goal",
    "fit_bundle",
    "get_super_context_enabled",
    "set_super_context_enabled",
    "should_run_super_context",
    "super_context_skip_reason",
    "AgentDefinition",
    "default_agent_definition",
    "load_agent_definition",
    "AgentDefinitionError",
    "SupercontextError",
    "MemoryTree",
    "MemoryHit",
    "Thread",
    "TurnResult",
]


def _core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(supercontext_lab.__path__, "supercontext_lab."):
        if ".lab" in info.name or info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def test_import_loads_no_jupyter_module() -> None:
    code = (
        "import sys, json, supercontext_lab;"
        f"print(json.dumps([m for m in {JUPYTER_MODULES!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_core_modules_import_no_jupyter_module() -> None:
    modules = _core_modules()
    code = (
        "import importlib, sys, json\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(json.dumps([m for m in {JUPYTER_MODULES!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def _isort_key(name: str) -> tuple[int, str]:
    if name.isupper():
        return (0, name)
    if name[0].isupper():
        return (1, name)
    return (2, name)


def test_all_is_sorted_and_complete() -> None:
    names = supercontext_lab.__all__
    assert names == sorted(names, key=_isort_key)
    assert len(set(names)) == len(names)
    for name in SPEC_NAMES:
        assert name in names, name
    for name in names:
        assert getattr(supercontext_lab, name) is not None, name


def test_every_public_exception_is_in_the_tree() -> None:
    found = []
    for module_name in _core_modules():
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module_name
                and not name.startswith("_")
            ):
                found.append(obj)
    assert errors.ModelError in found
    for cls in found:
        assert issubclass(cls, errors.SupercontextError), cls


@pytest.mark.parametrize("name", errors.__all__)
def test_error_module_classes_subclass_the_root(name: str) -> None:
    assert issubclass(getattr(errors, name), errors.SupercontextError)


def test_error_tree_is_drawn_in_the_docstring() -> None:
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        assert name in doc, name


@pytest.mark.parametrize("package", ["supercontext_lab", "supercontext_lab.eval"])
def test_lazy_exports_match_the_type_checking_imports(package: str) -> None:
    """Type checkers read the TYPE_CHECKING imports, the runtime reads _EXPORTS: one list."""
    module = importlib.import_module(package)
    source = inspect.getsource(module)
    tree = ast.parse(source)
    imported: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom) and item.level == 1, ast.dump(item)
                imported[item.module or ""] = tuple(a.name for a in item.names)
    exports = module._EXPORTS
    assert {k: sorted(v) for k, v in imported.items()} == {k: sorted(v) for k, v in exports.items()}
    for names in exports.values():
        for name in names:
            assert name in module.__all__, name
            assert getattr(module, name) is not None


# Small modules with clear names: a module past this many lines is split along its seams.
MAX_MODULE_LINES = 450


def test_modules_stay_small() -> None:
    root = Path(supercontext_lab.__file__).resolve().parent
    grown = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            grown.append(
                f"{rel}: {lines} lines (at most {MAX_MODULE_LINES}); split it along a seam"
            )
    assert grown == []
