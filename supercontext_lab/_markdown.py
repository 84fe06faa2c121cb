"""Markdown escaping for untrusted text, shared by every renderer of user-visible Markdown.

HTML-significant characters become entities; every other ASCII punctuation character is
backslash-escaped (CommonMark allows it for all of them), so untrusted text can open no
link, emphasis, heading, list, table, autolink or raw HTML.
"""

from __future__ import annotations

import string

__all__ = ["md_block", "md_inline"]

_MD_ESCAPES = {ord(ch): "\\" + ch for ch in string.punctuation}
_MD_ESCAPES.update({ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"})


def md_inline(text: str) -> str:
    """Escape untrusted text for one markdown line (whitespace runs collapse)."""
    return " ".join(text.split()).translate(_MD_ESCAPES)


def md_block(text: str) -> str:
    """Escape untrusted multi-line text, keeping line breaks and blank-line paragraphs."""
    paragraphs: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip():
            paragraphs[-1].append(md_inline(line))
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join("\\\n".join(lines) for lines in paragraphs if lines)
