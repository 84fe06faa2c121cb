"""``supercontext-lab memory``: past conversations in a workspace's memory (SPEC §15).

    supercontext-lab memory import FILE --workspace DIR [--format auto|chatgpt|jupyter-chat|openai-jsonl|longmemeval|thread] [--json]
    supercontext-lab memory list --conversations [--workspace DIR] [--json]
    supercontext-lab memory forget --conversation ID [--workspace DIR] [--json]

``import`` stores each conversation of a chat export (id, title, date, turns) under the
workspace's ``.supercontext/`` and indexes its turns in the memory tree's
``conversations`` namespace; the user's notes are never written. Importing the same file
again changes nothing; a conversation that takes the place of a different one stored
under the same id is said on a ``replaced:`` line; a file that cannot be read is one
line on stderr, exit 2, and nothing of it is imported. ``list --conversations`` lists
them, newest first (``list`` alone counts the memory's documents by namespace);
``forget`` erases one (see :func:`~supercontext_lab.conversations.forget_conversation`).
Everything
printed from a file goes through :func:`~.common.emit`, so control characters in a title
never reach the terminal.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import PROG, UsageProblem, emit, emit_json, text_argument

if TYPE_CHECKING:
    from ..sources.workspace import Workspace

__all__ = ["add_memory_parser"]


def add_memory_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``memory`` command (``import``, ``list``, ``forget``) to the CLI's subparsers."""
    from ..conversations import FORMATS

    parser: argparse.ArgumentParser = sub.add_parser(
        "memory", help="past conversations in a workspace's memory: import, list, forget"
    )
    inner = parser.add_subparsers(dest="memory_command", required=True, parser_class=type(parser))
    importer = inner.add_parser(
        "import",
        help="import a chat export as past conversations",
        description="Import the conversations of a chat export into the workspace: each "
        "one is stored under .supercontext/ (id, title, date, turns) and its turns indexed "
        "in the memory's 'conversations' namespace, where the scout recalls them and a "
        "bundle cites them as (transcript: <id>). Formats: ChatGPT's conversations.json, a "
        "jupyterlab-chat .chat file, OpenAI chat messages (one conversation, or one message "
        "with a conversation_id, an object: a line each, spread over lines or in a list), "
        "LongMemEval's JSON, a thread saved by the lab. Importing the same file again "
        "changes nothing; a conversation replacing a different one under the same id is "
        "said on a 'replaced:' line. Exit 0 when imported, 2 for "
        "bad input (nothing is imported then).",
    )
    importer.add_argument("file", help="the export file")
    importer.add_argument("--workspace", required=True, help="the workspace folder")
    importer.add_argument(
        "--format",
        default="auto",
        choices=["auto", *FORMATS],
        help="the export's format (default: told from the content)",
    )
    importer.add_argument("--json", action="store_true", help="print one JSON object")
    importer.set_defaults(handler=_cmd_import)

    lister = inner.add_parser(
        "list",
        help="list the past conversations (--conversations) or count the memory's documents",
        description="With --conversations, list the workspace's past conversations, newest "
        "first: id, date, number of turns, where they came from and title. Without it, "
        "count the memory's documents by namespace.",
    )
    lister.add_argument("--conversations", action="store_true", help="list the past conversations")
    lister.add_argument("--workspace", help="a workspace folder (default: the shipped demo)")
    lister.add_argument("--json", action="store_true", help="print one JSON object")
    lister.set_defaults(handler=_cmd_list)

    forget = inner.add_parser(
        "forget",
        help="remove one past conversation",
        description="Remove the past conversation ID from the workspace and erase it: "
        "from the store under .supercontext/ and the memory index, with no byte of it left "
        "in their files, and from the lab home's cached model replies and evaluation "
        "results built from it. Exit 0 when it was removed, 1 when the workspace holds no "
        "conversation ID (the caches are erased either way).",
    )
    forget.add_argument("--conversation", required=True, metavar="ID", help="its id")
    forget.add_argument("--workspace", help="a workspace folder (default: the shipped demo)")
    forget.add_argument("--json", action="store_true", help="print one JSON object")
    forget.set_defaults(handler=_cmd_forget)
    return parser


def _workspace(path: str | None) -> Workspace:
    from ..errors import WorkspaceError
    from ..sources.demo import open_workspace

    if path is not None and not Path(path).is_dir():
        raise UsageProblem(f"{PROG}: workspace folder not found: {path}")
    try:
        return open_workspace(path)
    except WorkspaceError as exc:
        raise UsageProblem(f"{PROG}: {exc}") from None


def _cmd_import(args: argparse.Namespace) -> int:
    from ..conversations import import_conversations

    workspace = _workspace(args.workspace)
    file = text_argument(args.file, "the file name")
    report = import_conversations(file, workspace, format=args.format)
    if args.json:
        emit_json({"workspace": str(workspace.root), **report.to_dict()})
        return 0
    emit(f"imported: {report.summary()}")
    for line in report.replacements:
        emit(f"replaced: {line}")
    for line in report.skipped:
        emit(f"skipped: {line}")
    emit(f"workspace: {workspace.root}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    # Before the memory opens: importing the past conversations registers how a rebuilt
    # index gets them back (conversations.recall), so the counts below include them.
    from ..conversations import list_conversations

    workspace = _workspace(args.workspace)
    if not args.conversations:
        memory = workspace.memory
        counts = {name: memory.count(name) for name in memory.namespaces()}
        if args.json:
            emit_json({"workspace": str(workspace.root), "namespaces": counts})
            return 0
        emit(f"workspace: {workspace.root}")
        for name, count in counts.items():
            emit(f"{name}: {count} document{'' if count == 1 else 's'}")
        if not counts:
            emit("(the memory holds no documents)")
        return 0
    found = list_conversations(workspace)
    if args.json:
        emit_json({"workspace": str(workspace.root), "conversations": [c.to_dict() for c in found]})
        return 0
    emit(f"workspace: {workspace.root}")
    for info in found:
        date = (info.date or "")[:10] or "----------"
        turns = f"{info.turns} turn{'' if info.turns == 1 else 's'}"
        emit(f"{info.id}  {date}  {turns:>9}  {info.source:<12}  {info.title}")
    if not found:
        emit("(no past conversations; import some with: supercontext-lab memory import)")
    return 0


def _cmd_forget(args: argparse.Namespace) -> int:
    from ..conversations import forget_conversation

    workspace = _workspace(args.workspace)
    ident = text_argument(args.conversation, "--conversation")
    removed = forget_conversation(ident, workspace)
    if args.json:
        emit_json({"workspace": str(workspace.root), "conversation": ident, "removed": removed})
    elif removed:
        emit(f"forgotten: {ident}")
    else:
        emit(f"{PROG}: no past conversation {ident!r} in {workspace.root}", err=True)
    return 0 if removed else 1
