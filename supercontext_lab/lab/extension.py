"""``%load_ext supercontext_lab``: register (and unregister) the lab's magics.

:class:`~supercontext_lab.lab.magics.SupercontextMagics` is always registered; the
evaluation magics (``EvalMagics`` in :mod:`supercontext_lab.lab.eval_magics`) are
registered too when that module is present.
"""

from __future__ import annotations

import importlib
import importlib.util
import types
from typing import Any

__all__ = ["load_ipython_extension", "unload_ipython_extension"]

_EVAL_MODULE = "supercontext_lab.lab.eval_magics"


def _magics_classes() -> list[type[Any]]:
    from .magics import SupercontextMagics

    classes: list[type[Any]] = [SupercontextMagics]
    if importlib.util.find_spec(_EVAL_MODULE) is not None:
        # Present means it must import: an error there is a bug worth its traceback.
        from .eval_magics import EvalMagics

        classes.append(EvalMagics)
    return classes


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics with ``ipython`` (an InteractiveShell).

    Each magics object is built with the shell as its parent, so ``%config`` and the
    IPython profile configure its options.
    """
    for cls in _magics_classes():
        ipython.register_magics(cls(shell=ipython))


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the magics registered by :func:`load_ipython_extension`."""
    manager = ipython.magics_manager
    for cls in _magics_classes():
        instance = manager.registry.pop(cls.__name__, None)
        if instance is None:
            continue
        for kind, names in instance.magics.items():
            table = manager.magics.get(kind, {})
            for name in names:
                bound = table.get(name)
                if isinstance(bound, types.MethodType) and bound.__self__ is instance:
                    del table[name]
        if instance in ipython.configurables:
            ipython.configurables.remove(instance)
