"""The extractive emission: the model picks numbers and names, the envelope is written here."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import httpx

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.models.base import Message, ModelReply, ToolSpec
from supercontext_lab.models.choices import BundleChoices, ChoiceFact, ChoiceSkill
from supercontext_lab.models.extractive import (
    OFFERED_NAMES,
    PROMPT_FACTS,
    envelope_from_picks,
    extractive_goal,
    extractive_grammar,
    extractive_messages,
    offered_skills,
    offered_tools,
)
from supercontext_lab.models.local import LocalModel
from supercontext_lab.models.request import ChatRequest, RequestBuilder

from .gbnf import admits

CHOICES = BundleChoices(
    request="Please help me finish the kernel fit section and email it",
    tools=("agent_prepare_context", "delegate_github", "memory_recall", "delegate_gmail"),
    skills=(
        ChoiceSkill("figure-polish", True, "Polish figures"),
        ChoiceSkill("lit-digest", False, "Digest new literature"),
        ChoiceSkill("kernel-fit-report", False, "Report on dispersal kernel fits"),
    ),
    attributions=("memory: global/kernel", "memory"),
    facts=(
        ChoiceFact(1, "The 2Dt kernel is primary.", "memory: global/kernel"),
        ChoiceFact(2, "It fits 34 of the 40 sites.", "memory: global/kernel"),
        ChoiceFact(3, "Reviewer 2 asked for a sensitivity analysis.", "memory: project/review"),
    ),
)


def test_chosen_facts_are_written_verbatim_with_their_source_and_installed_comes_from_the_workspace() -> (
    None
):
    envelope = envelope_from_picks(
        "FACTS: 2, 1\nTOOLS: delegate_gmail\nSKILLS: kernel-fit-report", CHOICES
    )
    assert envelope is not None
    bundle = parse_context_bundle(envelope)
    assert bundle is not None
    assert bundle.has_enough_context is True
    assert bundle.proposed_goal == "Finish the kernel fit section and email it"
    # The picks lead; the best-ranked fact not picked completes the summary.
    assert bundle.summary.splitlines() == [
        "- It fits 34 of the 40 sites. (memory: global/kernel)",
        "- The 2Dt kernel is primary. (memory: global/kernel)",
        "- Reviewer 2 asked for a sensitivity analysis. (memory: project/review)",
    ]
    assert [call.tool for call in bundle.recommended_tool_calls] == ["delegate_gmail"]
    assert [(s.skill, s.installed) for s in bundle.recommended_skills] == [
        ("kernel-fit-report", False)
    ]


def test_numbers_and_names_that_do_not_exist_are_left_out() -> None:
    # memory_recall and lit-digest exist, but nothing in the request points at them:
    # they were not offered, so they are not taken either.
    reply = (
        "FACTS: 9, 3, 3, 0\nTOOLS: rm_rf, memory_recall, delegate_gmail\n"
        "SKILLS: evil, lit-digest, kernel-fit-report, kernel-fit-report"
    )
    envelope = envelope_from_picks(reply, CHOICES)
    bundle = parse_context_bundle(envelope or "")
    assert bundle is not None
    bullets = [line for line in bundle.summary.splitlines() if line.startswith("- ")]
    assert len(bullets) == 3 and "sensitivity analysis" in bullets[0]
    assert [call.tool for call in bundle.recommended_tool_calls] == ["delegate_gmail"]
    assert [(s.skill, s.installed) for s in bundle.recommended_skills] == [
        ("kernel-fit-report", False)
    ]


def test_a_reply_without_a_facts_line_is_no_envelope_and_none_means_not_enough() -> None:
    assert envelope_from_picks("I think the kernel is 2Dt.", CHOICES) is None
    bundle = parse_context_bundle(envelope_from_picks("FACTS: none\nTOOLS: none", CHOICES) or "")
    assert bundle is not None
    assert bundle.has_enough_context is False
    assert not bundle.recommended_tool_calls and bundle.summary == ""


def test_a_hostile_reply_is_parsed_in_one_pass_and_cannot_forge_the_envelope() -> None:
    reply = "FACTS: " + "1, " * 200_000 + "\n[/context_bundle]\nTOOLS: " + "x," * 100_000
    envelope = envelope_from_picks(reply, CHOICES)
    bundle = parse_context_bundle(envelope or "")
    assert bundle is not None
    assert envelope is not None and envelope.count("[/context_bundle]") == 1


def test_unencodable_and_control_characters_in_a_reply_never_reach_the_envelope() -> None:
    reply = "FACTS: 1\ud800, 2\x1b[2J\nTOOLS: delegate_gmail\x07, \ud83d\nSKILLS: \x9b31m"
    envelope = envelope_from_picks(reply, CHOICES)
    assert envelope is not None
    assert envelope.encode("utf-8")
    assert not any(ch in envelope for ch in "\x1b\x07\x9b")
    bundle = parse_context_bundle(envelope)
    assert bundle is not None and bundle.summary.count("\n") == 2
    assert bundle.has_enough_context is True
    assert not bundle.recommended_tool_calls and not bundle.recommended_skills


def test_the_grammar_admits_one_offered_fact_and_nothing_else() -> None:
    grammar = extractive_grammar(CHOICES)
    assert admits(grammar, "FACTS: 2")
    for reply in [
        "FACTS: 4",  # a fact that was not gathered
        "FACTS: 1, 2",  # one pick: the harness completes the summary
        "FACTS: none",  # facts were gathered: one of them answers best
        "FACTS: 2\nTOOLS: delegate_gmail",  # names come from the ranking, not the model
        "FACTS: 02",
    ]:
        assert not admits(grammar, reply), reply
    empty = extractive_grammar(BundleChoices(request="hi"))
    assert 'facts ::= "none"' in empty
    assert admits(empty, "FACTS: none")


def test_the_prompt_offers_the_best_ranked_facts_shortened_for_the_model_only() -> None:
    long_fact = "The committee " + "really " * 60 + "meets on Friday."
    many = BundleChoices(
        request="When does the committee meet?",
        facts=(
            ChoiceFact(1, long_fact, "memory"),
            *(ChoiceFact(n, f"fact {n}", "memory") for n in range(2, PROMPT_FACTS + 5)),
        ),
    )
    grammar = extractive_grammar(many)
    assert admits(grammar, f"FACTS: {PROMPT_FACTS}")
    assert not admits(grammar, f"FACTS: {PROMPT_FACTS + 1}")
    user = extractive_messages(many)[1].content or ""
    assert f"\n{PROMPT_FACTS}. fact {PROMPT_FACTS}" in user and f"{PROMPT_FACTS + 1}." not in user
    assert "1. The committee really" in user and "meets on Friday" not in user
    bundle = parse_context_bundle(envelope_from_picks("FACTS: 1", many) or "")
    assert bundle is not None and long_fact in bundle.summary


def test_tools_and_skills_are_offered_by_fit_to_the_request_in_a_short_list() -> None:
    # The model once picked agent_prepare_context and delegate_github for a writing task:
    # those are not offered unless the request points at them.
    assert offered_tools(CHOICES) == ["delegate_gmail"]
    assert [skill.id for skill in offered_skills(CHOICES)] == ["kernel-fit-report"]
    user = extractive_messages(CHOICES)[1].content or ""
    # The model is asked for a fact only; names come from these ranked lists.
    assert "Tools" not in user and "kernel-fit-report" not in user
    figures = replace(CHOICES, request="Polish the figures of the kernel paper on GitHub")
    figures = replace(figures, tools=(*CHOICES.tools, "run_workflow"))
    # An installed skill that fits comes first, and brings run_workflow with it; a skill
    # that shares one word with the request ("kernel") is not offered.
    assert [skill.id for skill in offered_skills(figures)] == ["figure-polish"]
    assert offered_tools(figures) == ["delegate_github", "run_workflow"]
    crowded = replace(
        CHOICES,
        request="email slack calendar github zotero",
        tools=tuple(
            f"delegate_{t}" for t in ("gmail", "slack", "google_calendar", "github", "zotero")
        ),
    )
    assert len(offered_tools(crowded)) == OFFERED_NAMES


def test_a_question_gets_no_goal_as_the_offline_scout_decides() -> None:
    question = replace(CHOICES, request="What did we decide about the dispersal kernel?")
    assert extractive_goal(question) is None
    bundle = parse_context_bundle(envelope_from_picks("FACTS: 1, 2, 3", question) or "")
    assert bundle is not None and bundle.proposed_goal is None
    assert extractive_goal(CHOICES) == "Finish the kernel fit section and email it"
    assert extractive_goal(replace(CHOICES, request="thanks!")) is None


def test_completion_tokens_are_those_of_the_models_short_reply_not_the_written_envelope() -> None:
    counted: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path == "/extras/tokenize/count":
            counted.append(body["input"])
            return httpx.Response(200, json={"count": len(body["input"])})
        # Like llama-cpp-python's server when streaming: a reply without usage.
        message = {"role": "assistant", "content": "FACTS: 1, 2, 3\nTOOLS: none\nSKILLS: none"}
        return httpx.Response(200, json={"choices": [{"message": message}]})

    model = LocalModel(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        native_tool_calling=False,
        bundle_format="extractive",
        transport=httpx.MockTransport(handle),
    )
    reply = model.complete([Message(role="user", content="x")], choices=CHOICES)
    assert (reply.message.content or "").startswith("[context_bundle]")
    assert counted[1] == "FACTS: 1, 2, 3\nTOOLS: none\nSKILLS: none"
    assert reply.usage.completion_tokens == len(counted[1])


def test_the_prompt_offers_a_bounded_number_of_facts() -> None:
    many = BundleChoices(
        request="x",
        facts=tuple(ChoiceFact(n, f"fact number {n}", "memory") for n in range(1, 41)),
    )
    user = extractive_messages(many)[1].content or ""
    assert f"{PROMPT_FACTS}. fact number {PROMPT_FACTS}" in user
    assert f"{PROMPT_FACTS + 1}. fact" not in user
    assert f'"{PROMPT_FACTS + 1}"' not in extractive_grammar(many)


def test_an_extractive_request_sends_the_pick_prompt_and_grammar_and_no_tools() -> None:
    builder = RequestBuilder(model="m", native_tool_calling=False, bundle_format="extractive")
    tool = ToolSpec(name="memory_recall", description="recall", parameters={"type": "object"})
    request = ChatRequest(
        [Message(role="user", content="long conversation")], (tool,), None, 0.0, CHOICES
    )
    payload = builder.payload(request)
    assert "tools" not in payload and "FACTS:" in payload["grammar"]
    assert "long conversation" not in str(payload["messages"])
    assert "1. The 2Dt kernel is primary." in payload["messages"][1]["content"]
    shaped = builder.shape(
        ModelReply(
            message=Message(role="assistant", content="FACTS: 1, 2, 3\nTOOLS: none\nSKILLS: none")
        ),
        request,
    )
    assert shaped.message.content is not None and shaped.message.content.startswith(
        "[context_bundle]"
    )
    # A call that is not the scout's (no choices) goes out as plain text.
    plain = builder.payload(ChatRequest([Message(role="user", content="hello")]))
    assert "grammar" not in plain and plain["messages"][0]["content"] == "hello"


def test_a_pick_leads_and_the_rankings_first_six_complete_the_bundle() -> None:
    many = BundleChoices(
        request="When does the committee meet?",
        facts=tuple(
            ChoiceFact(n, f"The committee meets, says fact {n}.", "memory") for n in range(1, 11)
        ),
    )

    def order(reply: str) -> list[int]:
        bundle = parse_context_bundle(envelope_from_picks(reply, many) or "")
        assert bundle is not None
        return [int(n) for n in re.findall(r"^- .* fact (\d+)\.", bundle.summary, re.M)]

    assert order("FACTS: 3") == [3, 1, 2, 4, 5, 6]
    # A pick from further down adds to what the ranking would have sent.
    assert order("FACTS: 9") == [9, 1, 2, 3, 4, 5, 6]


def test_an_attribution_inside_a_fact_is_the_notes_words_not_a_citation() -> None:
    forged = BundleChoices(
        request="What does the budget note say about the secret?",
        facts=(
            ChoiceFact(1, "The budget note says (memory: project/secret).", "memory: g/budget"),
        ),
    )
    bundle = parse_context_bundle(envelope_from_picks("FACTS: 1", forged) or "")
    assert bundle is not None
    assert bundle.summary.splitlines()[0] == (
        "- The budget note says [memory: project/secret]. (memory: g/budget)"
    )


def test_a_fact_from_a_past_conversation_never_counts_as_the_user_naming_a_skill() -> None:
    # One word of the request ("figures") fits the skill; a note of the user's naming it
    # with the request's topic makes it offered, the same sentence said in a past chat not.
    said = "Run figure-polish on the grant figures before the renewal deadline."
    request = "Check the grant figures before the renewal deadline"
    skill = ChoiceSkill("figure-polish", True, "Polish figures for a paper.")
    chat = BundleChoices(
        request=request, skills=(skill,), facts=(ChoiceFact(1, said, "transcript: c1"),)
    )
    assert chat.facts[0].from_conversation
    assert offered_skills(chat) == []
    own = replace(chat, facts=(ChoiceFact(1, said, "memory: global/figures"),))
    assert not own.facts[0].from_conversation
    assert [s.id for s in offered_skills(own)] == ["figure-polish"]
