"""html_to_text reads markup the way a browser does, in one linear pass."""

from __future__ import annotations

import html

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supercontext_lab.sources.html_text import _numeric_references, html_to_text


@pytest.mark.parametrize(
    ("page", "text"),
    [
        ('<a title="x > y">link</a> after', "link after"),
        ("<a title='<p>'>one</a>", "one"),
        ('<a b"c>d', "d"),
        ("a<!-->b<!--->c<!-- x --->d<!-- y --!>e", "abcde"),
        ("a<!DOCTYPE html>b<?xml x?>c<![CDATA[x]]>d</ x>e</>f", "abcdef"),
        ("<SCRIPT>if (a<b) document.write('</p>')</SCRIPT >after", "after"),
        ("<style>p > a {}</style><noscript><p>js</p></noscript>kept", "kept"),
        ("<textarea>&lt;b&gt; <i>x</i></textarea>", "<b> <i>x</i>"),
        ("<xmp>&amp; <b></xmp>", "&amp; <b>"),
        ("before<plaintext>a <b>c</b> &amp;", "beforea <b>c</b> &amp;"),
        ("<svg><text>hidden</text></svg>shown", "shown"),
        ("<svg/>shown", "shown"),
        ("<template><p>t</p></template>kept", "kept"),
        ("<pre>a\n  b</pre>c\nd", "a\nb\nc d"),
        ("<pre><pre>x\ny</pre>z\nw</pre>v", "x\ny\nz\nw\nv"),
        ("</pre></pre>a\nb", "a b"),
        ("<p>x&#10;y</p><pre>u&#10;v</pre>", "x y\nu\nv"),
        ("a < b and c<<3", "a < b and c<<3"),
        ("<a<b>c", "c"),
        ("x\x00y&#0;z", "x\x00y\ufffdz"),
        (
            "\x00\uffff\ufffe\ufdd0\ufdd1\ufdd2\ufdd3<p>a</p>b",
            "\ufffd\uffff\ufffe\ufdd0\ufdd1\ufdd2\ufdd3\na\nb",
        ),
        ("<DiV>a</dIv>b", "a\nb"),
        ("<p>a" + "&#" + "9" * 5000 + ";b", "a\ufffdb"),
        ("&#" + "0" * 5000 + "65;", "A"),
    ],
)
def test_markup_reads_as_a_browser_shows_it(page: str, text: str) -> None:
    assert html_to_text(page) == text


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(["&", "#", "x", "1", "9", "0", ";", "a", "m", "p", "lt", " ", "é"])
    ).map("".join)
)
def test_references_decode_as_html_unescape_does(text: str) -> None:
    assert html_to_text(text).split() == html.unescape(text).split()


def test_numeric_references_decode_as_html_unescape_does() -> None:
    codes = [*range(0x3000), *range(0xD7F0, 0xE010), *range(0xFDC0, 0x10100, 7), 0x10FFFF, 0x110000]
    for code in codes:
        refs = [f"&#{code};", f"&#x{code:X}", f"&#000{code}"]
        assert _numeric_references(refs, in_pre=True) == [html.unescape(r) for r in refs]
