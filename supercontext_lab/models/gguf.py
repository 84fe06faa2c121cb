"""The GGUF file a local route serves: checked before a server starts, and named in cache keys.

:func:`check_gguf` reads what llama.cpp would trip over, before a child process is
started for it (and the context length the model was trained on), and says in one line
what is wrong: not a regular file, cannot be read,
not a GGUF model (the magic number, the version, the counts and every metadata entry and
tensor record of the header are read, each bounded by the file's size), or too large for
the memory available. :func:`file_identity` is what names the file in the response cache
and the evaluation's result store: its path, size, modification time and a content hash,
computed once per (path, size, time) in a process.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import threading
from pathlib import Path
from typing import BinaryIO

from ..errors import ConfigError

__all__ = ["GGUF_MAGIC", "available_memory", "check_gguf", "file_identity", "file_kind"]

GGUF_MAGIC = b"GGUF"
_VERSIONS = (2, 3)
"""The GGUF versions llama.cpp reads (version 1 has 32-bit counts and is long gone)."""
_MAX_TENSORS = 1 << 20
_MAX_ENTRIES = 1 << 20
_MAX_NAME = 1 << 16
_MAX_DIMS = 4
_MAX_TYPE = 64
_MAX_DEPTH = 3
# Sizes of the fixed-width metadata value types, by type number.
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
# The integer types a context length is written in, by type number.
_INTEGERS = {4: "<I", 5: "<i", 10: "<Q", 11: "<q"}


class _Damaged(Exception):
    """The header is not what a GGUF file holds; the message says where."""


def file_kind(mode: int) -> str | None:
    """What a file that is not regular is (``a folder``, ``a FIFO``, ...); ``None`` for a
    regular file."""
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable``), or ``None`` when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


class _Reader:
    """Bounded little-endian reads of a GGUF header."""

    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.size = size

    def take(self, count: int, what: str) -> bytes:
        if count > self.size - self.handle.tell():
            raise _Damaged(f"its header is cut short (in {what})")
        data = self.handle.read(count)
        if len(data) != count:
            raise _Damaged(f"its header is cut short (in {what})")
        return data

    def u32(self, what: str) -> int:
        value: int = struct.unpack("<I", self.take(4, what))[0]
        return value

    def u64(self, what: str) -> int:
        value: int = struct.unpack("<Q", self.take(8, what))[0]
        return value

    def skip(self, count: int, what: str) -> None:
        if count > self.size - self.handle.tell():
            raise _Damaged(f"its header is damaged ({what} runs past the end of the file)")
        self.handle.seek(count, os.SEEK_CUR)

    def string(self, what: str, *, keep: bool = False, limit: int | None = None) -> str:
        length = self.u64(what)
        if limit is not None and length > limit:
            raise _Damaged(f"its header is damaged ({what} of {length:,} bytes)")
        if not keep:
            self.skip(length, what)
            return ""
        return self.take(length, what).decode("utf-8", "replace")

    def value(self, kind: int, what: str, depth: int = 0) -> None:
        if kind in _FIXED:
            self.skip(_FIXED[kind], what)
        elif kind == _STRING:
            self.string(what)
        elif kind == _ARRAY and depth < _MAX_DEPTH:
            inner, count = self.u32(what), self.u64(what)
            if inner in _FIXED:
                self.skip(_FIXED[inner] * count, what)
                return
            for _ in range(count):
                self.value(inner, what, depth + 1)
        else:
            raise _Damaged(f"its header is damaged (a value of unknown type {kind} in {what})")


def _read_header(handle: BinaryIO, size: int) -> int | None:
    """Raise :class:`_Damaged` unless ``handle`` starts with a whole GGUF header; return
    the context length it declares (``<architecture>.context_length``), if any."""
    if handle.read(4) != GGUF_MAGIC:
        raise _Damaged("it does not start with the GGUF magic number")
    reader = _Reader(handle, size)
    version = reader.u32("the version")
    if version not in _VERSIONS:
        raise _Damaged(f"unsupported GGUF version {version}")
    tensors, entries = reader.u64("the tensor count"), reader.u64("the metadata count")
    if not 0 < tensors <= _MAX_TENSORS or entries > _MAX_ENTRIES:
        raise _Damaged(f"its header is damaged ({tensors:,} tensors, {entries:,} metadata entries)")
    keys = set()
    trained: int | None = None
    for _ in range(entries):
        key = reader.string("a metadata key", keep=True, limit=_MAX_NAME)
        keys.add(key)
        kind = reader.u32(f"the type of {key!r}")
        if kind in _INTEGERS and key.endswith(".context_length") and key.count(".") == 1:
            length = struct.unpack(_INTEGERS[kind], reader.take(_FIXED[kind], repr(key)))[0]
            trained = length if length > 0 else None
        else:
            reader.value(kind, f"the value of {key!r}")
    if "general.architecture" not in keys:
        raise _Damaged("its header names no model architecture (general.architecture)")
    for _ in range(tensors):
        reader.string("a tensor name", limit=_MAX_NAME)
        dims = reader.u32("a tensor's dimension count")
        if not 0 < dims <= _MAX_DIMS:
            raise _Damaged(f"its header is damaged (a tensor of {dims} dimensions)")
        reader.skip(8 * dims, "a tensor's shape")
        if reader.u32("a tensor's type") >= _MAX_TYPE:
            raise _Damaged("its header is damaged (a tensor of unknown type)")
        if reader.u64("a tensor's offset") > size:
            raise _Damaged("its header is damaged (a tensor's data lies past the end of the file)")
    return trained


def check_gguf(path: Path) -> int | None:
    """Raise :class:`ConfigError` with one line naming ``path`` and the cause unless it is
    a readable GGUF model that fits in the memory available; return the context length
    the model was trained on (its header's ``<architecture>.context_length``), ``None``
    when the header does not say."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(f"The local model file {path} does not exist.") from None
    except OSError as exc:
        raise ConfigError(f"The local model file {path} cannot be read ({exc.strerror}).") from None
    kind = file_kind(info.st_mode)
    if kind is not None:
        raise ConfigError(
            f"The local model {path} is not a regular file ({kind}); point the route at a "
            ".gguf file."
        )
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            # /proc files report a size of 0; what can be read is what counts.
            trained = _read_header(handle, info.st_size or (1 << 20))
    except OSError as exc:
        raise ConfigError(f"The local model file {path} cannot be read ({exc.strerror}).") from None
    except _Damaged as exc:
        raise ConfigError(f"The local model file {path} is not a GGUF model: {exc}.") from None
    memory = available_memory()
    if memory is not None and info.st_size > memory:
        raise ConfigError(
            f"The local model file {path} is too large for memory ({info.st_size / 2**30:.1f} "
            f"GiB, {memory / 2**30:.1f} GiB available); use a smaller model or free memory."
        )
    return trained


_IDENTITY_LOCK = threading.Lock()
_IDENTITIES: dict[tuple[str, int, int], str] = {}


def file_identity(path: Path) -> str:
    """``<path> <size> <mtime_ns> sha256:<digest>``: what names a model file in cache keys.

    The content hash is computed once per (path, size, modification time) in this process:
    a file replaced at the same path changes the identity, an unchanged one is not read
    again. A file that cannot be read is named by its path alone.
    """
    resolved = str(Path(path).resolve())
    try:
        info = os.stat(resolved)
    except OSError:
        return resolved
    key = (resolved, info.st_size, info.st_mtime_ns)
    with _IDENTITY_LOCK:
        known = _IDENTITIES.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    try:
        with open(resolved, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return resolved
    identity = f"{resolved} {info.st_size} {info.st_mtime_ns} sha256:{digest.hexdigest()}"
    with _IDENTITY_LOCK:
        _IDENTITIES[key] = identity
    return identity
