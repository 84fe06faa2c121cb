"""What a constrained emission may choose from: the names that exist and what was read."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab.scout.choices import bundle_choices
from supercontext_lab.scout.sources import RunSources
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace
from supercontext_lab.tools.catalogue import build_scout_registry

FILES = {
    "PROFILE.md": "I write reports.\n",
    "memory/project-grant/deadline.md": "The grant renewal is due on 15 December.\n",
    "memory/global/boat.md": "The boat is booked through the dive office.\n",
    "skills/figure-polish/SKILL.md": (
        "---\nname: Figure polish\ndescription: Restyles figures.\n---\nBody\n"
    ),
    "orchestrator_tools.toml": '[[tool]]\nname = "run_workflow"\ndescription = "Run a skill."\n',
}


def test_choices_hold_what_exists_and_the_facts_read_for_the_request(tmp_path: Path) -> None:
    workspace = Workspace(build_workspace(tmp_path / "ws", FILES))
    sources = RunSources.for_run(workspace)
    before = bundle_choices(workspace, sources, "When is the grant renewal due?")
    assert before.facts == ()  # nothing recalled yet: nothing to quote
    recall = build_scout_registry(workspace).call(
        "memory_recall", {"query": "grant renewal", "namespace": "*"}
    )
    sources.add_result("memory_recall", recall)
    choices = bundle_choices(workspace, sources, "When is the grant renewal due?")
    assert choices.request == "When is the grant renewal due?"
    assert choices.tools == ("run_workflow",)
    assert [(s.id, s.installed, s.description) for s in choices.skills] == [
        ("figure-polish", True, "Restyles figures.")
    ]
    assert [(f.number, f.text, f.attribution) for f in choices.facts] == [
        (1, "The grant renewal is due on 15 December.", "memory: project-grant/deadline")
    ]
    assert "memory: project-grant/deadline" in choices.attributions
    assert "memory: global/boat" not in choices.attributions  # never read by this run
