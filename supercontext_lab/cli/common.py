"""What every command of the command line shares: the program name, one-line errors, how
input is read (a file or stdin, a text argument, a ``--workspace`` folder), how output is
written, and how a long run shows progress on stderr.

Everything the command line prints may hold text from outside (a model's output, a
workspace's files, a web page, a dataset), so it is written through :func:`emit`, which
shows every control character as visible text (``\\x1b``) instead of handing it to the
terminal: a hostile summary cannot clear the screen, move the cursor, retitle the window
or print a fake "accepted". Newlines and tabs stay, as layout. ``--json`` output goes
through :func:`emit_json`: JSON escapes the same characters, and it is always written as
UTF-8, whatever the locale.

While a scout run or a turn is under way, :class:`ProgressLine` shows what it is doing on
stderr (:func:`progress_on_stderr`): one line rewritten in place on a terminal, plain lines
otherwise (a new one when the phase changes, and every 15 s while it does not). stdout
keeps the result alone, so ``--json`` stays one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn, TextIO

from .._confine import read_limited
from ..errors import PathRefusedError, SupercontextError

if TYPE_CHECKING:
    from ..harness.progress import Progress, RunProgress
    from ..sources.workspace import Workspace

__all__ = [
    "MAX_INPUT_BYTES",
    "NO_PROGRESS_HELP",
    "PROG",
    "Parser",
    "ProgressLine",
    "UsageProblem",
    "emit",
    "emit_json",
    "plural",
    "printable",
    "progress_on_stderr",
    "read_text_input",
    "text_argument",
    "whole_number",
    "workspace_argument",
]

PROG = "supercontext-lab"

MAX_INPUT_BYTES = 8 << 20
"""The most a command reads from a file or stdin it is given (a model output, a message)."""

# C0 controls but newline and tab, DEL, C1 controls (U+009B is a one-character CSI), the
# bidirectional embeddings, overrides, isolates and marks (which reorder what is shown),
# and lone surrogates (which no terminal encoding can carry).
_UNPRINTABLE_CODES = (
    *range(0x09),
    *range(0x0B, 0x20),
    *range(0x7F, 0xA0),
    0x061C,
    0x200E,
    0x200F,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    *range(0xD800, 0xE000),
)
# Each of them and its visible escape, applied by str.translate: in C, and as fast on a
# line made only of them as on ordinary text (a regular expression calling back into
# Python for each match is a hundred times slower on a flood of them).
_ESCAPES = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in _UNPRINTABLE_CODES
}
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in _UNPRINTABLE_CODES if code > 0x7E}
_SURROGATES = re.compile("[\ud800-\udfff]")


class UsageProblem(SupercontextError):
    """Bad command-line input: reported as one line with exit status 2.

    Only the command line raises it; its message is the whole line, program name first.
    """


class Parser(argparse.ArgumentParser):
    # argparse prints the whole usage block on errors; a one-line error is kinder in
    # scripts and keeps stderr greppable.
    def error(self, message: str) -> NoReturn:
        raise UsageProblem(f"{self.prog}: {message} (see --help)")


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab, every bidirectional
    control and every lone surrogate shown as a visible escape (``\\x1b``, ``\\u202e``)."""
    return text.translate(_ESCAPES)


def _encodable(text: str, stream: TextIO) -> str:
    """``text`` with what ``stream``'s encoding cannot carry written as ``\\u`` escapes."""
    encoding = stream.encoding or "utf-8"  # a StringIO has None
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        return text.encode("ascii", "backslashreplace").decode("ascii")
    return text


def emit(text: str = "", *, err: bool = False) -> None:
    """Write one line of text to stdout (or stderr), escaped by :func:`printable`; a
    character the stream's encoding cannot carry is written as a ``\\u`` escape."""
    stream = sys.stderr if err else sys.stdout
    stream.write(_encodable(printable(text) + "\n", stream))


def emit_json(value: Any) -> None:
    """Write ``value`` as one line of JSON to stdout, in UTF-8 whatever the locale.

    Lone surrogates become U+FFFD (no JSON reader has to accept them, and UTF-8 cannot
    carry them); the characters :func:`printable` escapes are written as ``\\u`` escapes
    (``json.dumps`` leaves DEL, C1 and bidirectional controls as they are), which only
    occur inside strings, so the result reads back to the same value."""
    text = _SURROGATES.sub("\ufffd", json.dumps(value, ensure_ascii=False))
    line = text.translate(_JSON_ESCAPES) + "\n"
    buffer = _binary(sys.stdout)
    if buffer is None:  # a text-only stream (a test's StringIO)
        sys.stdout.write(line)
        return
    sys.stdout.flush()
    buffer.write(line.encode("utf-8"))
    buffer.flush()


def plural(count: int, noun: str) -> str:
    """``1 token``, ``2 tokens``: a count and its noun, for the text output."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


class ProgressLine:
    """Shows a run's :class:`~supercontext_lab.harness.progress.Progress` on ``stream``
    (stderr): on a terminal one line, rewritten in place and cleared by :meth:`close`;
    otherwise a plain line when the phase changes and every ``heartbeat_s`` seconds while
    it does not, so a log shows the run is alive."""

    CLEAR = "\r\x1b[2K"

    def __init__(self, stream: TextIO, *, heartbeat_s: float = 15.0) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.heartbeat_s = heartbeat_s
        self._last = ""
        self._last_at = 0.0
        self._shown = False

    def __call__(self, progress: Progress) -> None:
        said = printable(progress.describe())
        if self.live:
            line = f"{PROG}: {said} · {progress.elapsed_s:.0f} s"
            width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
            if len(line) > width:
                line = line[: width - 1] + "…"
            self.stream.write(_encodable(self.CLEAR + line, self.stream))
        elif said != self._last or progress.elapsed_s - self._last_at >= self.heartbeat_s:
            line = f"{PROG}: {said} ({progress.elapsed_s:.1f} s)\n"
            self.stream.write(_encodable(line, self.stream))
            self._last, self._last_at = said, progress.elapsed_s
        else:
            return
        self._shown = True
        self.stream.flush()

    def close(self) -> None:
        """Clear the live line, so what follows starts on a clean line."""
        if self.live and self._shown:
            self.stream.write(self.CLEAR)
            self.stream.flush()


@contextlib.contextmanager
def progress_on_stderr(enabled: bool = True) -> Iterator[RunProgress | None]:
    """A :class:`~supercontext_lab.harness.progress.RunProgress` shown on stderr by a
    :class:`ProgressLine` for the block (``None`` when not ``enabled``)."""
    if not enabled:
        yield None
        return
    from ..harness.progress import RunProgress

    line = ProgressLine(sys.stderr)
    try:
        with RunProgress(line) as progress:
            yield progress
    finally:
        line.close()


NO_PROGRESS_HELP = (
    "print no progress on stderr (by default: a live line on a terminal, a plain line per "
    "phase otherwise; the result stays alone on stdout)"
)
"""The help of ``--no-progress``, for every command that shows a run's progress."""


def _binary(stream: TextIO) -> BinaryIO | None:
    """The bytes beneath a real text stream; None for a text-only one (a StringIO)."""
    return stream.buffer if isinstance(stream, io.TextIOWrapper) else None


def _decoded(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageProblem(
            f"{PROG}: {source} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); save it as UTF-8"
        ) from None


def read_text_input(source: str) -> str:
    """The UTF-8 text of the file ``source``, or of stdin for ``-``: at most
    :data:`MAX_INPUT_BYTES`, a regular file only (a FIFO or a device is refused, never
    waited on). Every problem is a :class:`UsageProblem`."""
    limit = MAX_INPUT_BYTES
    if source == "-":
        if sys.stdin is None:  # started with stdin closed (`<&-`)
            raise UsageProblem(f"{PROG}: stdin is closed; pipe the text in or name a file")
        stream = _binary(sys.stdin)
        if stream is None:  # a text-only stream (a test's StringIO)
            return sys.stdin.read(limit)
        try:
            data = stream.read(limit + 1)
        except OSError as exc:  # a hung-up terminal, a socket reset, ...
            raise UsageProblem(f"{PROG}: cannot read stdin: {exc.strerror or exc}") from None
        more, shown = len(data) > limit, "stdin"
    else:
        path, shown = Path(source), source
        if not path.exists():
            raise UsageProblem(f"{PROG}: no such file: {source}")
        try:
            data, more = read_limited(path, limit)
        except PathRefusedError as exc:
            raise UsageProblem(f"{PROG}: cannot read {source}: {exc}") from None
        except OSError as exc:
            raise UsageProblem(f"{PROG}: cannot read {source}: {exc.strerror or exc}") from None
    if more:
        raise UsageProblem(f"{PROG}: {shown} holds more than {limit >> 20} MiB; pass less")
    return _decoded(data[:limit], shown)


def whole_number(
    low: int, high: int | None = None, *, what: str = "a whole number"
) -> Callable[[str], int]:
    """An argparse ``type`` for a whole number from ``low`` (to ``high``), saying in one
    line what is wrong with another value ("expected a port number, not 'x'")."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}") from None
        if high is not None and not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, not {value}")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    return parse


def text_argument(value: str, what: str) -> str:
    """A text argument from the command line; one holding bytes that were not UTF-8
    (which Python keeps as lone surrogates) is refused."""
    if _SURROGATES.search(value):
        raise UsageProblem(f"{PROG}: {what} is not UTF-8 text; pass it as UTF-8")
    return value


def workspace_argument(path: str | None) -> Workspace:
    """The workspace folder ``--workspace`` names, else the shipped demo's copy; a folder
    that is not there is a :class:`UsageProblem`."""
    from ..sources.demo import open_workspace

    if path is not None and not Path(path).is_dir():
        raise UsageProblem(f"{PROG}: workspace folder not found: {path}")
    return open_workspace(path)
