"""What the runs of one evaluation share inside one process.

Building things per run is what an evaluation used to spend its CPU on: a model (and its
HTTP client), a :class:`Workspace` (its files parsed again, its memory index synced
again) and a connection to the response cache. An :class:`EvalSession` keeps one
workspace per folder, one response cache connection, and one model per variant per
thread (a thread runs one scout at a time, so its model is never used by two runs at
once, whatever the model's own thread safety).

:func:`~supercontext_lab.eval.runner.evaluate` opens a session and registers it under an
id that travels with every task. A task that runs in another process (a Dask worker)
finds no session of that id there and works in a session of its own, opened and closed
around that one task, which is what every task did before sessions existed.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from ..conversations import import_conversations
from ..errors import WorkspaceError
from ..models.base import ChatModel
from ..models.cache import CacheMode, ResponseCache
from ..routes import ModelRoute
from ..sources.demo import demo_workspace_path, is_packaged, packaged_workspace_path
from ..sources.workspace import Workspace
from .results import ResultStore
from .variants import VariantSpec

__all__ = ["EvalSession", "open_task_workspace", "session_for"]

_SESSIONS: dict[str, EvalSession] = {}
_SESSIONS_LOCK = threading.Lock()


def open_task_workspace(path: str, demo: bool) -> Workspace:
    """The workspace of a task: ``path``, or for the demo workspace on a machine that does
    not have the client's copy, a copy of its own (the content is the same shipped one);
    a workspace inside the installed package is read from its copy in the lab home."""
    if demo and not Path(path).is_dir():
        return Workspace(demo_workspace_path())
    if is_packaged(path):
        # A workspace of a shipped dataset: its index is built in a copy, never in the
        # installed package.
        copy = packaged_workspace_path(path)
        _import_shipped_chats(copy)
        return Workspace(copy)
    return Workspace(path)


SHIPPED_CHATS_DIR = "imports"
"""The folder of a shipped dataset's workspace holding chat exports (a ChatGPT
``conversations.json``, …) that are its past conversations: imported into the copy an
evaluation reads, as its user would have imported them."""


def _import_shipped_chats(copy: Path) -> None:
    folder = copy / SHIPPED_CHATS_DIR
    if not folder.is_dir():
        return
    for export in sorted(folder.iterdir()):
        if export.is_file():
            # Importing the same export again changes nothing, so a reused copy costs a
            # read of the file and no write.
            import_conversations(export, copy)


def _warm(workspace: Workspace) -> None:
    # Read every cached part now, in one thread, so the runs that share the workspace only
    # ever read it. A part that fails is left unread: the run that needs it raises the same
    # error it always did, and a variant that never touches it is not stopped by it.
    parts: tuple[Callable[[], object], ...] = (
        lambda: workspace.profile_md,
        lambda: workspace.memory_md,
        lambda: workspace.flavour,
        lambda: workspace.skills,
        lambda: workspace.registry,
        lambda: workspace.integrations,
        lambda: workspace.orchestrator_tools,
        lambda: workspace.memory,
    )
    for read in parts:
        with contextlib.suppress(WorkspaceError):
            read()


class EvalSession:
    """Workspaces, models, the response cache and the result store shared by the runs of
    one evaluation.

    ``cache_path`` is opened when ``cache_mode`` is not ``"off"``. Use it as a context
    manager: entering registers it (tasks find it by :attr:`id`), leaving closes the
    models it built, the workspaces' memory indexes and the cache connections.
    """

    def __init__(self, *, cache_path: str | None, cache_mode: CacheMode) -> None:
        self.id = uuid.uuid4().hex
        self.cache_mode: CacheMode = cache_mode
        self.cache: ResponseCache | None = None
        self.results: ResultStore | None = None
        if cache_mode != "off" and cache_path:
            self.cache, self.results = ResponseCache(cache_path), ResultStore(cache_path)
        self._workspaces: dict[str, Workspace] = {}
        self._workspace_lock = threading.Lock()
        self._local = threading.local()
        self._models: list[ChatModel] = []
        self._models_lock = threading.Lock()

    def workspace(self, path: str, demo: bool = False, *, warm: bool = False) -> Workspace:
        """The one :class:`Workspace` of ``path`` in this session; ``warm`` reads every part
        of it now."""
        with self._workspace_lock:
            workspace = self._workspaces.get(path)
            if workspace is None:
                workspace = open_task_workspace(path, demo)
                self._workspaces[path] = workspace
                if warm:
                    _warm(workspace)
        return workspace

    def model(self, spec: VariantSpec) -> ChatModel:
        """The calling thread's model for the variant. A ``model_factory`` variant gets a
        fresh model every time (its factory promises one per run, and a scripted model is
        used up by a run); a route variant's model is built once per thread."""
        if spec.model_factory is not None:
            return spec.model_factory()
        models: dict[str, ChatModel] = self._local.__dict__.setdefault("models", {})
        model = models.get(spec.name)
        if model is None:
            from ..models.routing import model_for_route

            model = model_for_route(ModelRoute.model_validate(spec.route or {}), role="scout")
            models[spec.name] = model
            with self._models_lock:
                self._models.append(model)
        return model

    def orchestrator(self, route: ModelRoute) -> ChatModel:
        """The calling thread's orchestrator model for ``route`` (an end-to-end
        evaluation's), built once per thread."""
        from .._hashing import canonical_json
        from ..models.routing import model_for_route

        models: dict[str, ChatModel] = self._local.__dict__.setdefault("orchestrators", {})
        key = canonical_json(route.model_dump())
        model = models.get(key)
        if model is None:
            model = model_for_route(route, role="orchestrator")
            models[key] = model
            with self._models_lock:
                self._models.append(model)
        return model

    def close(self) -> None:
        """Close what the session opened (idempotent)."""
        with _SESSIONS_LOCK:
            if _SESSIONS.get(self.id) is self:
                del _SESSIONS[self.id]
        with self._models_lock:
            models, self._models = self._models, []
        for model in models:
            model.close()
        with self._workspace_lock:
            workspaces, self._workspaces = list(self._workspaces.values()), {}
        for workspace in workspaces:
            # Only an index that was opened is closed; reading .memory would open one.
            tree = workspace.__dict__.get("memory")
            if tree is not None:
                tree.close()
        if self.cache is not None:
            self.cache.close()
        if self.results is not None:
            self.results.close()

    def __enter__(self) -> EvalSession:
        with _SESSIONS_LOCK:
            _SESSIONS[self.id] = self
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def session_for(
    session_id: str, *, cache_path: str | None, cache_mode: CacheMode
) -> tuple[EvalSession, bool]:
    """The registered session ``session_id``, or a new one for a single task; the flag says
    whether the caller owns it (and must close it)."""
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(session_id)
    if session is not None:
        return session, False
    return EvalSession(cache_path=cache_path, cache_mode=cache_mode), True
