"""Keys of the evaluation's stored results (:mod:`.results`): when nothing a run depends
on has changed, the stored result is reused instead of running the scout again.

A case's key is the sha256 of the canonical JSON of everything that decides its run:

* the variant's agent definition, prompt included (``AgentDefinition.fingerprint``);
* the model's identity: the route's kind, base URL (without credentials), model name and
  the settings that change what the server is asked (``native_tool_calling``,
  ``stream``, the bundle format in use, whether the route counts as a small model, which
  decides whether ``prefetch = "auto"`` gathers before the first call), and for a local
  route the model file itself
  (path, size, time and content hash) — never the API key nor the name of its variable;
* the case's ``message`` and ``focus`` (not its id, not its expectations: scores are
  recomputed from the stored bundle, so editing expectations needs no rerun);
* the workspace's content (:func:`workspace_fingerprint`);
* what memory recall reads by meaning (:func:`recall_identity`: the embedder
  ``[memory] semantic`` names, or ``off``);
* the repeat number (repeat *n* is a sample of its own);
* the package's own source (:func:`package_revision`), so a code change reruns everything.

Only route-based variants get keys: a ``model_factory`` is arbitrary code whose model
cannot be identified from outside, so its runs go through the response cache only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._hashing import fingerprint, package_revision
from .._text import strip_userinfo
from ..conversations import open_store
from ..errors import ConversationStoreError, SupercontextError
from ..models.embeddings import configured_embedder
from ..models.gguf import file_identity
from ..models.local import resolve_gguf
from ..routes import ModelRoute
from ..sources.memory import INDEX_DIR

__all__ = [
    "OUTSIDE_TOOLS",
    "case_result_key",
    "model_identity",
    "package_revision",
    "recall_identity",
    "workspace_fingerprint",
]

# Bumped whenever the key payload or the stored record changes shape.
_KEY_VERSION = 5

OUTSIDE_TOOLS = frozenset({"web_fetch", "web_search_tool"})
"""Tools whose answers come from outside the workspace: a run that called one is not
stored, because its key cannot tell whether the web has changed since."""


def model_identity(route: Mapping[str, Any]) -> dict[str, Any]:
    """What names the model a route reaches and how it is asked (no key, no key variable;
    the timeout only decides whether a run fails, and failed runs are never stored).

    A local route's file is resolved and hashed here (once per file version and process),
    without starting its server: a rerun that is served whole must cost nothing.
    """
    parsed = ModelRoute.model_validate(dict(route))
    if parsed.kind == "offline":
        return {"kind": "offline"}
    identity: dict[str, Any] = {
        "kind": parsed.kind,
        "base_url": strip_userinfo(parsed.base_url or ""),
        "model": parsed.model,
        "native_tool_calling": parsed.native_tool_calling,
        "stream": parsed.stream,
        "bundle_format": parsed.resolved_bundle_format(),
        # With prefetch = "auto" a small model gets a gathering round before its first
        # call: another conversation, so another run.
        "small_model": parsed.counts_as_small(),
    }
    window = parsed.resolved_context_tokens()
    if window is not None:
        # Another window cuts what the model is sent: another conversation. Named only
        # when declared, so the keys of routes without one stay as they were.
        identity["context_tokens"] = window
    if parsed.kind == "local":
        identity["file"] = file_identity(resolve_gguf(parsed.model))
    return identity


def _walk(root: str) -> list[tuple[str, int, int]]:
    """Every file under ``root`` as ``(relative path, size, mtime)``, walked with a list of
    folders still to read rather than by recursion: a tree nested thousands of folders deep
    is walked like a shallow one."""
    out: list[tuple[str, int, int]] = []
    pending = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            if not prefix and entry.name == INDEX_DIR:
                continue
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, rel + "/"))
                    continue
                info = entry.stat(follow_symlinks=True)
            except OSError:
                # A dangling link or a file that vanished: its absence is part of the content.
                out.append((rel, -1, -1))
                continue
            out.append((rel, info.st_size, info.st_mtime_ns))
    return out


def workspace_fingerprint(root: str | os.PathLike[str]) -> str:
    """The sha256 of a workspace folder's name and of every file's relative path, size and
    modification time (``.supercontext/``, the lab's own index, left out), and of the past
    conversations it holds (the transcript store's revision), when it holds any.

    Linked folders are not entered, as the workspace's readers do not enter them; a linked
    file counts with its target's size and time. The walk does not recurse, so no depth
    of folders ends it in a ``RecursionError``.
    """
    path = Path(root)
    # Names that are not UTF-8 keep their bytes as surrogates; JSON escapes them.
    content: list[Any] = [path.name, sorted(_walk(str(path)))]
    conversations = _conversations_revision(path)
    if conversations is not None:
        content.append({"conversations": conversations})
    return fingerprint(content)


def _conversations_revision(root: Path) -> str | None:
    """The revision of the workspace's past conversations; ``None`` when it has none (a
    store that cannot be read is a revision of its own: its runs are not reused)."""
    try:
        store = open_store(root, create=False)
    except ConversationStoreError as exc:
        return f"unreadable: {exc}"
    if store is None:
        return None
    try:
        return store.revision()
    finally:
        store.close()


def recall_identity() -> str:
    """The identity of the embedder ``[memory] semantic`` names (``"off"`` for none; a
    setting that cannot be used, the reason, as the run then recalls by words alone). No
    model is loaded to tell it."""
    try:
        embedder = configured_embedder()
    except SupercontextError as exc:
        return f"unusable: {exc}"
    return "off" if embedder is None else embedder.identity


def case_result_key(
    *,
    definition: str,
    model: Mapping[str, Any],
    message: str,
    focus: str | None,
    workspace: str,
    repeat: int,
    recall: str = "off",
) -> str:
    """The key of one run: ``definition`` from ``AgentDefinition.fingerprint()``, ``model``
    from :func:`model_identity`, ``workspace`` from :func:`workspace_fingerprint`,
    ``recall`` from :func:`recall_identity`."""
    payload = {
        "v": _KEY_VERSION,
        "package": package_revision(),
        "definition": definition,
        "model": dict(model),
        "message": message,
        "focus": focus,
        "workspace": workspace,
        "repeat": repeat,
        "recall": recall,
    }
    return fingerprint(payload)
