"""Bounded reading of untrusted JSON: the public face of the package's input limits.

Every JSON and TOML text the lab reads is checked for size and nesting before a parser
sees it; the rules live in one private helper (``supercontext_lab._bounded``). A front end
that reads a text of its own (the Jupyter server extension reads request bodies) uses
:func:`json_loads` from here and tells the refusals apart by the type of
:class:`~supercontext_lab.errors.InputLimitError` raised, never by its message.
"""

from __future__ import annotations

from ._bounded import MAX_DEPTH, json_loads

__all__ = ["MAX_DEPTH", "json_loads"]
