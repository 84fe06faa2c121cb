"""Markdown escaping: untrusted text renders as the same text, and as nothing else."""

from __future__ import annotations

import html
import re

import mistune
import pytest

from supercontext_lab._markdown import md_block, md_inline

# A CommonMark renderer that lets raw HTML through, as a notebook's would; mistune comes
# with jupyter_server (through nbconvert).
render = mistune.create_markdown(escape=False)

HOSTILE = [
    "[click](javascript:alert(1))",
    "![pixel](http://tracker.example/p.png)",
    "<script>alert(1)</script>",
    "<https://evil.example>",
    "# not a heading",
    "*not em* __not bold__ `not code`",
    "| a | b |",
    "1. not a list",
    "- not a list either",
    "> not a quote",
    "&amp; stays &lt;literal&gt;",
    "a\\*b \\ c",
]

_TAG = re.compile(r"<[^>]*>")


def _shown(rendered: str) -> str:
    """The text a reader sees: tags dropped, entities decoded."""
    return html.unescape(_TAG.sub("", rendered)).strip()


@pytest.mark.parametrize("text", HOSTILE)
def test_inline_text_renders_as_itself_in_one_paragraph(text: str) -> None:
    rendered = render(md_inline(text))
    assert isinstance(rendered, str)
    assert _TAG.findall(rendered) == ["<p>", "</p>"]
    assert _shown(rendered) == text


def test_inline_collapses_whitespace_to_one_line() -> None:
    assert md_inline("  budget\n\n  is\tdue ") == "budget is due"


def test_a_block_keeps_its_lines_and_paragraphs_and_nothing_more() -> None:
    text = "first [link](http://x)\nsecond <b>\n\n\n# third\n  \n- fourth"
    rendered = render(md_block(text))
    assert isinstance(rendered, str)
    assert _TAG.findall(rendered) == ["<p>", "<br />", "</p>", "<p>", "</p>", "<p>", "</p>"]
    paragraphs = [_shown(part) for part in rendered.split("</p>") if part.strip()]
    assert paragraphs == ["first [link](http://x)\nsecond <b>", "# third", "- fourth"]


def test_an_empty_or_blank_block_is_empty() -> None:
    assert md_block("") == ""
    assert md_block(" \n\t\n") == ""
