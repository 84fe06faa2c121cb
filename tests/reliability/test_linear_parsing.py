"""Hostile envelopes parse in linear time, inside the caller's deadline.

Every parser of the envelope (parse_context_bundle, fit_bundle, bundle_warnings,
bundle_rejection_reason) gets a megabyte of each hostile class of
``benchmarks/envelope_parsers.py`` (runs of quotes, spaces, backticks, ``[`` and ``(``,
key-like lines, deep list items, one long line, many lines) and must finish in under two
seconds, and in no more than a generous multiple of what a harmless envelope of the same
size takes in the same process. The parsers run in a child process with a time limit, so
a quadratic parser fails the test instead of holding the suite for minutes. The ratio
itself, the 2x target, is measured by ``python -m benchmarks parsers``.

The look-alike rule (``bundle.lookalikes.neutralise``, which every envelope written or sent
goes through) gets a megabyte of each class built against it (look-alike and near-miss
tags, marks or brackets before long invisible runs, heading and rule lines, runs never
closed, look-alikes beyond the first plane) under the same bounds.

Then the two paths users met: a 2 MB hostile reply through ``Thread.send`` within the
scout's 10 s budget, and ``supercontext-lab bundle check`` on a hostile megabyte.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.envelope_parsers import HOSTILE, hostile
from supercontext_lab.harness import Thread
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel

from .support import ORCHESTRATOR_REPLY, scripted_orchestrator, timed_in_child

REPO = Path(__file__).resolve().parents[2]
SIZE = 1_000_000
ABSOLUTE_S = 2.0
# Generous on purpose (a loaded CI machine, a cold cache): the target itself is 2x.
RELATIVE = 10.0

_CHILD = """
import json, sys, time
from benchmarks.envelope_parsers import PARSERS, harmless, hostile
name, size = sys.argv[1], int(sys.argv[2])
bad, good = hostile(name, size), harmless(size)
out = {}
for parser, function in PARSERS.items():
    texts = [bad, good]
    if parser == "bundle_rejection_reason":
        texts = [text.removesuffix("[/context_bundle]") for text in texts]
    times = []
    for text in texts:
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            function(text)
            best = min(best, time.perf_counter() - started)
        times.append(best)
    out[parser] = times
print(json.dumps(out))
"""


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_megabyte_parses_in_linear_time(name: str) -> None:
    """A hostile megabyte of each class: every envelope parser under 2 s, near a harmless one"""
    times = timed_in_child(
        _CHILD, name, str(SIZE), what=f"{name}: the parsers on {SIZE:,} characters"
    )
    for parser, (hostile_s, harmless_s) in times.items():
        assert hostile_s < ABSOLUTE_S, f"{name}: {parser} took {hostile_s:.2f} s"
        assert hostile_s < max(RELATIVE * harmless_s, 0.05), (
            f"{name}: {parser} took {hostile_s * 1e3:.1f} ms, "
            f"a harmless envelope {harmless_s * 1e3:.1f} ms"
        )


def test_a_two_megabyte_hostile_reply_keeps_the_scout_budget(tmp_path: Path) -> None:
    """A 2 MB hostile reply goes through Thread.send inside the scout's 10 s budget"""
    reply = hostile("runs of quotes", 2_000_000)
    thread = Thread(
        Workspace(tmp_path),
        scout_model=ScriptedModel([reply]),
        orchestrator_model=scripted_orchestrator(),
        super_context_enabled=True,
        scout_timeout_s=10.0,
    )
    started = time.perf_counter()
    result = thread.send("Help me check the grant renewal budget")
    elapsed = time.perf_counter() - started
    assert result.reply == ORCHESTRATOR_REPLY
    assert result.prepared and result.envelope is not None
    assert len(result.envelope) <= thread.definition.max_result_chars
    assert elapsed < 10.0, f"Thread.send took {elapsed:.1f} s"


def test_bundle_check_on_a_hostile_megabyte(tmp_path: Path) -> None:
    """supercontext-lab bundle check reads a hostile megabyte in seconds"""
    path = tmp_path / "reply.txt"
    path.write_text(hostile("runs of quotes", SIZE), encoding="utf-8")
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "supercontext_lab", "bundle", "check", str(path)],
            capture_output=True,
            text=True,
            timeout=90,
            cwd=REPO,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("bundle check took more than 90 s on a hostile megabyte")
    elapsed = time.perf_counter() - started
    assert "is not true or false" in done.stdout
    assert done.returncode in (0, 1), done.stderr
    assert elapsed < 10.0, f"bundle check took {elapsed:.1f} s"


#: Text built to make the look-alike rule rescan: each class a megabyte.
HOSTILE_LOOKALIKES = {
    "look-alike tags": "[/\u0441ontext_bundle]",
    "near-miss tags": "[\u0441ontext_bundl [/c\u03bfntext bundle\u0301 \u3010context ",
    "a bracket before invisible characters": "[" + "\u200b" * 4096,
    "marks before invisible characters": "## " + "\u200b" * 4096 + "x\n",
    "heading lines": "## Prepared context (super context)\n",
    "a title before endless blanks": "## Prepared context (super context)" + " " * 4096 + "x\n",
    "an underline never ended": "Prepared context (super context)\n=" + "= " * 2048 + "x\n",
    "rule lines": "---\n",
    "a rule never ended": "-" + " -" * 2048 + " x\n",
    "dash lines": "\u2014\u2014\n",
    "look-alikes beyond the first plane": "[\U0001d41c\U0001d428\U0001d427\U0001d42d\U0001d41e"
    "\U0001d431\U0001d42d_bundle] \U0001f600",
}

_NEUTRALISE_CHILD = """
import json, sys, time
from benchmarks.envelope_parsers import harmless
from supercontext_lab.bundle.lookalikes import neutralise
unit, size = json.loads(sys.argv[1]), int(sys.argv[2])
bad, good = (unit * (size // len(unit) + 1))[:size], harmless(size)
neutralise("x")  # the look-alike classes are built on first use
times = []
for text in (bad, good):
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        neutralise(text)
        best = min(best, time.perf_counter() - started)
    times.append(best)
print(json.dumps(times))
"""


@pytest.mark.parametrize("name", list(HOSTILE_LOOKALIKES))
def test_neutralising_a_hostile_megabyte_is_linear(name: str) -> None:
    """The look-alike rule on a hostile megabyte: under 2 s, near a harmless envelope"""
    unit = HOSTILE_LOOKALIKES[name]
    hostile_s, harmless_s = timed_in_child(
        _NEUTRALISE_CHILD,
        json.dumps(unit),
        str(SIZE),
        what=f"{name}: neutralise on {SIZE:,} characters",
    )
    assert hostile_s < ABSOLUTE_S, f"{name}: neutralise took {hostile_s:.2f} s"
    assert hostile_s < max(RELATIVE * harmless_s, 0.05), (
        f"{name}: neutralise took {hostile_s * 1e3:.1f} ms, "
        f"a harmless envelope {harmless_s * 1e3:.1f} ms"
    )
