"""The Jupyter layer of supercontext_lab: magics, widgets, display objects, server extension.

Loaded only by ``%load_ext supercontext_lab`` (:mod:`supercontext_lab.lab.extension`) and by
Jupyter Server (:mod:`supercontext_lab.lab.server`). It renders and edits what the engine
returns; it never re-implements the contract. This package file imports nothing, so that
importing one of its modules loads only what that module needs.
"""
