"""What every command shares: the progress line on stderr, plurals, the --workspace folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.cli.common import UsageProblem, plural, workspace_argument


def test_plural_counts_one_apart() -> None:
    assert [plural(n, "token") for n in (0, 1, 2)] == ["0 tokens", "1 token", "2 tokens"]


def test_a_workspace_argument_is_a_folder_or_the_shipped_demo(tmp_path: Path) -> None:
    assert workspace_argument(str(tmp_path)).root == tmp_path.resolve()
    assert workspace_argument(None).root.name == "demo-workspace"
    with pytest.raises(UsageProblem) as refused:
        workspace_argument(str(tmp_path / "gone"))
    assert (
        str(refused.value) == f"supercontext-lab: workspace folder not found: {tmp_path / 'gone'}"
    )


def test_on_a_terminal_the_progress_is_one_line_rewritten_then_cleared() -> None:
    import io

    from supercontext_lab.cli.common import ProgressLine
    from supercontext_lab.harness.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    line = ProgressLine(stream)
    line(Progress("asking the model", "local:smollm2 (call 1 of up to 8)", 3.2))
    line(Progress("asking the model", "local:smollm2 (call 1 of up to 8)", 4.4))
    line(Progress("evil \x1b]0;title\x07", "", 5.0))
    line.close()
    text = stream.getvalue()
    assert text.count("\n") == 0
    parts = text.split(ProgressLine.CLEAR)
    assert parts[1:] == [
        "supercontext-lab: asking the model local:smollm2 (call 1 of up to 8) · 3 s",
        "supercontext-lab: asking the model local:smollm2 (call 1 of up to 8) · 4 s",
        "supercontext-lab: evil \\x1b]0;title\\x07 · 5 s",
        "",
    ]


def test_off_a_terminal_a_long_phase_repeats_its_line_now_and_then() -> None:
    import io

    from supercontext_lab.cli.common import ProgressLine
    from supercontext_lab.harness.progress import Progress

    stream = io.StringIO()
    line = ProgressLine(stream, heartbeat_s=15)
    for second in range(40):
        line(Progress("asking the model", "m", float(second)))
    line.close()
    assert stream.getvalue().splitlines() == [
        "supercontext-lab: asking the model m (0.0 s)",
        "supercontext-lab: asking the model m (15.0 s)",
        "supercontext-lab: asking the model m (30.0 s)",
    ]


def test_whole_number_says_in_one_line_what_is_wrong() -> None:
    import argparse

    from supercontext_lab.cli.common import whole_number

    port = whole_number(1, 65535, what="a port number")
    assert port("8000") == 8000
    for text, said in [
        ("x", "expected a port number, not 'x'"),
        ("0", "must be between 1 and 65535, not 0"),
        ("70000", "must be between 1 and 65535, not 70000"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError, match=said):
            port(text)
    with pytest.raises(argparse.ArgumentTypeError, match="must be at least 1, not 0"):
        whole_number(1)("0")
