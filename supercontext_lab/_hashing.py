"""Keys and fingerprints: one canonical JSON, one way to hash a set of files.

Every key the package stores on disk (model replies, evaluation results) is the sha256 of
:func:`canonical_json`, and every fingerprint of code or shipped data is
:func:`digest_files`, so two stores never disagree about what "the same" means.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["canonical_json", "digest_files", "fingerprint", "package_revision"]

_PACKAGE_ROOT = Path(__file__).resolve().parent


def canonical_json(value: Any) -> str:
    """``value`` as JSON with sorted keys and no spaces: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(value: Any) -> str:
    """The sha256 hex digest of :func:`canonical_json` of ``value``.

    Strings holding lone surrogates (file names that are not UTF-8) are hashed as they are.
    """
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()


def digest_files(root: Path, paths: Iterable[Path]) -> str:
    """The sha256 hex digest of ``paths`` (relative to ``root``) and their bytes.

    Paths are taken in sorted order; each name and content is length-prefixed, so no two
    different trees hash alike. A file that cannot be read counts by its name alone.
    """
    digest = hashlib.sha256()
    for path in sorted(paths):
        name = path.relative_to(root).as_posix().encode("utf-8", "surrogateescape")
        try:
            content = path.read_bytes()
        except OSError:
            content = b""
        digest.update(len(name).to_bytes(8, "big") + name)
        digest.update(len(content).to_bytes(8, "big") + content)
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def package_revision() -> str:
    """The sha256 of every ``.py`` file of the installed package (relative path and bytes);
    computed once per process."""
    files = (p for p in _PACKAGE_ROOT.rglob("*.py") if "__pycache__" not in p.parts)
    return digest_files(_PACKAGE_ROOT, files)
