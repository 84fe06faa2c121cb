"""The memory index's seal: an index is trusted only when this lab built it for this folder.

A workspace is often somebody else's folder, and ``.supercontext/`` travels with it (a
copy, an archive, a repository). An index found there could hold rows no file holds,
triggers that rewrite content, or a stale row for a restored file, and whatever it holds
is shown to a model as the user's notes. So the lab seals what it builds:

* the lab keeps a secret key, ``index.key`` in its home (32 random bytes, created on first
  use, readable by the user only);
* an index records its *binding*, a keyed hash (HMAC-SHA256) of the folder's real path
  and the schema version: an index built by another lab, or for another folder, does not
  carry this lab's binding for this folder;
* every row records a keyed digest of what it holds (namespace, key, category, content,
  creation date, the file it came from and that file's content hash), checked when the
  row is read for a bundle: a row changed by anything but the lab does not verify.

A lab home that cannot hold the key (read-only, say) gives a key for this process only:
indexes then verify within the process and are rebuilt by the next one.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..._confine import read_limited
from ..._hashing import canonical_json
from ...config import lab_home
from ...errors import PathRefusedError

__all__ = ["KEY_FILE", "Seal"]

KEY_FILE = "index.key"
"""The lab's key, in its home folder."""
_KEY_BYTES = 32

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_keys: dict[Path, bytes] = {}


def _read_key(path: Path) -> bytes | None:
    try:
        data, more = read_limited(path, _KEY_BYTES)
    except (OSError, PathRefusedError):
        return None
    return data if len(data) == _KEY_BYTES and not more else None


def _create_key(path: Path) -> bytes | None:
    """A new key written to ``path`` unless another process wrote one first (then that
    one); ``None`` when the folder cannot hold it."""
    key = secrets.token_bytes(_KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(key)
                handle.flush()
                os.fsync(handle.fileno())
            # A link never replaces a file: the first key written is everyone's key.
            os.link(temporary, path)
        except FileExistsError:
            pass
        finally:
            temporary.unlink(missing_ok=True)
    except OSError as exc:
        _log.warning(
            "Cannot keep the memory index key in %s (%s); indexes are verified within "
            "this process only and rebuilt by the next one.",
            path,
            exc.strerror or exc,
        )
        return None
    return _read_key(path)


def lab_key() -> bytes:
    """This lab's key (see the module docstring), read or created once per process."""
    path = lab_home() / KEY_FILE
    with _lock:
        key = _keys.get(path)
        if key is None:
            key = _read_key(path)
            if key is None and not path.exists() and not path.is_symlink():
                key = _create_key(path)
            if key is None:
                if path.exists() or path.is_symlink():
                    _log.warning(
                        "%s is not a key this lab wrote; memory indexes are verified within "
                        "this process only. Delete it and a new one is made.",
                        path,
                    )
                key = secrets.token_bytes(_KEY_BYTES)
            _keys[path] = key
        return key


@dataclass(frozen=True)
class Seal:
    """The seal of the index of one folder: its binding and the digests of its rows."""

    key: bytes
    binding: str

    @classmethod
    def for_folder(cls, root: Path, schema_version: int) -> Seal:
        """The seal this lab puts on the index of ``root`` (its real path)."""
        key = lab_key()
        real = os.fsencode(root.resolve())
        message = b"supercontext memory index\0%d\0" % schema_version + real
        return cls(key, hmac.new(key, message, hashlib.sha256).hexdigest())

    def digest(self, fields: Sequence[object]) -> str:
        """The keyed digest of a row's ``fields`` (JSON values), bound to this folder."""
        text = canonical_json([self.binding, *fields])
        message = text.encode("utf-8", "surrogatepass")
        return hmac.new(self.key, message, hashlib.sha256).hexdigest()

    def verifies(self, fields: Sequence[object], digest: object) -> bool:
        """Whether ``digest`` is this seal's digest of ``fields``."""
        return isinstance(digest, str) and hmac.compare_digest(self.digest(fields), digest)
