"""A real text corpus built offline: docstring paragraphs of the installed Python code.

The source files of the standard library and of site-packages are parsed with :mod:`ast`
(never imported), the docstrings of every module, class and function are split into
paragraphs, whitespace is collapsed, and paragraphs that are mostly code or too short to
search are dropped. Paragraphs are deduplicated and collected from the files in a seeded
random order until the target count is reached, so the corpus mixes many packages and is
the same on every run with the same installed packages.

Parsing a few thousand files takes tens of seconds on a small machine, so the corpus is
cached as gzip-compressed JSON keyed on the Python version, the source folders (and their
modification times, which change when a distribution is installed or removed) and the
settings; reruns load it in about a second.
"""

from __future__ import annotations

import ast
import concurrent.futures
import gzip
import hashlib
import json
import multiprocessing
import os
import random
import re
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CORPUS_VERSION",
    "Corpus",
    "list_source_files",
    "load_corpus",
    "make_queries",
    "resize_docs",
    "source_roots",
    "tokenize",
    "tokenizer_name",
]

#: Bumped whenever the extraction rules change, so cached corpora are rebuilt.
CORPUS_VERSION = 1
_SKIP_DIRS = frozenset(
    {"__pycache__", "site-packages", "dist-packages", "test", "tests", "testing", "node_modules"}
)
# Generated modules (unicode tables, vendored bundles) are huge and nearly docstring-free.
_MAX_FILE_BYTES = 400_000
_MIN_CHARS = 40
_MAX_CHARS = 1500
_MIN_WORDS = 5
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_WORDISH = re.compile(r"[A-Za-z]{2,}")
_CHUNK_FILES = 64


@dataclass
class Corpus:
    """Deduplicated docstring paragraphs and where each came from."""

    docs: list[str]
    origins: list[str]
    files_parsed: int = 0
    files_total: int = 0
    build_seconds: float = 0.0
    cached: bool = False
    key: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        """What a report says about the corpus."""
        return {
            "documents": len(self.docs),
            "files_parsed": self.files_parsed,
            "files_total": self.files_total,
            "build_seconds": round(self.build_seconds, 2),
            "loaded_from_cache": self.cached,
            "mean_chars": round(sum(map(len, self.docs)) / max(1, len(self.docs)), 1),
            "key": self.key,
        }


def source_roots() -> list[Path]:
    """The standard library folder and the site-packages folders, without repeats."""
    paths = sysconfig.get_paths()
    roots: list[Path] = []
    for name in ("stdlib", "purelib", "platlib"):
        value = paths.get(name)
        if value and Path(value).is_dir() and Path(value) not in roots:
            roots.append(Path(value))
    return roots


def list_source_files(roots: Sequence[Path]) -> list[Path]:
    """Every ``.py`` file under ``roots`` (sorted), skipping tests, caches and huge files.

    site-packages is skipped while walking the standard library; it is a root of its own.
    """
    files: set[Path] = set()
    for root in roots:
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
            for name in names:
                if not name.endswith(".py"):
                    continue
                path = Path(folder, name)
                try:
                    if path.stat().st_size > _MAX_FILE_BYTES:
                        continue
                except OSError:
                    continue
                files.add(path)
    return sorted(files)


def _is_text(paragraph: str) -> bool:
    if len(paragraph) < _MIN_CHARS or len(paragraph) > _MAX_CHARS:
        return False
    if paragraph.startswith((">>>", "...", "$ ", "%")):
        return False
    words = _WORDISH.findall(paragraph)
    if len(words) < _MIN_WORDS:
        return False
    # Mostly letters and spaces: prose, not a table, a signature or a code sample.
    letters = sum(len(w) for w in words)
    return letters >= 0.7 * len(paragraph.replace(" ", ""))


def _paragraphs(docstring: str) -> Iterator[str]:
    for block in _PARAGRAPH_BREAK.split(docstring):
        text = " ".join(block.split())
        if _is_text(text):
            yield text


def _docstrings(body: list[ast.stmt], prefix: str, out: list[tuple[str, str]]) -> None:
    # Only statement bodies can hold docstrings; walking them (not every expression with
    # ast.walk) keeps extraction a small fraction of the parse time.
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}.{node.name}" if prefix else node.name
            doc = ast.get_docstring(node)
            if doc:
                out.append((doc, name))
            _docstrings(node.body, name, out)
        elif isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for part in ("body", "orelse", "finalbody"):
                _docstrings(getattr(node, part, []), prefix, out)
            for handler in getattr(node, "handlers", []):
                _docstrings(handler.body, prefix, out)


def extract_file(path: str, label: str) -> list[tuple[str, str]]:
    """``(paragraph, origin)`` pairs of one source file; unreadable files give ``[]``."""
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    docs: list[tuple[str, str]] = []
    module_doc = ast.get_docstring(tree)
    if module_doc:
        docs.append((module_doc, ""))
    _docstrings(tree.body, "", docs)
    out: list[tuple[str, str]] = []
    for doc, name in docs:
        origin = f"{label}:{name}" if name else label
        out.extend((paragraph, origin) for paragraph in _paragraphs(doc))
    return out


def _extract_chunk(items: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    return [extract_file(path, label) for path, label in items]


def _label(path: Path, roots: Sequence[Path]) -> str:
    for root in roots:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def _roots_fingerprint(roots: Sequence[Path]) -> list[int]:
    # Installing, upgrading or removing a distribution adds or removes entries (its
    # dist-info folder at least) in its root, which changes the root's modification time.
    stamps = []
    for root in roots:
        try:
            stamps.append(root.stat().st_mtime_ns)
        except OSError:
            stamps.append(0)
    return stamps


def corpus_key(roots: Sequence[Path], target_docs: int, seed: int) -> str:
    """Cache key: extraction version, Python, the roots and their state, the settings."""
    text = json.dumps(
        [
            CORPUS_VERSION,
            sys.version,
            [str(r) for r in roots],
            _roots_fingerprint(roots),
            target_docs,
            seed,
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def build_corpus(
    target_docs: int,
    *,
    roots: Sequence[Path] | None = None,
    seed: int = 7,
    workers: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Corpus:
    """Parse source files in a seeded random order until ``target_docs`` paragraphs.

    Results are consumed in submission order, so the corpus does not depend on the number
    of worker processes.
    """
    started = time.perf_counter()
    roots = list(roots) if roots is not None else source_roots()
    files = list_source_files(roots)
    random.Random(seed).shuffle(files)
    items = [(str(path), _label(path, roots)) for path in files]
    chunks = [items[i : i + _CHUNK_FILES] for i in range(0, len(items), _CHUNK_FILES)]
    workers = workers if workers is not None else (os.cpu_count() or 1)
    docs: list[str] = []
    origins: list[str] = []
    seen: set[str] = set()
    parsed = 0

    def take(results: list[list[tuple[str, str]]]) -> bool:
        nonlocal parsed
        for per_file in results:
            parsed += 1
            for paragraph, origin in per_file:
                folded = paragraph.casefold()
                if folded in seen:
                    continue
                seen.add(folded)
                docs.append(paragraph)
                origins.append(origin)
                if len(docs) >= target_docs:
                    return True
        return False

    if workers <= 1 or len(chunks) <= 2:
        for chunk in chunks:
            if take(_extract_chunk(chunk)):
                break
    else:
        # Spawned workers import only this module, never the caller's state.
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            pending: list[concurrent.futures.Future[list[list[tuple[str, str]]]]] = []
            queue = iter(chunks)
            for chunk in queue:
                pending.append(pool.submit(_extract_chunk, chunk))
                if len(pending) >= workers * 2:
                    break
            while pending:
                done = take(pending.pop(0).result())
                if done:
                    for future in pending:
                        future.cancel()
                    break
                upcoming = next(queue, None)
                if upcoming is not None:
                    pending.append(pool.submit(_extract_chunk, upcoming))
                if progress is not None and parsed % (_CHUNK_FILES * 16) == 0:
                    progress(f"corpus: {parsed} files, {len(docs)} paragraphs")
    return Corpus(
        docs=docs,
        origins=origins,
        files_parsed=parsed,
        files_total=len(files),
        build_seconds=time.perf_counter() - started,
        meta={"roots": [str(r) for r in roots], "seed": seed, "target": target_docs},
    )


def load_corpus(
    cache_dir: Path,
    target_docs: int,
    *,
    roots: Sequence[Path] | None = None,
    seed: int = 7,
    progress: Callable[[str], None] | None = None,
) -> Corpus:
    """The cached corpus for these settings, building and caching it when absent."""
    roots = list(roots) if roots is not None else source_roots()
    key = corpus_key(roots, target_docs, seed)
    path = cache_dir / f"corpus-{key}.json.gz"
    if path.is_file():
        started = time.perf_counter()
        try:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                data = json.load(handle)
            if data.get("version") == CORPUS_VERSION and data.get("key") == key:
                return Corpus(
                    docs=list(data["docs"]),
                    origins=list(data["origins"]),
                    files_parsed=int(data["files_parsed"]),
                    files_total=int(data["files_total"]),
                    build_seconds=time.perf_counter() - started,
                    cached=True,
                    key=key,
                    meta=dict(data.get("meta", {})),
                )
        except (OSError, ValueError, KeyError, EOFError):
            pass  # a damaged cache is rebuilt below
    corpus = build_corpus(target_docs, roots=roots, seed=seed, progress=progress)
    corpus.key = key
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6) as handle:
        json.dump(
            {
                "version": CORPUS_VERSION,
                "key": key,
                "docs": corpus.docs,
                "origins": corpus.origins,
                "files_parsed": corpus.files_parsed,
                "files_total": corpus.files_total,
                "meta": corpus.meta,
            },
            handle,
        )
    os.replace(tmp, path)
    return corpus


_STOPWORDS = frozenset(
    """
    about above after again against also although among another because been before being
    below between both cannot could does doing done down during each either else even every
    from further given have having here however into itself just just least less like made
    make many might more most much must need neither never none only other others otherwise
    over same several shall should since some such than that their them then there these
    they this those though through thus under unless until upon used uses using very want
    were what when where whether which while will with within without would your yours
    true false none self return returns default object value values called instead note
    """.split()
)
_CONTENT_WORD = re.compile(r"[A-Za-z]{4,}")


def make_queries(docs: Sequence[str], count: int, *, seed: int = 1234, words: int = 3) -> list[str]:
    """``count`` distinct queries of ``words`` content words sampled from random documents.

    Content words are alphabetic, at least four letters and not common function words, so
    a query looks like what someone half-remembering a passage would type.
    """
    if not docs:
        raise ValueError("cannot draw queries from an empty corpus")
    rng = random.Random(seed)
    queries: list[str] = []
    seen: set[str] = set()
    attempts = 0
    while len(queries) < count:
        attempts += 1
        if attempts > count * 200:
            raise ValueError(
                f"the corpus yields only {len(queries)} distinct {words}-word queries; "
                "use a larger corpus or fewer queries"
            )
        doc = docs[rng.randrange(len(docs))]
        candidates = list(
            dict.fromkeys(
                w.lower() for w in _CONTENT_WORD.findall(doc) if w.lower() not in _STOPWORDS
            )
        )
        if len(candidates) < words:
            continue
        query = " ".join(rng.sample(candidates, words))
        if query not in seen:
            seen.add(query)
            queries.append(query)
    return queries


def resize_docs(docs: Sequence[str], size: int, *, seed: int = 99) -> list[str]:
    """Exactly ``size`` documents: a seeded sample, or the corpus repeated to reach it.

    Repeats are whole passes over a shuffled copy, so every document appears either
    ``size // len(docs)`` or one more time.
    """
    if not docs:
        raise ValueError("cannot resize an empty corpus")
    rng = random.Random(seed)
    if size <= len(docs):
        indexes = sorted(rng.sample(range(len(docs)), size))
        return [docs[i] for i in indexes]
    out: list[str] = list(docs)
    while len(out) < size:
        order = list(range(len(docs)))
        rng.shuffle(order)
        out.extend(docs[i] for i in order[: size - len(out)])
    return out


def _load_analyze() -> tuple[Callable[[str], list[str]], str]:
    try:
        from supercontext_lab.reading.words import analyze
    except ImportError:
        return _simple_tokens, "benchmarks.corpus (lower-cased words)"
    return analyze, "supercontext_lab.reading.words.analyze"


_WORD = re.compile(r"[^\W_]+")


def _simple_tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


_ANALYZE, _ANALYZE_NAME = _load_analyze()


def tokenize(text: str) -> list[str]:
    """Split text into search terms exactly as the memory tree does, for the peers too."""
    return _ANALYZE(text)


def tokenizer_name() -> str:
    """Which function :func:`tokenize` uses (recorded in the results)."""
    return _ANALYZE_NAME
