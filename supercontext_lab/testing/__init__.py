"""Test doubles for chat models: a scripted model and a real OpenAI-compatible server.

Nothing here imports Jupyter; tests, notebooks and benchmarks use these to run the lab
with exact, repeatable model behaviour and no network beyond 127.0.0.1 (and
:func:`write_gguf` writes a model file whose header passes the local route's checks).
"""

from __future__ import annotations

from .gguf import write_gguf
from .scripted import ScriptedCall, ScriptedModel, envelope, tool_call_message
from .server import OpenAITestServer, RecordedRequest, ScriptedResponse

__all__ = [
    "OpenAITestServer",
    "RecordedRequest",
    "ScriptedCall",
    "ScriptedModel",
    "ScriptedResponse",
    "envelope",
    "tool_call_message",
    "write_gguf",
]
