"""The llama.cpp server child process of a local route: started, checked, reused, stopped.

:class:`LocalServer` checks the GGUF file first (:func:`~.gguf.check_gguf`), binds a
loopback socket on port 0 itself and hands it to the child with a per-run API key (see
:mod:`.local_guard`), waits until the child answers with the key and refuses to answer
without it (anything else on that port is not the lab's server, and is reported so), and
before every call checks that the child is still the one running. One server per file is
kept per process (:func:`local_server`) and stopped at exit (:func:`stop_local_servers`);
the child also ends by itself when the process dies.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

import httpx

from ..errors import ConfigError, ModelError
from . import local_guard
from .gguf import check_gguf

__all__ = [
    "INSTALL_HINT",
    "LOCAL_CONTEXT_TOKENS",
    "STARTUP_TIMEOUT_S",
    "LocalServer",
    "cpu_has_amx",
    "local_server",
    "missing_extra",
    "served_window",
    "stop_local_servers",
]

INSTALL_HINT = 'pip install "supercontext-lab[local]"'
"""The one command that brings the local route's packages."""

LOCAL_CONTEXT_TOKENS = 8192
"""The largest context window a server is started with: the model's own (the context
length its GGUF header declares) when smaller. SmolLM2 was trained on 8,192 tokens; the
server's own default of 2,048 is smaller than the scout's first prompt."""

STARTUP_TIMEOUT_S = 120.0
"""How long the server may take to load its weights and answer ``/v1/models``."""


def served_window(gguf: Path, cap: int = LOCAL_CONTEXT_TOKENS) -> int:
    """The context window ``gguf`` is served with: the context length it was trained on
    (its header's, :func:`~.gguf.check_gguf`, which also checks the file), at most
    ``cap``; ``cap`` when the header does not say. A model is not served past what it
    was trained on."""
    trained = check_gguf(gguf)
    return cap if trained is None else min(cap, trained)


def missing_extra(what: str) -> ConfigError:
    """The one-line error of a missing ``local`` extra."""
    return ConfigError(f"The local model route needs {what}; install it with: {INSTALL_HINT}")


def _check_server_package() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise missing_extra("llama-cpp-python's server")
    for module in ("uvicorn", "fastapi", "sse_starlette"):
        if importlib.util.find_spec(module) is None:
            raise missing_extra(f"llama-cpp-python's server extras ({module})")


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def cpu_has_amx() -> bool:
    """Whether the CPU reports AMX tiles (Linux ``/proc/cpuinfo``; false elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text("ascii", "replace")
    except OSError:
        return False
    return " amx_tile" in text


def _listener() -> socket.socket:
    """A loopback socket bound to a port the kernel picks, listening, for the child."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(128)
        listener.set_inheritable(True)
    except OSError:
        listener.close()
        raise
    return listener


class LocalServer:
    """One llama.cpp server child process serving one GGUF file on a loopback port."""

    def __init__(self, gguf: Path, *, context_tokens: int = LOCAL_CONTEXT_TOKENS) -> None:
        self.gguf = gguf
        self.context_tokens = context_tokens
        self.alias = gguf.stem
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._key = ""
        self._guard: IO[bytes] | None = None
        self._log_path: Path | None = None

    def __repr__(self) -> str:
        state = "running" if self.running() else "stopped"
        return f"LocalServer({self.gguf.name!r}, port={self.port}, {state})"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def api_key(self) -> str:
        """The per-run key the server requires (a new one every start)."""
        return self._key

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ensure_running(self) -> None:
        """Raise :class:`ModelError` when the child has exited: its port may belong to
        another process by now, which must not get the prompt."""
        if not self.running():
            raise ModelError(
                f"The local llama.cpp server for {self.gguf.name} is no longer running; "
                "nothing was sent to its port. Start the run again to start a new server."
            )

    @property
    def log_path(self) -> Path | None:
        """The server's log (its stdout and stderr), while it has one."""
        return self._log_path

    def _command(self) -> list[str]:
        cores = max(os.cpu_count() or 1, 1)
        return [
            sys.executable,
            "-m",
            local_guard.__name__,
            "--model",
            str(self.gguf),
            "--model_alias",
            self.alias,
            "--n_ctx",
            str(self.context_tokens),
            # Generation on half the cores (one on two), prompt reading on all of them: on
            # a busy two-core machine two generating threads waiting for each other at
            # every token made SmolLM2 several times slower than one.
            "--n_threads",
            str(max(cores // 2, 1)),
            "--n_threads_batch",
            str(cores),
            # A new request must not cut the stream of one still running (the eval may
            # share the server between runs); a client that gives up disconnects instead.
            "--interrupt_requests",
            "false",
            # llama.cpp's AMX weight buffers crash the server (SIGSEGV) on the first batch
            # of more than one token on CPUs with AMX where the tiles are not usable (seen
            # in a VM with llama-cpp-python 0.3.36); one token per micro-batch avoids
            # that path at the cost of slower prompt reading.
            *(["--n_ubatch", "1"] if cpu_has_amx() else []),
        ]

    def start(self, *, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        """Start the server and return once it answers; :class:`ConfigError` for a file
        that cannot be served, :class:`ModelError` when the server does not come up."""
        self.context_tokens = served_window(self.gguf, self.context_tokens)
        _check_server_package()
        handle, log_name = tempfile.mkstemp(prefix="supercontext-llama-", suffix=".log")
        self._log_path = Path(log_name)
        self._key = secrets.token_urlsafe(32)
        listener = _listener()
        self.port = listener.getsockname()[1]
        env = {
            **os.environ,
            local_guard.LOG_VARIABLE: log_name,
            local_guard.FD_VARIABLE: str(listener.fileno()),
            local_guard.PARENT_VARIABLE: str(os.getpid()),
        }
        try:
            with os.fdopen(handle, "wb") as log:
                # stdin is the guard pipe: the key goes first, then nothing until this
                # process closes it or dies.
                self.process = subprocess.Popen(
                    self._command(),
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    pass_fds=(listener.fileno(),),
                )
        finally:
            listener.close()  # the child holds its own copy
        self._guard = self.process.stdin
        if self._guard is not None:
            with contextlib.suppress(OSError):  # a child already gone: _wait_ready says why
                self._guard.write(self._key.encode("ascii") + b"\n")
                self._guard.flush()
        self._wait_ready(timeout_s)

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        url = f"http://127.0.0.1:{self.port}/v1/models"
        keyed = {"Authorization": f"Bearer {self._key}"}
        with httpx.Client(timeout=2.0) as client:
            while True:
                if not self.running():
                    status = self.process.returncode if self.process is not None else None
                    detail = _last_line(self._log_path) if self._log_path else ""
                    self.stop(keep_log=True)
                    raise ModelError(
                        f"The local llama.cpp server for {self.gguf.name} exited while starting "
                        f"(exit status {status})"
                        + (f": {detail}" if detail else "")
                        + f" (log: {self._log_path})."
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(url, headers=keyed).status_code == 200:
                        self._check_identity(client, url)
                        return
                if time.monotonic() > deadline:
                    self.stop(keep_log=True)
                    raise ModelError(
                        f"The local llama.cpp server for {self.gguf.name} did not answer within "
                        f"{timeout_s:g} s (log: {self._log_path})."
                    )
                time.sleep(0.2)

    def _check_identity(self, client: httpx.Client, url: str) -> None:
        """The lab's own child refuses a request without its key; anything that answers
        one is someone else, and gets nothing more."""
        status = client.get(url).status_code
        if status != 401:
            self.stop()
            raise ModelError(
                f"The process answering on 127.0.0.1:{self.port} is not the lab's llama.cpp "
                f"server for {self.gguf.name} (it answered HTTP {status} without the run's "
                "key); nothing was sent to it."
            )

    def stop(self, *, keep_log: bool = False) -> None:
        """Stop the server (closing its guard pipe first, then signals); idempotent.

        Its log is deleted unless ``keep_log`` (a failed start names it in the error)."""
        process, self.process = self.process, None
        # Closing the guard pipe ends the server at once (and its watcher deletes the
        # log); a log that must be kept is left to a plain SIGTERM instead.
        if not keep_log:
            self._close_guard()
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        self._close_guard()
        if not keep_log and self._log_path is not None:
            self._log_path.unlink(missing_ok=True)

    def _close_guard(self) -> None:
        if self._guard is not None:
            with contextlib.suppress(OSError):
                self._guard.close()
            self._guard = None


_LOCK = threading.Lock()
_SERVERS: dict[Path, LocalServer] = {}


def local_server(gguf: Path) -> LocalServer:
    """The running server for ``gguf`` in this process, started on first use (and again
    when the previous one has exited)."""
    with _LOCK:
        server = _SERVERS.get(gguf)
        if server is not None and server.running():
            return server
        server = LocalServer(gguf)
        server.start()
        _SERVERS[gguf] = server
        return server


def stop_local_servers() -> None:
    """Stop every server this process started (also run at interpreter exit)."""
    with _LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for server in servers:
        server.stop()


atexit.register(stop_local_servers)
