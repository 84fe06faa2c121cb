"""Run llama-cpp-python's server for the lab, and only for the lab that started it.

``python -m supercontext_lab.models.local_guard ARGS`` is the child process of a
:class:`~supercontext_lab.models.local.LocalServer`. ``ARGS`` are llama-cpp-python's
server settings (``--model``, ``--n_ctx``, ...), never a port or a key:

* **Its own socket.** The parent binds a loopback socket on port 0 before this process
  starts and hands it over as the file descriptor named by ``SUPERCONTEXT_LOCAL_FD``; the
  server serves on that socket. No port is ever free between the parent choosing it and
  the server binding it, and none is on the command line for another process to read
  from ``/proc`` and bind first.
* **A per-run key.** The first line the parent writes on stdin is a random API key. The
  server answers 401 to any request without it, and the parent's client sends it: a
  process that is not this server cannot pass for it, and the key is in no command line
  and no environment.
* **No server outlives the lab.** The parent holds the other end of stdin and never
  writes to it again, so the read returns only at end-of-file: when the parent closes it
  or dies (``kill -9`` included). A forked child of the parent may keep that pipe open,
  so this process also watches its parent's pid (``SUPERCONTEXT_LOCAL_PARENT``) and ends
  when it is gone. Unlike ``PR_SET_PDEATHSIG``, neither fires when merely the parent's
  starting *thread* ends. A parent that died can no longer delete the server's log, so
  the watchers do (``SUPERCONTEXT_LOCAL_LOG``).
* **A clean exit on failure.** A model that cannot be loaded ends this process with one
  line on stderr (the last line of the log, which the parent quotes) and exit status 1,
  never an abort: the watchers read the raw descriptor, so no buffered stream's lock
  blocks the interpreter's shutdown.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import socket
import sys
import threading
import time

FD_VARIABLE = "SUPERCONTEXT_LOCAL_FD"
PARENT_VARIABLE = "SUPERCONTEXT_LOCAL_PARENT"
LOG_VARIABLE = "SUPERCONTEXT_LOCAL_LOG"
PARENT_POLL_S = 0.5
"""How often the parent's pid is checked."""
_KEY_LIMIT = 512


def _forget_log() -> None:
    log = os.environ.get(LOG_VARIABLE)
    if log:
        with contextlib.suppress(OSError):
            os.unlink(log)


def _watch_pipe() -> None:
    # os.read on the raw descriptor: a thread blocked in sys.stdin's buffered reader would
    # hold its lock and make the interpreter abort at shutdown.
    with contextlib.suppress(OSError):
        while os.read(0, 4096):
            pass
    _forget_log()
    os._exit(0)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    _forget_log()
    os._exit(0)


def start_watchers(parent: int) -> None:
    """End this process when stdin reaches end-of-file or ``parent`` is no longer its
    parent (it died, and this process was handed to another)."""
    for target, args in ((_watch_pipe, ()), (_watch_parent, (parent,))):
        threading.Thread(target=target, args=args, name="parent-watch", daemon=True).start()


def read_key() -> str:
    """The per-run key: the first line on stdin (``""`` when the parent is already gone)."""
    data = b""
    while not data.endswith(b"\n") and len(data) < _KEY_LIMIT:
        piece = os.read(0, 1)
        if not piece:
            break
        data += piece
    return data.decode("ascii", "replace").strip()


def serve(argv: list[str], key: str, listener: socket.socket) -> None:
    """Load the model ``argv`` names and serve it on ``listener``, requiring ``key``."""
    # Imported here, and through importlib: the extra is optional and untyped.
    cli = importlib.import_module("llama_cpp.server.cli")
    settings = importlib.import_module("llama_cpp.server.settings")
    app_module = importlib.import_module("llama_cpp.server.app")
    uvicorn = importlib.import_module("uvicorn")
    parser = argparse.ArgumentParser(prog="supercontext_lab.models.local_guard")
    cli.add_args_from_model(parser, settings.Settings)
    args = parser.parse_args(argv)
    args.api_key = key
    app = app_module.create_app(
        server_settings=cli.parse_model_from_args(settings.ServerSettings, args),
        model_settings=[cli.parse_model_from_args(settings.ModelSettings, args)],
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[listener])


def main() -> None:
    parent = int(os.environ.get(PARENT_VARIABLE) or os.getppid())
    key = read_key()
    if not key:
        _forget_log()
        os._exit(0)
    start_watchers(parent)
    status = 0
    try:
        listener = socket.socket(fileno=int(os.environ[FD_VARIABLE]))
        serve(sys.argv[1:], key, listener)
    except SystemExit as exc:  # bad arguments (argparse has said why)
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:
        # Whatever stops the server from starting ends the child with one line.
        detail = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {type(exc).__name__}: {detail[:300]}", file=sys.stderr, flush=True)
        status = 1
    sys.stdout.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
