"""Quality of the offline scout: relevant, attributed, honest, and driven by its tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supercontext_lab.agents import default_agent_toml, load_agent_definition, set_tool_enabled
from supercontext_lab.bundle import ContextBundle
from supercontext_lab.models.base import Message
from supercontext_lab.models.offline import OfflineOrchestratorModel, OfflineScoutModel
from supercontext_lab.scout import ScoutRun, run_scout
from supercontext_lab.sources.demo import demo_workspace_path
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing.embeddings import CountingEmbedder
from supercontext_lab.testing.workspace import build_workspace
from supercontext_lab.tools.catalogue import build_scout_registry

UNRELATED = ("sourdough", "lofoten", "brake")


@pytest.fixture(scope="module")
def demo() -> Workspace:
    return Workspace(demo_workspace_path())


def _scout(ws: Workspace, message: str, *, without: str | None = None) -> ScoutRun:
    definition = None
    if without is not None:
        definition = load_agent_definition(set_tool_enabled(default_agent_toml(), without, False))
    return run_scout(message, workspace=ws, model=OfflineScoutModel(), definition=definition)


def _bundle(run: ScoutRun) -> ContextBundle:
    assert run.ok, run.problems
    assert run.bundle is not None
    return run.bundle


def test_work_request_gets_goal_memory_facts_and_fitting_skills(demo: Workspace) -> None:
    bundle = _bundle(
        _scout(demo, "Help me finish the sensitivity analysis section for the grant renewal")
    )
    assert bundle.proposed_goal == "Finish the sensitivity analysis section for the grant renewal"
    summary = bundle.summary
    assert "Reviewer 2" in summary
    assert "2026-12-15" in summary
    # MEMORY.md and PROFILE.md both say where the sensitivity analysis goes; the fact is
    # listed once, by the file that says more.
    assert "sensitivity analysis of the kernel choice" in summary
    assert summary.count("sensitivity analysis of the kernel choice") == 1
    assert "(profile)" in summary
    for word in UNRELATED:
        assert word not in summary.lower()
    skills = {s.skill: s.installed for s in bundle.recommended_skills}
    assert skills.get("sensitivity-analysis-planner") is False
    catalogue = {tool.name for tool in demo.orchestrator_tools}
    assert {call.tool for call in bundle.recommended_tool_calls} <= catalogue


def test_question_about_a_decision_has_no_goal_and_leads_with_the_decision(demo: Workspace) -> None:
    bundle = _bundle(_scout(demo, "What did we decide about the dispersal kernel?"))
    assert bundle.proposed_goal is None
    assert bundle.has_enough_context is True
    first = bundle.summary.splitlines()[0]
    assert "2Dt" in first
    assert first.endswith("(memory: global/decision-dispersal-kernel)")


def test_email_request_uses_the_connected_integration_and_communication_style(
    demo: Workspace,
) -> None:
    bundle = _bundle(_scout(demo, "Draft a reply to Jonas about the data pipeline"))
    assert "GBIF" in bundle.summary
    assert "(integrations)" in bundle.summary
    assert "Best, Maya" in bundle.summary
    tools = [call.tool for call in bundle.recommended_tool_calls]
    assert tools[0] == "delegate_gmail"
    assert bundle.recommended_tool_calls[0].args_json is not None
    skills = {s.skill: s.installed for s in bundle.recommended_skills}
    assert skills.get("data-pipeline-runner") is True
    assert skills.get("email-reply-drafter") is False


def test_preference_question_reads_the_flavour_facet(demo: Workspace) -> None:
    run = _scout(demo, "How do I like my figures formatted?")
    bundle = _bundle(run)
    called = [(s.tool, s.arguments) for s in run.trace if s.kind == "tool"]
    assert ("memory_flavour", '{"flavour": "coding_style"}') in called
    assert "Okabe-Ito" in bundle.summary
    assert bundle.proposed_goal is None
    # A question on how the user likes figures shares one word ("figures") with the
    # figure polisher: that is no request for it.
    assert [s.skill for s in bundle.recommended_skills if s.installed] == []


def test_a_request_for_the_work_recommends_the_skill_that_does_it(demo: Workspace) -> None:
    bundle = _bundle(_scout(demo, "Polish the figures of the kernel paper"))
    assert [s.skill for s in bundle.recommended_skills if s.installed] == ["figure-polish"]
    calls = {call.tool: call.args_json for call in bundle.recommended_tool_calls}
    assert calls["run_workflow"] == {"workflow": "figure-polish"}


def test_fresh_outside_facts_are_reported_missing_honestly(demo: Workspace) -> None:
    bundle = _bundle(_scout(demo, "Summarise new papers on seed dispersal for my lit review"))
    assert bundle.has_enough_context is False
    assert "Missing:" in bundle.summary
    assert "lit-review-digest" in [s.skill for s in bundle.recommended_skills]
    assert "web_search" in [c.tool for c in bundle.recommended_tool_calls]


@pytest.mark.parametrize("message", ["hi", "Thanks!", "thank you", "good morning"])
def test_greetings_need_no_tools_and_no_goal(demo: Workspace, message: str) -> None:
    run = _scout(demo, message)
    bundle = _bundle(run)
    assert bundle.proposed_goal is None
    assert bundle.has_enough_context is True
    assert run.model_calls == 1
    assert not [s for s in run.trace if s.kind == "tool"]


def test_removing_memory_recall_changes_the_bundle(demo: Workspace) -> None:
    message = "What did we decide about the dispersal kernel?"
    full = _bundle(_scout(demo, message))
    reduced_run = _scout(demo, message, without="memory_recall")
    reduced = _bundle(reduced_run)
    assert "memory_recall" not in {s.tool for s in reduced_run.trace}
    assert "34 of the 40 sites" in full.summary
    assert "34 of the 40 sites" not in reduced.summary


def test_nothing_found_is_not_enough_context(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    bundle = _bundle(_scout(ws, "Prepare the quarterly tax filing for the bakery"))
    assert bundle.has_enough_context is False
    assert "Missing:" in bundle.summary
    assert bundle.recommended_skills == []


def test_second_workspace_written_by_hand(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "memory" / "global").mkdir(parents=True)
    (root / "memory" / "global" / "venue.md").write_text(
        "---\ncategory: fact\n---\nThe ICML workshop camera-ready is due 2027-05-30.\n", "utf-8"
    )
    (root / "memory" / "global" / "garden.md").write_text(
        "Tomatoes need watering daily.\n", "utf-8"
    )
    (root / "PROFILE.md").write_text("# Me\n- I am finishing the ICML workshop paper.\n", "utf-8")
    (root / "skills" / "latex-polish").mkdir(parents=True)
    (root / "skills" / "latex-polish" / "SKILL.md").write_text(
        "---\nname: TeX Polisher\ndescription: Polishes a LaTeX paper for camera-ready.\n"
        "tags: [latex, paper]\n---\n",
        "utf-8",
    )
    (root / "integrations.toml").write_text(
        '[[integration]]\ntoolkit = "slack"\ndescription = "Team chat"\nconnected = true\n', "utf-8"
    )
    bundle = _bundle(_scout(Workspace(root), "Help me get the ICML workshop paper camera-ready"))
    assert "2027-05-30" in bundle.summary
    assert "(memory: global/venue)" in bundle.summary
    # "I am finishing the ICML workshop paper" (PROFILE.md) says nothing the note does
    # not: a bullet earns its place by addressing the request.
    assert "(profile)" not in bundle.summary
    assert "Tomatoes" not in bundle.summary
    assert [(s.skill, s.installed) for s in bundle.recommended_skills] == [("latex-polish", True)]
    assert "(integrations)" not in bundle.summary  # slack is connected but unrelated


def test_offline_scout_is_deterministic(demo: Workspace) -> None:
    message = "Draft a reply to Jonas about the data pipeline"
    assert _scout(demo, message).envelope == _scout(demo, message).envelope


def test_offline_orchestrator_says_what_it_is() -> None:
    cold = OfflineOrchestratorModel().complete([Message(role="user", content="hello there")])
    assert "offline orchestrator" in (cold.message.content or "")
    assert "Starting cold" in (cold.message.content or "")


def test_a_notes_markdown_never_shows_in_a_bullet(tmp_path: Path) -> None:
    note = tmp_path / "memory" / "global" / "freezer.md"
    note.parent.mkdir(parents=True)
    note.write_text(
        "# Freezer inventory\n\n- **Box 3** holds the seed samples of site 12.\n"
        "- Box 4 holds the soil cores.\n",
        encoding="utf-8",
    )
    bundle = _bundle(_scout(Workspace(tmp_path), "Where are the seed samples of site 12 stored?"))
    bullet = next(line for line in bundle.summary.splitlines() if "Box 3" in line)
    # The heading is the note's title, not a fact: it is not quoted, not even as a lead-in.
    assert bullet == (
        "- Box 3 holds the seed samples of site 12. Box 4 holds the soil cores. "
        "(memory: global/freezer)"
    )
    assert "Freezer inventory" not in bundle.summary


def test_a_fact_in_a_note_and_in_memory_md_is_listed_once(demo: Workspace) -> None:
    # MEMORY.md lists the three aims on one line; the aims-outline note says the same at
    # length: one bullet, the note's.
    bundle = _bundle(_scout(demo, "What are the aims of the grant?"))
    aims = [line for line in bundle.summary.splitlines() if "Aim 1" in line]
    assert len(aims) == 1
    assert aims[0].endswith("(memory: project-grant/aims-outline)")


def test_a_question_about_a_code_that_is_not_software_reads_no_coding_style(
    demo: Workspace,
) -> None:
    run = _scout(demo, "What is the GR code of the renewal?")
    bundle = _bundle(run)
    assert "GR-7731" in bundle.summary
    assert "Coding style" not in bundle.summary
    assert not any(step.tool == "memory_flavour" for step in run.trace)


@pytest.mark.parametrize(
    "message",
    [
        "What is the format of the GR code?",  # a question asks for a fact, not a style
        "What GR code style does the Research Office use?",
        "Add the GR code to the budget email",  # one word points at coding; no line fits
    ],
)
def test_a_word_shared_with_a_facet_does_not_pull_it_into_the_summary(
    demo: Workspace, message: str
) -> None:
    bundle = _bundle(_scout(demo, message))
    assert "GR-7731" in bundle.summary
    assert "Coding style" not in bundle.summary


def test_work_on_code_still_reads_the_coding_style(demo: Workspace) -> None:
    run = _scout(demo, "Refactor the code of the kernel fits")
    assert any(step.tool == "memory_flavour" for step in run.trace)
    assert "Coding style: Python: type hints" in _bundle(run).summary


def test_a_registry_skill_must_fit_what_installed_skills_leave_open(demo: Workspace) -> None:
    # The figure polisher fits "polish ... figure"; the planner only shares the figure and
    # the compound "sensitivity-analysis", one concept, so installing it is not suggested.
    bundle = _bundle(_scout(demo, "Polish the sensitivity-analysis figure for the grant"))
    assert [(s.skill, s.installed) for s in bundle.recommended_skills] == [("figure-polish", True)]


_KELP = {
    "PROFILE.md": "# Ines\nPhD student in marine biology: kelp forest recovery after heatwaves.\n",
    "memory/phd/progress.md": (
        "# PhD progress\n\n"
        "Started in October 2024 on kelp forest recovery after marine heatwaves. "
        "Chapter 1 is drafted and was sent to the supervisor in May. "
        "The dive season runs from April to October. "
        "Committee: Prof. Henrik Aalto (chair), Dr. Nkechi Obi, Dr. Paul Ferreira (external). "
        "The next committee meeting is on 14 March at 10.30 in Room 2.14. "
        "Logger T2 was lost in the January storm. "
        "Methods still to write: the transect design, the logger calibration and the GLMM.\n"
    ),
    "memory/fieldwork/boat.md": (
        "# Boat\n\nThe RV Laminaria is booked through the harbour office two weeks ahead. "
        "Bookings for dives are approved by Henrik, who signs the form. "
        "The skipper costs 450 EUR a day, charged to grant code MB-2291.\n"
    ),
    "skills/dive-log-tidy/SKILL.md": (
        "---\nname: Dive log tidy\ndescription: Tidies dive logs into one table per site.\n"
        "tags: [fieldwork]\n---\nReads the dive logs and writes a table.\n"
    ),
    "orchestrator_tools.toml": (
        '[[tool]]\nname = "run_workflow"\ndescription = "Runs an installed skill."\n'
    ),
}


@pytest.fixture(scope="module")
def kelp(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    from supercontext_lab.testing import build_workspace

    return Workspace(build_workspace(tmp_path_factory.mktemp("kelp"), _KELP))


def test_the_sentence_that_answers_is_quoted_whole_from_the_middle_of_a_note(
    kelp: Workspace,
) -> None:
    bundle = _bundle(_scout(kelp, "When is my committee meeting?"))
    assert "The next committee meeting is on 14 March at 10.30 in Room 2.14." in bundle.summary
    assert "Committee: Prof. Henrik Aalto (chair), Dr. Nkechi Obi" in bundle.summary
    assert "…" not in bundle.summary
    assert bundle.has_enough_context is True


def test_an_off_topic_request_is_not_enough_and_says_what_is_missing(kelp: Workspace) -> None:
    bundle = _bundle(
        _scout(kelp, "Help me finish the sensitivity analysis section for the grant renewal")
    )
    assert bundle.has_enough_context is False
    assert "Missing: " in bundle.summary
    # Something on the boat is found, but not what the request names.
    partial = _bundle(_scout(kelp, "What does the boat cost for the sensitivity analysis?"))
    assert partial.has_enough_context is False
    assert "Missing: nothing found on sensitivity, analysis" in partial.summary


def test_one_shared_word_recommends_no_skill_and_no_workflow(kelp: Workspace) -> None:
    bundle = _bundle(
        _scout(kelp, "How do I book the boat for the October dives and who has to approve it?")
    )
    assert "approved by Henrik" in bundle.summary
    assert bundle.recommended_skills == []
    assert bundle.recommended_tool_calls == []
    tidy = _bundle(_scout(kelp, "Tidy up my dive logs from the October dives"))
    assert [s.skill for s in tidy.recommended_skills] == ["dive-log-tidy"]
    assert [(c.tool, c.args_json) for c in tidy.recommended_tool_calls] == [
        ("run_workflow", {"workflow": "dive-log-tidy"})
    ]


def test_a_past_conversation_naming_a_skill_is_no_sign_for_it(tmp_path: Path) -> None:
    from supercontext_lab.conversations import import_conversations

    said = "Run figure-polish on the grant figures before the renewal deadline."
    root = tmp_path / "ws"
    (root / "skills" / "figure-polish").mkdir(parents=True)
    (root / "skills" / "figure-polish" / "SKILL.md").write_text(
        "---\nname: figure-polish\ndescription: Polish figures for a paper.\n---\nBody.\n"
    )
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"id": "c1", "messages": [{"role": "user", "content": "What next?"}, '
        f'{{"role": "assistant", "content": "{said}"}}]}}\n'
    )
    import_conversations(chat, root)
    request = "Check the grant figures before the renewal deadline"
    chatted = _bundle(_scout(Workspace(root), request))
    assert "(transcript: c1)" in chatted.summary
    assert [s.skill for s in chatted.recommended_skills] == []
    (root / "memory" / "global").mkdir(parents=True)
    (root / "memory" / "global" / "figures.md").write_text(said + "\n")
    noted = _bundle(_scout(Workspace(root), request))
    assert [s.skill for s in noted.recommended_skills] == ["figure-polish"]


def test_the_scout_follows_a_reference_its_best_fact_names(tmp_path: Path) -> None:
    root = build_workspace(
        tmp_path / "ws",
        {
            "PROFILE.md": "# Profile\n\nSite manager.\n",
            "memory/permits/tracker.md": (
                "# Permit tracker\n\n| Ref | Site | Status |\n| --- | --- | --- |\n"
                "| BP-7781 | Harbour Road retaining wall | on hold (see site diary) |\n"
                "| BP-7790 | School annex canopy | issued 02/03 |\n"
            ),
            "memory/site/diary.md": (
                "# Site diary\n\n"
                + "".join(
                    f"- 02/{day:02d}: bay {day} formwork checked, no issues\n"
                    for day in range(1, 28)
                )
                + "- 03/05: BP-7781 inspector wants soil report rev C for the wall before she "
                "lifts the hold\n"
            ),
        },
    )
    run = _scout(Workspace(root), "Why is the Harbour Road retaining wall permit stuck?")
    recalls = [s.arguments for s in run.trace if s.kind == "tool" and s.tool == "memory_recall"]
    # The tracker is short, so quoted whole: both its references are followed, the first
    # first.
    assert '"bp-7781"' in recalls[1]
    summary = _bundle(run).summary
    assert "soil report rev C" in summary and "(memory: site/diary)" in summary


# -- passages found by meaning --------------------------------------------------------

LETTINGS = {
    "memory/flats/certificates.md": (
        "# Certificates\n\n| flat | EICR expires | gas safety |\n| --- | --- | --- |\n"
        "| Flat 3 | 12 Aug 2026 | 3 Mar 2027 |\n| Flat 7 | 1 Feb 2027 | 9 Jan 2027 |\n"
    ),
    "memory/flats/flat-3.md": (
        "# Flat 3\n\nThe tenants of Flat 3 asked about the check-in inventory.\n\n"
        "The boiler of Flat 3 was serviced in May.\n"
    ),
    "memory/global/office.md": "The office closes at 5pm on Fridays.\n",
}
# What an embedding model knows and the words do not: an EICR is the wiring check.
WIRING = {"eicr": "wiring", "electrical": "wiring", "expires": "due", "inspection": "check"}


def _scout_by_meaning(tmp_path: Path, message: str) -> tuple[ScoutRun, CountingEmbedder]:
    ws = Workspace(build_workspace(tmp_path / "ws", LETTINGS))
    embedder = CountingEmbedder(WIRING)
    registry = build_scout_registry(ws, embedder=embedder)
    run = run_scout(message, workspace=ws, model=OfflineScoutModel(), registry=registry)
    return run, embedder


def test_a_request_worded_otherwise_is_answered_by_the_unit_found_by_meaning(
    tmp_path: Path,
) -> None:
    message = "When is the wiring check for Flat 3 due?"
    ws = Workspace(build_workspace(tmp_path / "words", LETTINGS))
    by_words = _bundle(_scout(ws, message))
    assert "12 Aug 2026" not in by_words.summary  # no word of the request names the EICR
    run, embedder = _scout_by_meaning(tmp_path, message)
    bundle = _bundle(run)
    assert "Flat 3 — EICR expires: 12 Aug 2026" in bundle.summary
    assert "(memory: flats/certificates)" in bundle.summary
    # The request, in its own words, is what memory read by meaning.
    assert [message] in embedder.calls
    recall = next(s for s in run.trace if s.tool == "memory_recall")
    assert json.loads(recall.arguments)["request"] == message


def test_a_request_the_words_answer_keeps_the_words_ranking(tmp_path: Path) -> None:
    message = "What did the Flat 3 tenants ask about the check-in inventory?"
    ws = Workspace(build_workspace(tmp_path / "words", LETTINGS))
    by_words = _bundle(_scout(ws, message))
    run, _ = _scout_by_meaning(tmp_path, message)
    assert _bundle(run).summary == by_words.summary
