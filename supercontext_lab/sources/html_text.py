"""Readable text from HTML, with the standard library's lenient parser."""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["html_to_text"]

_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
        "td", "th", "title", "tr", "ul",
    }
)  # fmt: skip


_SPACE = re.compile(r"\s+")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        elif tag in _SKIPPED:
            self.skip_depth += 1
        elif tag == "pre":
            self.pre_depth += 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # <br/>, <hr/>: a void element opens nothing that needs closing.
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag in _SKIPPED and self.skip_depth:
            self.skip_depth -= 1
        elif tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        # The title lives in <head>, which is otherwise skipped: keep it as the first line.
        if self.in_title or not self.skip_depth:
            # Outside <pre>, a line break in the source is just a space, as browsers show it.
            self.parts.append(data if self.pre_depth else _SPACE.sub(" ", data))


def html_to_text(html: str) -> str:
    """Readable text from HTML: scripts, styles and tags dropped, whitespace collapsed.

    Block elements become line breaks; runs of spaces collapse to one and blank lines to
    none. Never raises on any input.
    """
    parser = _TextExtractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; keep whatever was read before a failure
        pass
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)
