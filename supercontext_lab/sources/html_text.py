"""Readable text from HTML, read in one linear pass.

A web page is hostile input. ``html.parser`` scans an unterminated construct again from
its start at every ``<`` it cannot close, so ``"<a " * 70_000`` (200 kB) takes minutes,
and pages of ``<x`` or ``<?`` repeated are as bad. Here one regular expression splits the
page into text and markup, following the HTML standard's rules for where each construct
ends: a comment at ``-->``; ``<!…>``, ``<?…>`` and ``</`` not followed by a letter at the
next ``>``; a tag at the first ``>`` outside a quoted attribute value; the text of
``<script>``, ``<style>``, ``<title>`` and their kin at their own end tag. As in a
browser, a construct that never ends runs to the end of the page.

Every alternative of that expression, once its first characters match, matches to its
end (a terminator or the end of the text) without ever failing part way, so the regular
expression engine never backtracks over what it read and never starts a scan twice: the
split is linear, and runs in C. Python code then runs once per *kind* of thing, not once
per tag: block tags become line breaks by one ``map``, entities are decoded through a
cache of the distinct ones, and only the few elements that change how text is read
(``<pre>``, the skipped containers, the raw-text elements) are looked at one by one.
"""

from __future__ import annotations

import html
import operator
import re
from functools import lru_cache
from itertools import compress, product, repeat

__all__ = ["html_to_text"]

# Containers whose content is markup that is not shown: skipped by depth.
_SKIPPED = ("template", "svg", "head")
# Elements whose content is raw text up to their own end tag (the standard's RAWTEXT,
# script data and RCDATA): nothing inside them is markup. The dropped ones are never
# shown (``noscript`` as in a browser that runs scripts); entities are decoded in RCDATA.
_RAW_DROPPED = ("script", "style", "noscript", "iframe", "noembed", "noframes")
_RAW_SHOWN = ("title", "textarea", "xmp")
_RCDATA = frozenset({"title", "textarea"})
_BLOCKS = (
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
    "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
    "td", "th", "title", "tr", "ul",
)  # fmt: skip

# A tag name ends at whitespace, "/" or ">" (so "<a<b>" is one tag named "a<b").
_NAME_END = r"(?=[\t\n\f\r />]|\Z)"
# A tag after its name, up to its ">". Only "=" can open a value: quoted (an unterminated
# one runs to the end of the text) or unquoted (up to whitespace or ">"); anything else,
# quotes included, belongs to an attribute's name. Written "unrolled" (a run of name
# characters, then one "=" with its value, then a run again), so the loop stops only at
# ">" or the end, and each turn of it reads at least "=" and its value.
_ATTRS_BODY = r"""[^>=]*(?:=[\t\n\f\r ]*(?:"[^"]*(?:"|\Z)|'[^']*(?:'|\Z)|[^\t\n\f\r >]*)[^>=]*)*"""
_ATTRS = _ATTRS_BODY + r"(?:>|\Z)"


def _name(name: str) -> str:
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in name)


def _raw_element(name: str) -> str:
    # The start tag (after its "<"), then everything up to (not including) "</name" or
    # the end, written "unrolled" (runs of non-"<", then one "<" that does not close) so
    # that it scans in C without backtracking.
    return rf"{_name(name)}{_NAME_END}{_ATTRS}[^<]*(?:<+(?!/{_name(name)}{_NAME_END})[^<]*)*"


def _spellings(names: tuple[str, ...]) -> frozenset[str]:
    """Every ASCII upper/lower-case spelling of each name and of its end tag ("/name"):
    tag names are compared without case, and a set lookup is cheaper than lower()."""
    found: set[str] = set()
    for name in names:
        for letters in product(*({c.lower(), c.upper()} for c in name)):
            found.update(("".join(letters), "/" + "".join(letters)))
    return frozenset(found)


_SHOWN_FIRST = "".join(
    sorted({c for n in (*_RAW_SHOWN, "plaintext") for c in (n[0], n[0].upper())})
)
_TOKENS = re.compile(
    "<(?:"
    # Comments: "<!-->" and "<!--->" are empty ones; otherwise up to "-->" or "--!>".
    r"!--(?:-?>|[\s\S]*?(?:--!?>|\Z))"
    # Bogus comments: <!DOCTYPE …>, <![CDATA[…]]>, <?xml …?>, "</>" and "</ …>".
    r"|[!?][^>]*(?:>|\Z)|/(?![A-Za-z])[^>]*(?:>|\Z)"
    # Raw-text elements that are never shown, with their text.
    + "|"
    + "|".join(_raw_element(name) for name in _RAW_DROPPED)
    # Group 1 (without its "<"): a raw-text element that is shown, with its text, or
    # <plaintext> with the rest of the page. The lookahead lets other tags skip these
    # branches at once.
    + rf"|(?=[{_SHOWN_FIRST}])("
    + "|".join(_raw_element(name) for name in _RAW_SHOWN)
    + rf"|{_name('plaintext')}{_NAME_END}[\s\S]*)"
    # A self-closed <svg/> opens nothing (a foreign element, where "/>" counts).
    + rf"|{_name('svg')}{_NAME_END}{_ATTRS_BODY}(?<=/)>"
    # Group 2: the name of any other tag ("/name" for an end tag).
    + rf"|(/?[A-Za-z][^\t\n\f\r />]*){_ATTRS}"
    ")"
)
_TAG_HEAD = re.compile(r"(/?)([A-Za-z][^\t\n\f\r />]*)" + _ATTRS_BODY)
_BLOCK_SPELLINGS = _spellings(_BLOCKS)
# Tags that change how the text after them is read: <pre> and the skipped containers,
# with what each does to the depth of <pre> and to that of skipped containers.
_STATE_TAGS = {
    spelling: (
        (-1 if spelling[0] == "/" else 1) * (spelling.lower().endswith("pre")),
        (-1 if spelling[0] == "/" else 1) * (not spelling.lower().endswith("pre")),
    )
    for spelling in _spellings(("pre", *_SKIPPED))
}

# Line breaks (what str.splitlines breaks at): outside <pre> one is just a space.
_LINE_BREAKS = ("\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_ASCII_BREAKS = str.maketrans(dict.fromkeys(_LINE_BREAKS[:7], " "))
# Characters that mark a block's line break until the end; one absent from the page is
# chosen, so the mark never collides with text.
_MARK_CANDIDATES = ("\x00", "\uffff", "\ufffe", "\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3")
# Character references, as html.unescape finds them; each distinct one is decoded once.
_ENTITY = re.compile(r"(&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?))")
# What the standard makes of the first 256 code points (NUL, the C1 range read as
# windows-1252, ...), and of the noncharacters beyond them, as html.unescape decides.
_LOW_CODEPOINTS = tuple(html.unescape(f"&#{n};") for n in range(256))
_NONCHARACTERS = frozenset(
    [
        *range(0xFDD0, 0xFDF0),
        *(plane + tail for plane in range(0, 0x110000, 0x10000) for tail in (0xFFFE, 0xFFFF)),
    ]
)
_CACHE_LIMIT = 20_000
_CACHED_LENGTH = 40


def _spaces_for_breaks(text: str) -> str:
    if text.isascii():
        return text.translate(_ASCII_BREAKS)
    for brk in _LINE_BREAKS:
        if brk in text:
            text = text.replace(brk, " ")
    return text


def _special_codes(in_pre: bool) -> dict[int, str]:
    """Code points a numeric reference does not simply stand for: the first 256 (NUL and
    the C1 range read as windows-1252, as the standard and html.unescape do), surrogates
    and anything past U+10FFFF (U+FFFD), noncharacters (nothing); outside <pre> a line
    break is a space."""
    special = dict(enumerate(_LOW_CODEPOINTS))
    special.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))
    special.update(dict.fromkeys(_NONCHARACTERS, ""))
    special[0x110000] = "\ufffd"
    if not in_pre:
        special.update((code, " ") for code, text in special.items() if text in _LINE_BREAKS)
        special.update((ord(brk), " ") for brk in _LINE_BREAKS)
    return special


_SPECIAL_CODES = {False: _special_codes(False), True: _special_codes(True)}
_BASES = {True: 16, False: 10}


def _numeric_references(references: list[str], in_pre: bool) -> list[str]:
    """The text of numeric references (``&#233;``, ``&#xE9``), decoded here rather than by
    html.unescape, which hands every digit to int() (which refuses more than 4,300 of
    them) and costs several Python calls per reference. Every step is one C-level map
    over all of them: a page of a million distinct references costs no Python per one."""
    hexadecimal = list(map(str.startswith, references, repeat(("&#x", "&#X"))))
    # "&#x00e9;" -> "e9": hex digits hold no "&", "#", "x" or "X".
    digits = list(map(str.lstrip, map(str.rstrip, references, repeat(";")), repeat("&#xX0")))
    if "" in digits:  # "&#0;", "&#x0"
        digits = [text or "0" for text in digits]
    if max(map(len, digits), default=0) > 7:  # past U+10FFFF, and int() would be slow
        # 1114112 is 0x110000 and more read as hex: both clamp to it, read as U+FFFD.
        digits = [text if len(text) <= 7 else "1114112" for text in digits]
    codes = list(map(min, map(int, digits, map(_BASES.__getitem__, hexadecimal)), repeat(0x110000)))
    shown = map(chr, map(min, codes, repeat(0x10FFFF)))
    return list(map(_SPECIAL_CODES[in_pre].get, codes, shown))


class _References(dict[str, str]):
    """Decoded named character references by their source text, filled on first use."""

    def __init__(self, in_pre: bool) -> None:
        super().__init__()
        self.in_pre = in_pre

    def __missing__(self, reference: str) -> str:
        decoded = html.unescape(reference)
        if not self.in_pre and not decoded.isprintable():
            decoded = _spaces_for_breaks(decoded)  # a line break is a space outside <pre>
        if len(reference) <= _CACHED_LENGTH:
            self[reference] = decoded
        return decoded


_REFERENCES = {False: _References(in_pre=False), True: _References(in_pre=True)}


def _decode(text: str, in_pre: bool) -> str:
    if "&" not in text:
        return text
    pieces = _ENTITY.split(text)
    references = pieces[1::2]
    cache = _REFERENCES[in_pre]
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    decoded: list[str | None] = list(map(cache.get, references))
    if None in decoded:
        # Every distinct numeric reference may be new (a page can hold a million of
        # them): those not known yet are decoded together, in C-level maps; named ones
        # (few distinct) one by one through the cache.
        missing = list(compress(range(len(decoded)), map(operator.is_, decoded, repeat(None))))
        names = list(map(references.__getitem__, missing))
        numeric = list(map(str.startswith, names, repeat("&#")))
        keys = list(compress(names, numeric))
        values = _numeric_references(keys, in_pre)
        found = dict(zip(compress(missing, numeric), values, strict=False))
        decoded = list(map(found.get, range(len(decoded)), decoded))
        short = map(operator.ge, repeat(_CACHED_LENGTH), map(len, keys))
        cache.update(compress(zip(keys, values, strict=True), short))
        if None in decoded:
            decoded = [
                cache[references[i]] if text is None else text for i, text in enumerate(decoded)
            ]
    pieces[1::2] = decoded
    return "".join(pieces)


@lru_cache(maxsize=len(_MARK_CANDIDATES))
def _block_marks(mark: str) -> dict[str, str]:
    return dict.fromkeys(_BLOCK_SPELLINGS, mark)


class _Reader:
    """The text read so far. Text is read in one of three ways: hidden (inside a skipped
    container), as it is (inside <pre>) or with line breaks as spaces; ``mark`` stands for
    a block's line break until the end."""

    def __init__(self, mark: str) -> None:
        self.mark = mark
        self.parts: list[str] = []

    def text(self, text: str, *, hidden: bool, in_pre: bool) -> None:
        """Text and block marks read one way."""
        if hidden:
            if self.mark in text:  # the content is hidden, its line breaks are kept
                self.parts.append(self.mark)
        elif in_pre:
            self.parts.append(_decode(text, in_pre=True))
        else:
            self.parts.append(_decode(_spaces_for_breaks(text), in_pre=False))

    def shown_raw(self, token: str, *, hidden: bool) -> None:
        """A raw-text element that is shown, with its text, or <plaintext> with the rest
        of the page (``token`` is its source without the leading ``<``)."""
        head = _TAG_HEAD.match(token)
        assert head is not None  # every such token starts with its tag name
        name, body = head.group(2).lower(), token[head.end() + 1 :]
        if name == "title":
            # The title lives in <head>, which is otherwise skipped: keep it as a line.
            self.parts += (self.mark, _decode(_spaces_for_breaks(body), in_pre=False))
        elif name in _RCDATA:
            self.text(body, hidden=hidden, in_pre=False)
        else:  # <xmp>, <plaintext>: shown as they are, entities and all
            self.text(body.replace("&", "&amp;"), hidden=hidden, in_pre=False)


def _read(
    pieces: list[str], shown_raw: list[str | None], names: list[str | None], reader: _Reader
) -> None:
    """Hand the pieces to ``reader``, cut where the way text is read changes."""
    flags = [False] * len(pieces)
    flags[1::3] = map(bool, shown_raw)
    flags[2::3] = map(_STATE_TAGS.__contains__, names)
    pre = skip = start = 0
    for index in compress(range(len(pieces)), flags):
        if index % 3 == 1:
            reader.text("".join(pieces[start:index]), hidden=skip > 0, in_pre=pre > 0)
            reader.shown_raw(shown_raw[index // 3] or "", hidden=skip > 0)
            start = index + 1
            continue
        pre_step, skip_step = _STATE_TAGS[names[index // 3] or ""]
        new_pre, new_skip = max(pre + pre_step, 0), max(skip + skip_step, 0)
        if (new_pre > 0) != (pre > 0) or (new_skip > 0) != (skip > 0):
            # This tag's own block mark (<pre>'s) goes with the text before it.
            reader.text("".join(pieces[start : index + 1]), hidden=skip > 0, in_pre=pre > 0)
            start = index + 1
        pre, skip = new_pre, new_skip
    reader.text("".join(pieces[start:]), hidden=skip > 0, in_pre=pre > 0)


def html_to_text(html_text: str) -> str:
    """Readable text from HTML: scripts, styles and tags dropped, whitespace collapsed.

    Block elements become line breaks; runs of spaces collapse to one and blank lines to
    none. Linear in the length of the input (see the module docstring); never raises.
    """
    mark = next((c for c in _MARK_CANDIDATES if c not in html_text), None)
    if mark is None:  # a page holding every candidate: NUL is shown as U+FFFD instead
        mark, html_text = "\x00", html_text.replace("\x00", "\ufffd")
    pieces = _TOKENS.split(html_text)  # text, shown raw element, tag name, text, ...
    shown_raw, names = pieces[1::3], pieces[2::3]
    pieces[1::3] = repeat("", len(shown_raw))
    pieces[2::3] = map(_block_marks(mark).get, names, repeat(""))
    reader = _Reader(mark)
    _read(pieces, shown_raw, names, reader)
    # A run of block marks is one line break: fewer (empty) lines to go through below.
    text = re.sub(f"{mark}[{mark} ]*", "\n", "".join(reader.parts))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)
