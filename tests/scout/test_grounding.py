"""The grounding check: names that exist, claims that what the run read supports."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.bundle import ContextBundle, parse_context_bundle
from supercontext_lab.scout.grounding import check_bundle
from supercontext_lab.scout.sources import RunSources, sources_of
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace, envelope
from supercontext_lab.tools.base import ToolResult

KERNEL = "Decision: we use the 2Dt dispersal kernel; it fit 34 of the 40 sites best."


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {
        "memory/project/kernel.md": f"---\ncategory: decision\n---\n# Dispersal kernel\n{KERNEL}\n",
        "PROFILE.md": "I am an ecologist who writes in R.\n",
        "MEMORY.md": "The grant renewal is due in March.\n",
        "skills/figure-polisher/SKILL.md": (
            "---\nname: Figure polisher\ndescription: Polish figures.\n---\nBody.\n"
        ),
        "registry.json": (
            '[{"id": "sensitivity-kit", "name": "Sensitivity kit", "description": "Sobol indices",'
            ' "tags": ["sensitivity"], "category": "analysis"}]'
        ),
        "orchestrator_tools.toml": (
            '[[tool]]\nname = "run_workflow"\ndescription = "Run a skill."\n'
        ),
    }
    return Workspace(build_workspace(tmp_path / "ws", files))


def _recall(*hits: tuple[str, str, str]) -> ToolResult:
    return ToolResult.success(
        {
            "hits": [
                {"namespace": ns, "key": key, "content": content, "category": "fact", "score": 1}
                for ns, key, content in hits
            ]
        }
    )


def _read(workspace: Workspace) -> RunSources:
    memory = workspace.memory.recall("*", "dispersal kernel", limit=8)
    hits = [(hit.namespace, hit.key, hit.content) for hit in memory]
    return sources_of(workspace, [("memory_recall", _recall(*hits))])


def _bundle(**fields: object) -> ContextBundle:
    bundle = parse_context_bundle(envelope(**fields))  # type: ignore[arg-type]
    assert bundle is not None
    return bundle


def test_a_copied_fact_citing_its_note_is_supported(workspace: Workspace) -> None:
    bundle = _bundle(summary=f"- {KERNEL} (memory: project/kernel)")
    report = check_bundle(bundle, workspace=workspace, sources=_read(workspace))
    assert (report.grounded, report.checked) == (1, 1)
    assert report.claims[0].support == 1.0
    assert not report.dropped and not report.changed
    assert report.envelope == bundle.envelope
    assert report.badge == "grounded 1 of 1"


def test_plain_memory_rests_on_any_note_read_or_memory_md(workspace: Workspace) -> None:
    bundle = _bundle(
        summary="- The 2Dt kernel fit 34 of 40 sites (memory)\n"
        "- The grant renewal is due in March (memory)"
    )
    report = check_bundle(bundle, workspace=workspace, sources=_read(workspace))
    assert report.grounded == 2


def test_invented_names_and_unsupported_bullets_are_dropped_with_why(
    workspace: Workspace,
) -> None:
    bundle = _bundle(
        summary=f"- {KERNEL} (memory: project/kernel)\n"
        "- Quantum annealing improves every workflow (memory: project/kernel)\n"
        "- The budget was cut (memory: project/budget)\n"
        "- A fact with no source at all",
        recommended_tool_calls=[
            {"tool": "seedscape-pipeline", "args": "{}", "why": "invented"},
            {"tool": "run_workflow", "args": {"workflow": "figure-polisher"}, "why": "fits"},
        ],
        recommended_skills=[
            {"skill": "seedscape-pipeline", "installed": True, "why": "invented"},
            {"skill": "sensitivity-kit", "installed": True, "why": "registry"},
        ],
    )
    report = check_bundle(bundle, workspace=workspace, sources=_read(workspace))
    whys = {(item.kind, item.item): item.why for item in report.dropped}
    assert whys[("tool", "seedscape-pipeline")] == "not in the orchestrator's tool catalogue"
    assert whys[("skill", "seedscape-pipeline")] == "neither installed nor in the registry"
    assert (
        "does not support it"
        in whys[("bullet", "Quantum annealing improves every workflow (memory: project/kernel)")]
    )
    assert whys[("bullet", "The budget was cut (memory: project/budget)")] == (
        "the run did not read memory: project/budget"
    )
    assert whys[("bullet", "A fact with no source at all")] == "it cites no source"
    assert report.invented == 2
    assert (report.grounded, report.checked) == (1, 4)
    checked = parse_context_bundle(report.envelope)
    assert checked is not None
    assert [b.text for b in checked.bullets] == [f"{KERNEL} (memory: project/kernel)"]
    assert [c.tool for c in checked.recommended_tool_calls] == ["run_workflow"]
    assert [(s.skill, s.installed) for s in checked.recommended_skills] == [
        ("sensitivity-kit", False)
    ]
    problems = report.problems()
    assert (
        "grounding: dropped tool 'seedscape-pipeline': not in the orchestrator's tool catalogue"
        in problems
    )
    assert any("installed set to false" in line for line in problems)
    assert not report.emptied


def test_mark_keeps_the_items_and_lists_them(workspace: Workspace) -> None:
    bundle = _bundle(summary="- Generic prose about science (memory)")
    report = check_bundle(bundle, workspace=workspace, sources=_read(workspace), mode="mark")
    assert report.envelope == bundle.envelope
    assert report.problems()[0].startswith("grounding: flagged bullet 'Generic prose")
    assert not report.emptied


def test_off_measures_but_changes_and_lists_nothing(workspace: Workspace) -> None:
    bundle = _bundle(
        summary="- Generic prose about science (memory)",
        recommended_tool_calls=[{"tool": "made_up", "args": "{}", "why": "x"}],
    )
    report = check_bundle(bundle, workspace=workspace, sources=_read(workspace), mode="off")
    assert report.envelope == bundle.envelope
    assert report.problems() == []
    assert (report.grounded, report.checked, report.invented) == (0, 1, 1)
    assert not report.changed


def test_has_enough_context_over_unsupported_bullets_is_set_to_false(
    workspace: Workspace,
) -> None:
    bundle = _bundle(
        has_enough_context=True,
        summary="- Generic prose about science (memory)",
        recommended_tool_calls=[{"tool": "run_workflow", "args": "{}", "why": "fits"}],
    )
    report = check_bundle(bundle, workspace=workspace, sources=_read(workspace))
    checked = parse_context_bundle(report.envelope)
    assert checked is not None and checked.has_enough_context is False
    assert any(item.kind == "has_enough_context" for item in report.dropped)


def test_a_summary_without_bullets_is_not_flagged(workspace: Workspace) -> None:
    bundle = _bundle(has_enough_context=True, summary="A greeting; no background is needed.")
    report = check_bundle(bundle, workspace=workspace, sources=RunSources.for_run(workspace))
    assert report.checked == 0 and not report.dropped and not report.emptied


def test_a_bundle_the_check_empties_is_reported_emptied(workspace: Workspace) -> None:
    bundle = _bundle(
        summary="- Generic prose (memory)\n- More prose (profile)",
        recommended_skills=[{"skill": "nope", "installed": True, "why": "x"}],
    )
    report = check_bundle(bundle, workspace=workspace, sources=_read(workspace))
    assert report.emptied
    assert report.problems()[-1].endswith("so the turn starts cold")


def test_non_ascii_claims_are_matched_by_the_one_analyzer(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory" / "lab").mkdir(parents=True)
    (root / "memory" / "lab" / "cafe.md").write_text(
        "Le résumé du café est prêt.\n", encoding="utf-8"
    )
    workspace = Workspace(root)
    sources = sources_of(
        workspace, [("memory_recall", _recall(("lab", "cafe", "Le résumé du café est prêt.")))]
    )
    bundle = _bundle(summary="- Résumé du café prêt (memory: lab/cafe)")
    assert check_bundle(bundle, workspace=workspace, sources=sources).grounded == 1
