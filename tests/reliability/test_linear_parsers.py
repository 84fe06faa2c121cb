"""Every parser of untrusted text is linear: hostile markup and front matter of a few
megabytes are read in seconds, never minutes.

The bounds are absolute and generous (ten times or more what the parsers need on a busy
machine); the ratios against harmless input of the same size are measured in
``python -m benchmarks parsers``, not here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supercontext_lab.sources.frontmatter import parse_front_matter
from supercontext_lab.sources.html_text import html_to_text
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.tools.web import fetch_url

from .support import PageServer, finishes, write

MB = 1_000_000

#: Hostile pages of about 2 MB, each built to make a rescanning parser quadratic.
HOSTILE_PAGES = {
    "a-tag-opened-forever": "<a " * (2 * MB // 3),
    "letter-tags-never-closed": "<x" * MB,
    "unclosed-comment": "<!--" + "x" * 2 * MB,
    "comments-opened-forever": "<!--" * (MB // 2),
    "bang-repeated": "<!" * MB,
    "processing-instructions": "<?" * MB,
    "cdata-never-closed": "<![CDATA[" * (2 * MB // 9),
    "end-tags-never-closed": "</" * MB,
    "unclosed-double-quote": '<a href="' + "x" * 2 * MB,
    "quotes-opened-forever": '<a b="' * (MB // 3),
    "unclosed-attributes": "<a " + "b=c " * (MB // 2),
    "equal-signs": "<a " + "= " * MB,
    "deep-nesting": "<div>" * (2 * MB // 5),
    "deep-inline-nesting": "<span><b><i>" * (2 * MB // 12),
    "entity-flood": "&amp;" * (2 * MB // 5),
    "named-entity-junk": ("&" + "a" * 31 + " ") * (2 * MB // 33),
    "distinct-numeric-references": "".join(f"&#{n};" for n in range(1, 300_000)),
    "numeric-reference-of-2m-digits": "&#" + "9" * 2 * MB,
    "numeric-reference-of-2m-zeros": "&#" + "0" * 2 * MB + "65;",
    "script-without-end": "<script>" + "x<" * MB,
    "script-with-false-ends": "<script>" + "</scrip" * (2 * MB // 7),
    "lone-less-than-signs": "<" * 2 * MB,
}


@pytest.mark.parametrize("page", list(HOSTILE_PAGES.values()), ids=list(HOSTILE_PAGES))
def test_hostile_markup_is_read_in_linear_time(page: str) -> None:
    """html_to_text on 2 MB of hostile markup: done in seconds, never raising"""
    text = finishes(30, lambda: html_to_text(page))
    assert isinstance(text, str)
    assert "  " not in text and "\n\n" not in text


def test_text_around_hostile_markup_survives() -> None:
    """Text before an unterminated construct is kept; what the construct swallows is not"""
    page = "<p>kept one</p><p>kept two" + "<a " * 100_000
    assert html_to_text(page) == "kept one\nkept two"
    assert html_to_text("<title>T</title>before<!--" + "x" * 100_000) == "T\nbefore"
    assert html_to_text("shown<script>" + "<" * 100_000) == "shown"


def test_web_fetch_of_a_hostile_page_is_as_quick_as_a_plain_one(site: PageServer) -> None:
    """web_fetch of a 2 MB hostile page: returned within seconds, like a harmless one"""
    body = "<html><body><p>kernel notes</p>" + "<a " * (2 * MB // 3)
    url = site.page("/hostile.html", body)
    result = finishes(
        60, lambda: fetch_url(url, max_bytes=3 * MB, timeout=30, allow_private_addresses=True)
    )
    assert result.ok, result.content
    assert json.loads(result.content)["text"] == "kernel notes"


#: Front matter built to make a line-by-line reader quadratic.
HOSTILE_FRONT_MATTER = {
    "a-value-followed-by-2m-spaces": "---\nname: a" + " " * 2 * MB + "b\n---\nbody\n",
    "200k-continuation-lines": "---\nname: x\n" + "  more words\n" * 200_000 + "---\nbody\n",
    "200k-list-items": "---\ntags:\n" + "  - x\n" * 200_000 + "---\nbody\n",
    "a-list-of-600k-items": "---\ntags: [" + "a, " * 600_000 + "]\n---\nbody\n",
    "never-closed": "---\n" + "key: value\n" * 200_000,
}


@pytest.mark.parametrize(
    "text", list(HOSTILE_FRONT_MATTER.values()), ids=list(HOSTILE_FRONT_MATTER)
)
def test_hostile_front_matter_is_read_in_linear_time(text: str) -> None:
    """Front matter of 2 MB built to be quadratic: read in seconds, unclosed after 16 KiB: body"""
    front = finishes(30, lambda: parse_front_matter(text))
    finishes(30, lambda: front.get_list("tags"))
    assert not front.present or len(text) - len(front.body) <= 16 * 1024 + 16


def test_a_hostile_skill_and_memory_file_are_read_in_a_turn_of_seconds(tmp_path: Path) -> None:
    """A workspace whose SKILL.md and memory file hold quadratic front matter opens quickly"""
    hostile = "---\nname: a" + " " * MB + "b\ndescription: d\n---\nbody\n"
    write(tmp_path / "skills" / "slow" / "SKILL.md", hostile)
    write(tmp_path / "memory" / "global" / "slow.md", hostile)
    workspace = Workspace(tmp_path, allow_outside_links=False)
    skills = finishes(30, lambda: workspace.skills)
    assert [s.dir_name for s in skills] == ["slow"]
    finishes(60, lambda: workspace.memory.count())
