"""The GGUF files tests write: a header the local route's checks accept, and no model."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from supercontext_lab.errors import ConfigError
from supercontext_lab.models.gguf import GGUF_MAGIC, check_gguf, file_identity
from supercontext_lab.testing import write_gguf


def test_the_header_passes_the_checks_made_before_a_server_starts(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "tiny.gguf", architecture="qwen2", tensors=3)
    assert path == tmp_path / "tiny.gguf"
    check_gguf(path)
    data = path.read_bytes()
    assert data.startswith(GGUF_MAGIC)
    version, tensors, entries = struct.unpack_from("<IQQ", data, 4)
    assert (version, tensors, entries) == (3, 3, 1)
    assert b"general.architecture" in data
    assert b"qwen2" in data


def test_the_data_follows_an_aligned_header(tmp_path: Path) -> None:
    data = b"weights!" * 4
    path = write_gguf(tmp_path / "m.gguf", data=data)
    raw = path.read_bytes()
    assert raw.endswith(data)
    assert (len(raw) - len(data)) % 32 == 0


def test_a_file_with_no_tensors_fails_the_checks(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "empty.gguf", tensors=0)
    with pytest.raises(ConfigError, match="is not a GGUF model: its header is damaged"):
        check_gguf(path)


def test_different_data_is_a_different_model(tmp_path: Path) -> None:
    first = file_identity(write_gguf(tmp_path / "a.gguf", data=b"\0" * 64))
    second = file_identity(write_gguf(tmp_path / "b.gguf", data=b"\1" * 64))
    assert first.split("sha256:")[1] != second.split("sha256:")[1]


def test_a_declared_context_length_is_read_back(tmp_path: Path) -> None:
    assert check_gguf(write_gguf(tmp_path / "plain.gguf")) is None
    path = write_gguf(tmp_path / "long.gguf", architecture="qwen2", context_length=32_768)
    assert check_gguf(path) == 32_768
    assert b"qwen2.context_length" in path.read_bytes()
