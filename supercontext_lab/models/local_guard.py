"""Run llama-cpp-python's server, and exit when the process that started it goes away.

``python -m supercontext_lab.models.local_guard ARGS`` runs ``python -m llama_cpp.server
ARGS`` in this process after starting a watcher thread on stdin. The parent holds the
other end of that pipe and never writes to it, so the read returns only at end-of-file:
when the parent closes it on purpose or when the kernel closes it because the parent
died (``kill -9`` included). The watcher then ends this process at once, so a server can
never outlive the lab that started it. Unlike ``PR_SET_PDEATHSIG``, this does not fire
when merely the starting *thread* ends, and it works on every POSIX system. A parent
that died can no longer delete the server's log, so the watcher does
(``SUPERCONTEXT_LOCAL_LOG``).
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
import threading


def _watch_parent() -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    log = os.environ.get("SUPERCONTEXT_LOCAL_LOG")
    if log:
        with contextlib.suppress(OSError):
            os.unlink(log)
    os._exit(0)


def main() -> None:
    threading.Thread(target=_watch_parent, name="parent-watch", daemon=True).start()
    sys.argv = ["llama_cpp.server", *sys.argv[1:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
