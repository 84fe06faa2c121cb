"""IPython magics: ``%supercontext``, ``%scout_thread``, ``%%chat``, ``%%scout``, ``%agent_toml``.

The magics are thin: they parse arguments (``IPython.core.magic_arguments``, so ``%name?``
shows the help), call the engine (:class:`~supercontext_lab.harness.Thread`, its
``run_scout``, ``load_agent_definition``, ``super_context_status``) and display the
results. User mistakes become :class:`~IPython.core.error.UsageError` with one line; any
other exception is a bug and keeps its traceback.

:class:`SupercontextMagics` is what ``%load_ext supercontext_lab`` registers: the thread
magics of :mod:`.thread_magics` (``%supercontext``, ``%scout_thread``, ``%%chat``) and the
scout and editor magics of :mod:`.scout_magics` (``%%scout``, ``%agent_toml``) as one
object, so they share the options and the kernel's state of :mod:`.magic_state`; the
options are set with ``%config SupercontextMagics.<option>``.
"""

from __future__ import annotations

from IPython.core import magic

from .scout_magics import ScoutMagics
from .thread_magics import ThreadMagics

__all__ = ["SupercontextMagics"]


@magic.magics_class
class SupercontextMagics(ThreadMagics, ScoutMagics):
    """The supercontext_lab magics and the state they share in one kernel."""


# magics_class gives a class the magics decorated in its own body, and this one has none:
# the table registered is the union of its parts' tables.
SupercontextMagics.magics = {
    kind: {**ThreadMagics.magics[kind], **ScoutMagics.magics[kind]} for kind in magic.magic_kinds
}
