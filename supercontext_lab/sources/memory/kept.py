"""Namespaces that live outside ``memory/`` and come back at once when the index is rebuilt.

A rebuilt index is filled from ``memory/``; documents that no file holds are gone with
the old file. Some of them have a source of truth of their own: the turns of past
conversations are kept in the transcript store, a layer above this one. That layer
registers here how to write a namespace back (:func:`keep_namespace`), so that the tree
that rebuilt its index fills it again before anyone reads it (``memory list`` right after
a rebuild shows the conversations), and the rebuild's warning can say they are not lost.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import SupercontextError

__all__ = ["Kept", "keep_namespace", "kept_namespaces", "restore_kept"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Kept:
    """How one namespace is written back into a rebuilt index."""

    namespace: str
    source: str
    """Where its documents come back from, as the warning names it ("the transcript store")."""
    restore: Callable[[Any], int]
    """Writes the namespace into the :class:`~.tree.MemoryTree` it is given again; returns
    how many documents it wrote. (Typed ``Any``: the tree imports this module.)"""


_lock = threading.Lock()
_kept: dict[str, Kept] = {}


def keep_namespace(kept: Kept) -> None:
    """Register ``kept`` (once per namespace; registering again replaces it)."""
    with _lock:
        _kept[kept.namespace] = kept


def kept_namespaces() -> dict[str, Kept]:
    """The registered namespaces, by name."""
    with _lock:
        return dict(_kept)


def restore_kept(tree: Any) -> int:
    """Write every registered namespace back into ``tree``; a source that fails is logged
    and the others still run (the tree stays usable). Returns how many documents came back."""
    written = 0
    for kept in kept_namespaces().values():
        try:
            written += kept.restore(tree)
        except SupercontextError as exc:
            _log.warning(
                "%r rebuilt its index and could not fill its %s namespace again from %s "
                "(%s); it is filled on the next recall.",
                tree,
                kept.namespace,
                kept.source,
                exc,
            )
    return written
