"""Past conversations (SPEC §15): imported chat exports and the thread archive.

    from supercontext_lab.conversations import import_conversations

    report = import_conversations("conversations.json", "~/my-workspace")
    print(report.summary())      # 212 conversations from chatgpt (212 added), 4810 turns indexed

A workspace's past conversations are kept in ``.supercontext/conversations.sqlite3``
(:mod:`.store`, the lab's own folder: the user's notes are never written) and each of
their turns is indexed in the memory tree's ``conversations`` namespace, so
``memory_recall`` finds the turn that answers a request and a bundle cites it as
``(transcript: <conversation id>)`` (:mod:`.recall`). They come from chat exports
(:mod:`.formats`: ChatGPT, jupyterlab-chat, OpenAI messages, LongMemEval, the lab's saved
threads; read by :mod:`.reading`) and from every completed turn of a thread
(:mod:`.archive`). Modules: ``records`` (the records and their bounds), ``reading``,
``formats`` (one module a format, behind one registry), ``store`` (made of
``store_file``, ``store_reads`` and ``store_writes``), ``recall``, ``archive``.

Nothing here imports Jupyter.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib import resources

from .._erasure import conversation_tag
from .._sqlite import erase_tagged
from ..models.cache import default_cache_path
from ..sources.workspace import Workspace
from .archive import ARCHIVE_SETTING, archive_enabled, archive_turn
from .formats import parse_export, read_export
from .reading import FORMATS, FormatName, ParsedExport
from .recall import (
    TranscriptHit,
    TurnsAround,
    open_store,
    resolve_hits,
    store_for,
    transcript_text,
    turns_around,
)
from .records import Conversation, Turn, conversation_id
from .store import ConversationStore
from .store_file import CATEGORY, NAMESPACE
from .store_reads import ConversationInfo, StoredTurn
from .store_writes import ImportReport

__all__ = [
    "ARCHIVE_SETTING",
    "CATEGORY",
    "FORMATS",
    "NAMESPACE",
    "Conversation",
    "ConversationInfo",
    "ConversationStore",
    "FormatName",
    "ImportReport",
    "ParsedExport",
    "StoredTurn",
    "TranscriptHit",
    "Turn",
    "TurnsAround",
    "archive_enabled",
    "archive_turn",
    "conversation_id",
    "demo_chat_export_path",
    "erase_cached",
    "forget_conversation",
    "import_conversations",
    "list_conversations",
    "open_store",
    "parse_export",
    "read_export",
    "resolve_hits",
    "store_for",
    "transcript_text",
    "turns_around",
]


def demo_chat_export_path() -> str:
    """The small ChatGPT export shipped with the lab (``demo/chat_export/conversations.json``,
    written for the lab around the demo workspace's persona)."""
    package = resources.files("supercontext_lab")
    return str(package.joinpath("demo").joinpath("chat_export").joinpath("conversations.json"))


def _workspace(workspace: Workspace | str | os.PathLike[str]) -> Workspace:
    return workspace if isinstance(workspace, Workspace) else Workspace(workspace)


def import_conversations(
    path: str | os.PathLike[str],
    workspace: Workspace | str | os.PathLike[str],
    *,
    format: str = "auto",
) -> ImportReport:
    """Import the chat export ``path`` into ``workspace`` (a folder or a
    :class:`~supercontext_lab.Workspace`), all or nothing; importing it again changes
    nothing unless its conversations changed.

    ``format`` is ``auto`` or one of :data:`FORMATS`. Raises
    :class:`~supercontext_lab.errors.ConversationImportError` (one line naming the file)
    for a file it cannot read, with nothing imported.
    """
    parsed = read_export(path, format)
    target = _workspace(workspace)
    store = store_for(target, create=True)
    assert store is not None
    return store.import_conversations(
        parsed.conversations, target.memory, format=parsed.format, skipped=parsed.skipped
    )


def list_conversations(workspace: Workspace | str | os.PathLike[str]) -> list[ConversationInfo]:
    """The past conversations of ``workspace``, newest first (nothing is written)."""
    target = _workspace(workspace)
    store = store_for(target)
    return store.conversations() if store is not None else []


def forget_conversation(conversation: str, workspace: Workspace | str | os.PathLike[str]) -> bool:
    """Remove the past conversation ``conversation`` (its id) from ``workspace`` and erase
    it: from the store and the memory index, with no byte of it left in their files, and
    from the caches of the lab home (the model replies and evaluation results built from
    it). Whether the workspace held it.

    The caches are erased even when it did not, so that forgetting again finishes what an
    interrupted forget left. Raises :class:`~supercontext_lab.errors.CacheError` when a
    cache cannot be written (the workspace's copy is gone then; run it again)."""
    target = _workspace(workspace)
    store = store_for(target)
    removed = store is not None and store.forget(conversation, target.memory)
    erase_cached([conversation_tag(conversation)])
    return removed


def erase_cached(tags: Sequence[str]) -> int:
    """Erase what the caches of the lab home (every store file in the response cache's
    folder) hold of the conversations ``tags``; returns how many entries went."""
    folder = default_cache_path().parent
    if not folder.is_dir() or folder.is_symlink():
        return 0
    return sum(erase_tagged(path, tags) for path in sorted(folder.glob("*.sqlite3")))
