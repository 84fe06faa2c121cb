"""The extractive emission: the model picks numbers and names, the envelope is written here."""

from __future__ import annotations

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.models.base import Message, ModelReply, ToolSpec
from supercontext_lab.models.choices import BundleChoices, ChoiceFact, ChoiceSkill
from supercontext_lab.models.extractive import (
    PROMPT_FACTS,
    envelope_from_picks,
    extractive_grammar,
    extractive_messages,
)
from supercontext_lab.models.request import ChatRequest, RequestBuilder

CHOICES = BundleChoices(
    request="Please help me finish the kernel section",
    tools=("memory_recall", "web_search"),
    skills=(ChoiceSkill("figure-polish", True, "Polish figures"), ChoiceSkill("lit-digest", False)),
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
    envelope = envelope_from_picks("FACTS: 2, 1\nTOOLS: web_search\nSKILLS: lit-digest", CHOICES)
    assert envelope is not None
    bundle = parse_context_bundle(envelope)
    assert bundle is not None
    assert bundle.has_enough_context is True
    assert bundle.proposed_goal == "Finish the kernel section"
    assert bundle.summary.splitlines() == [
        "- It fits 34 of the 40 sites. (memory: global/kernel)",
        "- The 2Dt kernel is primary. (memory: global/kernel)",
    ]
    assert [call.tool for call in bundle.recommended_tool_calls] == ["web_search"]
    assert [(s.skill, s.installed) for s in bundle.recommended_skills] == [("lit-digest", False)]


def test_numbers_and_names_that_do_not_exist_are_left_out() -> None:
    reply = (
        "FACTS: 9, 3, 3, 0\nTOOLS: rm_rf, memory_recall\nSKILLS: evil, figure-polish, figure-polish"
    )
    envelope = envelope_from_picks(reply, CHOICES)
    bundle = parse_context_bundle(envelope or "")
    assert bundle is not None
    assert bundle.summary.count("\n") == 0 and "sensitivity analysis" in bundle.summary
    assert [call.tool for call in bundle.recommended_tool_calls] == ["memory_recall"]
    assert [(s.skill, s.installed) for s in bundle.recommended_skills] == [("figure-polish", True)]


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
    reply = "FACTS: 1\ud800, 2\x1b[2J\nTOOLS: web_search\x07, \ud83d\nSKILLS: \x9b31m"
    envelope = envelope_from_picks(reply, CHOICES)
    assert envelope is not None
    assert envelope.encode("utf-8")
    assert not any(ch in envelope for ch in "\x1b\x07\x9b")
    bundle = parse_context_bundle(envelope)
    assert bundle is not None and bundle.summary.count("\n") == 1
    assert not bundle.recommended_tool_calls and not bundle.recommended_skills


def test_the_grammar_enumerates_only_what_exists_and_asks_for_at_least_three_facts() -> None:
    grammar = extractive_grammar(CHOICES)
    assert 'fact ::= "1" | "2" | "3"' in grammar
    assert 'facts ::= fact ( ", " fact ){2,5}' in grammar
    assert 'tool ::= "memory_recall" | "web_search"' in grammar
    assert 'skill ::= "figure-polish" | "lit-digest"' in grammar
    empty = extractive_grammar(BundleChoices(request="hi"))
    assert 'facts ::= "none"' in empty and 'tools ::= "none"' in empty


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
