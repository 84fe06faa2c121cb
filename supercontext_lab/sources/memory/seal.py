"""The memory index's seal: an index is trusted only when a lab of this user built it for
this folder.

A workspace is often somebody else's folder, and ``.supercontext/`` travels with it (a
copy, an archive, a repository). An index found there could hold rows no file holds,
triggers that rewrite content, or a stale row for a restored file, and whatever it holds
is shown to a model as the user's notes. So the lab seals what it builds:

* the user keeps one secret key, ``~/.supercontext_lab/index.key`` (32 random bytes,
  created on first use, readable by the user only; ``$SUPERCONTEXT_INDEX_KEY`` names
  another file);
* an index records its *binding*, a keyed hash (HMAC-SHA256) of the folder's real path
  and the schema version: an index built by another user, or for another folder, does
  not carry this user's binding for this folder;
* every row records a keyed digest of what it holds (namespace, key, category, content,
  creation date, the file it came from and that file's content hash), checked when the
  row is read for a bundle: a row changed by anything but the lab does not verify.

Why one key per user, not per lab home: what the seal stops is an index the user did
not build (planted in a shared folder, copied with a workspace, edited by another
program). Every lab home of one OS user (the default one, a notebook's private one, a
test's) acts for that same user, so an index one of them built is the user's own: were
the key the lab home's, switching between a notebook and the command line would rebuild
the index every time and drop what only the index held. The key stays out of every
workspace (a key kept beside the index would travel with it, and a planted index could
bring its own), and a key file another user owns or can read is not used.

When the user's key cannot be kept (a read-only home, say), the lab home holds it; when
neither can, the key is this process's only: indexes then verify within the process and
are rebuilt by the next one.
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

__all__ = ["ENV_INDEX_KEY", "KEY_FILE", "Seal", "key_paths"]

KEY_FILE = "index.key"
"""The key's file name, in ``~/.supercontext_lab`` (or, as a fallback, the lab home)."""
ENV_INDEX_KEY = "SUPERCONTEXT_INDEX_KEY"
"""Environment variable naming the user's key file (default ``~/.supercontext_lab/index.key``)."""
_KEY_BYTES = 32

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_keys: dict[tuple[Path, ...], bytes] = {}


def key_paths() -> list[Path]:
    """Where the key is looked for, in order: the user's key file, then the lab home's."""
    value = os.environ.get(ENV_INDEX_KEY, "")
    user = (
        Path(value).expanduser() if value.strip() else Path.home() / ".supercontext_lab" / KEY_FILE
    )
    return list(dict.fromkeys([user, lab_home() / KEY_FILE]))


def _private(path: Path) -> bool:
    """Whether ``path`` is the user's own and nobody else can read or write it (POSIX)."""
    if os.name != "posix":
        return True
    try:
        info = path.stat()
    except OSError:
        return False
    return info.st_uid == os.geteuid() and not info.st_mode & 0o077


def _read_key(path: Path) -> bytes | None:
    try:
        data, more = read_limited(path, _KEY_BYTES)
    except (OSError, PathRefusedError):
        return None
    if len(data) != _KEY_BYTES or more or not _private(path):
        return None
    return data


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
        _log.info("Cannot keep the memory index key in %s (%s).", path, exc.strerror or exc)
        return None
    return _read_key(path)


def _key_at(path: Path) -> bytes | None:
    """The key in ``path``, made there when there is none; ``None`` (with a warning when
    something else is there) when it cannot be used."""
    key = _read_key(path)
    if key is None and not path.exists() and not path.is_symlink():
        key = _create_key(path)
    if key is None and (path.exists() or path.is_symlink()):
        _log.warning(
            "%s is not a key this lab wrote for this user (another size, another owner, or "
            "readable by others); it is not used. Delete it and a new one is made.",
            path,
        )
    return key


def lab_key() -> bytes:
    """This user's key (see the module docstring), read or created once per process."""
    paths = key_paths()
    with _lock:
        key = _keys.get(tuple(paths))
        if key is None:
            key = next((k for k in map(_key_at, paths) if k is not None), None)
            if key is None:
                _log.warning(
                    "No key can be kept in %s; memory indexes are verified within this "
                    "process only and rebuilt by the next one.",
                    " or ".join(str(p) for p in paths),
                )
                key = secrets.token_bytes(_KEY_BYTES)
            _keys[tuple(paths)] = key
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
