"""Test doubles for chat models: a scripted model and a real OpenAI-compatible server.

Nothing here imports Jupyter; tests, notebooks and benchmarks use these to run the lab
with exact, repeatable model behaviour and no network beyond 127.0.0.1 (and
:func:`write_gguf` writes a model file whose header passes the local route's checks).
:func:`build_workspace` writes a workspace folder from ``{relative path: text}`` (by
default :data:`SAMPLE_WORKSPACE`), and :func:`write_file` one file of it.
"""

from __future__ import annotations

from .gguf import write_gguf
from .scripted import ScriptedCall, ScriptedModel, envelope, tool_call_message
from .server import OpenAITestServer, RecordedRequest, ScriptedResponse
from .workspace import SAMPLE_REGISTRY, SAMPLE_WORKSPACE, build_workspace, write_file

__all__ = [
    "SAMPLE_REGISTRY",
    "SAMPLE_WORKSPACE",
    "OpenAITestServer",
    "RecordedRequest",
    "ScriptedCall",
    "ScriptedModel",
    "ScriptedResponse",
    "build_workspace",
    "envelope",
    "tool_call_message",
    "write_file",
    "write_gguf",
]
