"""The panel's transcript chips: the conversation's title and date, the turn the run read
on hover, the turns around it on click; every piece of it escaped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from supercontext_lab import OfflineScoutModel, Workspace, run_scout
from supercontext_lab.bundle.records import Source
from supercontext_lab.conversations import demo_chat_export_path, import_conversations
from supercontext_lab.lab.widgets import BundlePanel
from supercontext_lab.testing import build_workspace

LETTER = "6a1f0c2e-5b7d-4e21-9c3a-0d4e8f1a2b3c"


def _summary_html(panel: BundlePanel) -> str:
    found: list[str] = []

    def walk(widget: Any) -> None:
        if isinstance(widget, widgets.HTML) and "scl-summary" in widget.value:
            found.append(widget.value)
        for child in getattr(widget, "children", ()):
            walk(child)

    walk(panel)
    (html,) = found
    return html


def _workspace(tmp_path: Path) -> Workspace:
    root = build_workspace(tmp_path / "ws", {"memory/global/bread.md": "Sourdough feeding.\n"})
    import_conversations(demo_chat_export_path(), root)
    return Workspace(root)


def test_a_transcript_chip_shows_the_title_and_opens_on_the_turns_around(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    run = run_scout(
        "When does Tomás send his letter of support?",
        workspace=workspace,
        model=OfflineScoutModel(),
    )
    assert run.envelope is not None and f"(transcript: {LETTER})" in run.envelope
    html = _summary_html(BundlePanel(run, workspace=workspace))
    assert "transcript: Letter of support from Tomás · 2026-11-27" in html
    assert LETTER not in html.split("<details")[0]  # the chip shows the title, not the id
    # The hover starts with the turns read; opened, the chip shows the turns around them.
    assert "conversation 6a1f0c2e-5b7d-4e21-9c3a-0d4e8f1a2b3c: turn" in html
    assert "3. User: Tomás just answered about his letter of support." in html


def test_a_transcript_chip_opens_on_the_turns_around_the_one_read(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    run = run_scout(
        "Which brake pads fit the gravel bike?", workspace=workspace, model=OfflineScoutModel()
    )
    (source,) = [s for s in run.sources.named if s.kind == "transcript"]
    from supercontext_lab.lab.widgets.cited import cited_sources

    text = cited_sources(run.sources, workspace)[source].text
    assert text.startswith("Gravel bike brake pads · 2026-11-15\n")
    assert ": turns 1, 2 of 2 read" in text
    assert "Around it" not in text  # both turns were read: nothing more to show


def test_the_turns_around_a_turn_read_in_a_long_conversation(tmp_path: Path) -> None:
    from supercontext_lab.eval import demo_dataset_path
    from supercontext_lab.lab.widgets.cited import cited_sources

    root = build_workspace(tmp_path / "ws", {})
    import_conversations(
        Path(demo_dataset_path()).parent / "public" / "longmemeval_sample.json", root
    )
    workspace = Workspace(root)
    run = run_scout(
        "Where did I attend the Imagine Dragons concert?",
        workspace=workspace,
        model=OfflineScoutModel(),
    )
    text = cited_sources(run.sources, workspace)[Source("transcript", "answer_2952aee4")].text
    head, _, rest = text.partition("\n\n")
    assert head.startswith("I'm trying to plan out my summer concert schedule")
    assert "of 12 read" in head
    read, _, around = rest.partition("\n\nAround it:\n")
    assert "Xfinity Center" in read
    assert around.count("\n") >= 1  # the neighbours of the turns read, cut to a line each


def test_without_the_workspace_a_transcript_chip_opens_the_turns_read(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    run = run_scout(
        "Which figure number does the sensitivity figure get?",
        workspace=workspace,
        model=OfflineScoutModel(),
    )
    html = _summary_html(BundlePanel(run))
    assert "transcript: Sensitivity figure for Section 3.2 (2026-11-26)" in html
    assert "Figure 4 it is" in html
    assert "The turns around it" not in html


def test_a_hostile_title_and_turn_stay_text(tmp_path: Path) -> None:
    root = build_workspace(tmp_path / "ws", {})
    export = tmp_path / "evil.jsonl"
    export.write_text(
        json.dumps(
            {
                "id": "evil",
                "title": '<img src=x onerror="alert(1)">',
                "messages": [
                    {"role": "user", "content": "The <script>alert(1)</script> palette is teal."}
                ],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    import_conversations(export, root)
    workspace = Workspace(root)
    run = run_scout("Which palette is teal?", workspace=workspace, model=OfflineScoutModel())
    html = _summary_html(BundlePanel(run, workspace=workspace))
    assert "(transcript" not in html  # the attribution became a chip
    assert "<script>" not in html and "<img" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
