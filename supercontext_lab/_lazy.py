"""Lazy package exports (PEP 562): a public name's module is imported on first access.

A package lists its exports once, by module, and hands back the ``__getattr__`` and
``__dir__`` made here::

    _EXPORTS = {"harness": ("Thread", "TurnResult"), ...}
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

``import package`` then stays cheap, and a script pays only for the names it touches.
Type checkers read the same names from an ``if TYPE_CHECKING:`` block of imports, which
tests/test_architecture.py holds equal to ``_EXPORTS``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` exporting ``exports`` lazily.

    ``exports`` maps a submodule (relative to ``package``) to the names it defines;
    ``namespace`` is the package's ``globals()``, where each value is kept once loaded.
    """
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())) | set(where))

    return __getattr__, __dir__
