"""The trace timeline: a tool call's arguments and result shown whole, escaped, scrolling."""

from __future__ import annotations

import json
import re

from supercontext_lab.lab.widgets.trace import TraceTimeline, render_trace_html
from supercontext_lab.scout import TraceStep

LONG = {
    "query": "grant renewal budget",
    "hits": [
        {"key": f"note-{n}", "content": f"Fact number {n} <b>bold</b> & more."} for n in range(40)
    ],
}


def _tool(arguments: str, result: str, preview: str = "") -> TraceStep:
    return TraceStep(
        kind="tool",
        iteration=1,
        started_ms=0.0,
        duration_ms=2.0,
        tool="memory_recall",
        arguments=arguments,
        result_preview=preview or result[:300],
        result=result,
    )


def test_long_json_is_shown_whole_indented_escaped_and_scrolling() -> None:
    arguments = json.dumps({"query": "x" * 600, "namespace": "*"})
    result = json.dumps(LONG)
    html = render_trace_html([_tool(arguments, result)])

    boxes = re.findall(r'<pre class="scl-json" style="([^"]*)">(.*?)</pre>', html, re.DOTALL)
    assert len(boxes) == 2
    (args_style, args_text), (result_style, result_text) = boxes
    assert "overflow:auto" in args_style and "max-height" in result_style
    assert "x" * 600 in args_text  # whole, not clipped at a few hundred characters
    # Every hit is there, one key a line, and the markup in them is text.
    assert all(f"note-{n}" in result_text for n in range(40))
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; more." in result_text and "<b>bold" not in html
    assert "\n  &quot;hits&quot;: [\n" in result_text


def test_a_step_without_its_whole_result_shows_its_preview_and_plain_text_stays_text() -> None:
    step = TraceStep(
        kind="tool",
        iteration=1,
        started_ms=0.0,
        duration_ms=1.0,
        tool="web_fetch",
        arguments="not json <script>",
        result_preview='{"cut": "at three hund',
    )
    html = TraceTimeline([step]).html.value
    assert "not json &lt;script&gt;" in html and "<script>" not in html
    assert "{&quot;cut&quot;: &quot;at three hund" in html
