"""The options and the per-kernel state that the lab's magics share, and how a magic turns
them into a workspace, an agent definition, a scout model and a thread.

The options are traitlets with ``config=True``, settable with ``%config``::

    %config SupercontextMagics.workspace = "~/my-workspace"
    %config SupercontextMagics.model = "local:smollm2"     # the scout and the reply
    %config SupercontextMagics.archive = False             # threads archive nothing

``model`` is the one switch for both of a thread's models; ``scout_model`` or
``orchestrator_model``, when set, take that one role apart. ``archive`` decides whether
the threads started here keep their turns among the workspace's past conversations (the
lab's config when unset).

A magic given no ``--workspace`` uses the kernel's current workspace: the current thread's
(``%scout_thread new --workspace DIR`` makes it current), or the folder set with
``%config SupercontextMagics.workspace`` when that was set after the thread started, else
the shipped demo. Every panel names the workspace it searched.

The thread magics (:mod:`.thread_magics`) and the scout and editor magics
(:mod:`.scout_magics`) both build on :class:`MagicState`, so one kernel has one current
thread and one current workspace whichever magic is run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from IPython.core import magic
from IPython.core.error import UsageError
from traitlets import Bool, Unicode, observe

from ..agents.definition import AgentDefinition, default_agent_definition, load_agent_definition
from ..errors import ConfigError
from ..harness import Thread
from ..harness.progress import RunProgress, starts_a_server
from ..models.base import ChatModel
from ..models.routing import Role
from ..routes import parse_model_id
from ..scout import ScoutRun
from ..sources.demo import open_workspace
from ..sources.workspace import Workspace

__all__ = ["WORKSPACE_HELP", "MagicState"]

WORKSPACE_HELP = (
    "workspace folder (default: the current thread's, else "
    "SupercontextMagics.workspace, else the shipped demo)"
)
"""The help of every magic's ``--workspace``: where a magic looks when none is given."""

_OTHER: dict[Role, Role] = {"scout": "orchestrator", "orchestrator": "scout"}


def _serverless(model_id: str) -> bool:
    """Whether ``model_id`` names a model that needs no server address (offline, local,
    a baseline)."""
    return model_id.partition(":")[0].strip().lower() in ("offline", "local", "baseline")


class MagicState(magic.Magics):
    """The options of the lab's magics and the state they share in one kernel.

    State: the current thread (``%scout_thread new`` / ``%%chat``), the agent definition
    applied from the editor, and the last explicit message (``%%scout`` or the first
    ``%%chat`` message), which the editor's *Run again* re-runs. It holds no magic of its
    own: :class:`~supercontext_lab.lab.magics.SupercontextMagics` is what is registered.
    """

    workspace = Unicode(
        "",
        help=(
            "Workspace folder used when a magic gets no --workspace and no thread started "
            "since this was set; empty: the current thread's workspace, else the shipped demo."
        ),
    ).tag(config=True)
    model = Unicode(
        "",
        help=(
            "Model id for the scout and the reply of runs and threads made here, such as "
            "'ollama:qwen2.5', 'local:smollm2' (a llama.cpp server on this machine; the local "
            "extra) or 'offline'; empty: the lab's config ([models.burst] for the scout, "
            "[models.agentic] for the reply; `supercontext-lab config model ID` sets both)."
        ),
    ).tag(config=True)
    scout_model = Unicode(
        "",
        help="Model id for the scout alone, in place of `model`; empty: `model`.",
    ).tag(config=True)
    orchestrator_model = Unicode(
        "",
        help="Model id for the reply (the orchestrator) alone, in place of `model`; empty: `model`.",
    ).tag(config=True)
    base_url = Unicode(
        "",
        help=(
            "OpenAI-compatible base URL (with /v1) for the models set here; empty: the "
            "provider default."
        ),
    ).tag(config=True)
    api_key_env = Unicode(
        "",
        help="NAME of the environment variable holding the API key (never the key itself).",
    ).tag(config=True)
    archive = Bool(
        None,
        allow_none=True,
        help=(
            "Whether threads started here keep their turns among the workspace's past "
            "conversations, for later threads to recall; None: the lab's config "
            "([memory] archive_threads, default true). Read when a thread starts."
        ),
    ).tag(config=True)

    # Per-kernel state; class-level defaults, replaced on the instance when set.
    thread: Thread | None = None
    applied_definition: AgentDefinition | None = None
    last_message: str | None = None
    last_focus: str | None = None
    last_run: ScoutRun | None = None
    last_workspace: Workspace | None = None
    composer: Any = None
    editor: Any = None
    # True while the current thread's workspace is the kernel's current workspace: from a
    # thread's start until the workspace option is set again.
    _follow_thread = False

    # -- resolving options -----------------------------------------------------------------

    @observe("workspace")
    def _workspace_set(self, _change: Any) -> None:
        # Set after the thread started: the option is the newer word on where to look.
        self._follow_thread = False

    def _set_thread(self, thread: Thread) -> Thread:
        """Make ``thread`` the current thread; its workspace becomes the kernel's."""
        self.thread = thread
        self._follow_thread = True
        return thread

    def _workspace(self, path: str | None) -> Workspace:
        """``--workspace``, else the current workspace: the current thread's (unless the
        workspace option was set after it started), else the configured folder, else the
        shipped demo."""
        if path:
            return self._open_folder(path, "pass an existing folder with --workspace")
        if self._follow_thread and self.thread is not None:
            return self.thread.workspace
        if self.workspace:
            return self._open_folder(
                self.workspace, "fix it with %config SupercontextMagics.workspace = '<folder>'"
            )
        return open_workspace(None)

    def current_workspace(self) -> Path | None:
        """The folder a magic given no ``--workspace`` reads (see :meth:`_workspace`);
        ``None`` for the shipped demo."""
        if self._follow_thread and self.thread is not None:
            return self.thread.workspace.root
        return Path(self.workspace).expanduser() if self.workspace else None

    @staticmethod
    def _open_folder(path: str, way_out: str) -> Workspace:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise UsageError(f"workspace folder not found: {path}; {way_out}.")
        return open_workspace(folder)

    def _definition(self, path: str | None) -> AgentDefinition:
        """``--agent``, else the definition applied from the editor, else the shipped one."""
        if path is None:
            return self.applied_definition or default_agent_definition()
        file = Path(path).expanduser()
        if not file.is_file():
            raise UsageError(f"agent definition not found: {path}; pass the path of an agent.toml.")
        return load_agent_definition(file)

    def _model_id(self, role: Role) -> str:
        """The model id set for ``role``: its own option, else ``model``; ``""`` for none."""
        own = self.scout_model if role == "scout" else self.orchestrator_model
        return (own or self.model).strip()

    def _role_model(self, role: Role, progress: RunProgress | None = None) -> ChatModel | None:
        """The model of ``role`` from the options; ``None`` lets the thread use its route.
        A local model may start its server here, which ``progress`` is told first."""
        from ..models.routing import model_for_route

        model_id = self._model_id(role)
        if not model_id:
            if (self.base_url or self.api_key_env) and not self._model_id(_OTHER[role]):
                raise ConfigError(
                    "SupercontextMagics.base_url and .api_key_env need a model: set "
                    "%config SupercontextMagics.model = 'ollama:qwen2.5' (or another model id)."
                )
            return None
        base_url, api_key_env = self.base_url or None, self.api_key_env or None
        if _serverless(model_id) and not _serverless(self._model_id(_OTHER[role]) or "offline"):
            base_url = api_key_env = None  # they are the other role's, which has a server
        route = parse_model_id(model_id, base_url=base_url, api_key_env=api_key_env)
        if progress is not None and starts_a_server(route):
            progress.starting_model(model_id)
        return model_for_route(route, role=role)

    def _scout_model(self, progress: RunProgress | None = None) -> ChatModel | None:
        """The scout's model from the options (``scout_model``, else ``model``)."""
        return self._role_model("scout", progress)

    def _make_thread(
        self,
        workspace: str | Workspace | None,
        agent: str | None,
        progress: RunProgress | None = None,
        design: str | None = None,
        deadline_ms: float | None = None,
    ) -> Thread:
        """A new thread with this kernel's defaults; the Super Context flag, the
        ``[preflight]`` settings and whether it archives are read now (``design`` and
        ``deadline_ms`` override the settings)."""
        scout = self._model_id("scout")
        return Thread(
            workspace if isinstance(workspace, Workspace) else self._workspace(workspace),
            definition=self._definition(agent),
            scout_model=self._scout_model(progress),
            # One model for both roles starts (at most) one server: said once.
            orchestrator_model=self._role_model(
                "orchestrator", progress if self._model_id("orchestrator") != scout else None
            ),
            design=design,
            deadline_ms=deadline_ms,
            archive=self.archive,
        )

    def _remember(
        self, message: str, focus: str | None, run: ScoutRun | None, ws: Workspace
    ) -> None:
        """Keep what *Run again* re-runs; ``run`` (None for a cold turn) is its baseline."""
        self.last_message, self.last_focus, self.last_workspace = message, focus, ws
        self.last_run = run
