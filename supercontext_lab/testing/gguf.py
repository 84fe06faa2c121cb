"""Small GGUF files for tests: a header llama.cpp's loader accepts, with no model behind it.

:func:`write_gguf` writes a file whose header is whole (magic number, version, counts, an
architecture entry, tensor records) and whose data is whatever is given: it passes the
checks made before a local server starts, and then fails to load as a model, which is
what tests of those checks and of a clean failure need.
"""

from __future__ import annotations

import struct
from pathlib import Path

__all__ = ["write_gguf"]


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def write_gguf(
    path: Path,
    *,
    architecture: str = "llama",
    tensors: int = 1,
    data: bytes = b"\0" * 64,
    context_length: int | None = None,
) -> Path:
    """Write a GGUF version-3 file at ``path``: one ``general.architecture`` entry (and a
    ``<architecture>.context_length`` one, a 32-bit unsigned integer, when
    ``context_length`` is given), ``tensors`` one-dimensional F32 tensor records, then
    ``data``."""
    entries = 1 if context_length is None else 2
    header = b"GGUF" + struct.pack("<IQQ", 3, tensors, entries)
    header += _string("general.architecture") + struct.pack("<I", 8) + _string(architecture)
    if context_length is not None:
        header += _string(f"{architecture}.context_length") + struct.pack("<II", 4, context_length)
    for index in range(tensors):
        header += _string(f"tensor.{index}") + struct.pack("<IQIQ", 1, 4, 0, 16 * index)
    header += b"\0" * (-len(header) % 32)  # the data section is aligned
    path.write_bytes(header + data)
    return path
