from __future__ import annotations

from dataclasses import dataclass

from supercontext_lab.agents import default_agent_definition, load_agent_definition
from supercontext_lab.agents.prompt import (
    DESCRIPTION_MAX_CHARS,
    USER_FILE_MAX_CHARS,
    build_scout_system_prompt,
    build_task_message,
    render_connected_integrations,
)


@dataclass(frozen=True)
class T:
    name: str
    description: str


@dataclass(frozen=True)
class Integ:
    toolkit: str
    description: str
    connected: bool


SCOUT_TOOLS = [T("memory_recall", "Search memory."), T("memory_flavour", "Read a facet.")]
INTEGRATIONS = [
    Integ("gmail", "Email", True),
    Integ("notion", "Docs", False),
    Integ("slack", "", True),
]


def _prompt(**kw: object) -> str:
    args: dict[str, object] = {
        "profile_md": "PROFILE: Maya, ecologist",
        "memory_md": "MEMORY: likes tables",
        "tools": SCOUT_TOOLS,
        "integrations": INTEGRATIONS,
        "workspace_name": "demo",
        "workspace_files": ["grant/aims.md"],
    }
    args.update(kw)
    return build_scout_system_prompt(default_agent_definition(), **args)  # type: ignore[arg-type]


def test_build_returns_nonempty_body_in_section_order() -> None:
    body = _prompt()
    order = [
        body.index("# Context Scout"),
        body.index("PROFILE: Maya"),
        body.index("MEMORY: likes tables"),
        body.index("`memory_recall`: Search memory."),
        body.index("\n## Connected Integrations\n\n- gmail"),
        body.index("## Workspace"),
    ]
    assert order == sorted(order)


def test_body_describes_the_context_bundle_contract() -> None:
    body = _prompt()
    for needle in (
        "[context_bundle]",
        "has_enough_context",
        "recommended_tool_calls",
        "recommended_skills",
        "memory_recall",
        "memory_flavour",
        "list_workflows",
    ):
        assert needle in body


def test_generic_result_contract_and_preambles_are_not_appended() -> None:
    body = _prompt()
    for needle in ("Result Contract", "Evidence used", "Actions taken", "## Identity", "## Safety"):
        assert needle not in body


def test_omit_switches_are_honoured() -> None:
    text = (
        'id = "x"\nomit_profile = true\nomit_memory_md = true\nomit_identity = false\n'
        "omit_safety_preamble = false\nomit_memory_context = false\n"
    )
    body = build_scout_system_prompt(
        load_agent_definition(text),
        profile_md="PROFILE: secret",
        memory_md="MEMORY: secret",
        memory_context="3 namespaces",
    )
    assert "PROFILE: secret" not in body
    assert "MEMORY: secret" not in body
    assert body.index("## Identity") < body.index("## Safety") < body.index("# Context Scout")
    assert "## Memory context" in body and "3 namespaces" in body


def test_user_files_are_bounded() -> None:
    body = _prompt(profile_md="x" * (USER_FILE_MAX_CHARS * 3))
    assert body.count("x") < USER_FILE_MAX_CHARS + 50
    assert "cut at" in body


def test_render_connected_integrations_lists_only_connected() -> None:
    section = render_connected_integrations(INTEGRATIONS)
    assert section.splitlines() == ["## Connected Integrations", "", "- gmail: Email", "- slack"]


def test_render_connected_integrations_empty_when_none_connected() -> None:
    assert render_connected_integrations([Integ("notion", "Docs", False)]) == ""
    assert render_connected_integrations([]) == ""
    assert "\n## Connected Integrations\n" not in _prompt(integrations=[])


def test_task_message_sections() -> None:
    long = "Hand a task\nto the  Gmail agent. " + "word " * 80
    msg = build_task_message(
        "Help me with the grant",
        focus="budget",
        orchestrator_tools=[
            T("delegate_gmail", long),
            T("agent_prepare_context", "Run the scout."),
            T("shell", ""),
        ],
    )
    assert msg.startswith(
        "[Request]\nHelp me with the grant\n\n[Focus]\nbudget\n\n[Orchestrator tools]\n"
    )
    lines = msg.splitlines()
    gmail = next(line for line in lines if line.startswith("- delegate_gmail: "))
    description = gmail.removeprefix("- delegate_gmail: ")
    assert len(description) == DESCRIPTION_MAX_CHARS
    assert description.endswith("…")
    assert "Hand a task to the Gmail agent." in description
    assert "agent_prepare_context" not in msg.split("[Orchestrator tools]")[1].split("\n\n")[0]
    assert "- shell" in lines
    assert "exactly one [context_bundle]" in msg
    assert "Do not answer" in msg


def test_task_message_without_focus_or_tools() -> None:
    msg = build_task_message("hi there", focus="  ")
    assert "[Focus]" not in msg
    assert "No orchestrator tools are available" in msg


def test_request_is_kept_raw() -> None:
    raw = "  multi\nline  request [x] "
    assert f"[Request]\n{raw}\n\n" in build_task_message(raw)
