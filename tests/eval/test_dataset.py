"""JSONL datasets: parsing, errors with line numbers, and the shipped demo dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supercontext_lab import DatasetError
from supercontext_lab.eval import EvalCase, Expectations, load_dataset, parse_dataset
from supercontext_lab.eval.dataset import (
    CASE_KEYS,
    EXPECT_KEYS,
    MAX_FOLLOW_UPS,
    STRUCTURES,
    FollowUp,
)
from supercontext_lab.sources.demo import demo_workspace_path
from supercontext_lab.sources.workspace import Workspace

GOOD = '{"id": "a", "message": "Hi"}'


def _write(folder: Path, *lines: str) -> Path:
    path = folder / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_full_case_parses(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    line = json.dumps(
        {
            "id": " kernel ",
            "message": "What did we decide?",
            "focus": "the grant",
            "workspace": "ws",
            "structure": "table",
            "expect": {
                "skills": ["figure-polish"],
                "tools": ["delegate_gmail"],
                "has_goal": False,
                "has_enough_context": True,
                "mentions": ["2Dt"],
                "must_not_mention": ["sourdough"],
            },
        }
    )
    (case,) = load_dataset(_write(tmp_path, "", line, "   "))
    assert case == EvalCase(
        id="kernel",
        message="What did we decide?",
        focus="the grant",
        workspace=(tmp_path / "ws").resolve(),
        expect=Expectations(
            skills=("figure-polish",),
            tools=("delegate_gmail",),
            has_goal=False,
            has_enough_context=True,
            mentions=("2Dt",),
            must_not_mention=("sourdough",),
        ),
        line=2,
        structure="table",
    )
    assert case.expect.to_dict()["skills"] == ["figure-polish"]
    assert set(case.to_dict()) == {"id", "message", "focus", "workspace", "structure", "expect"}


def test_follow_ups_are_the_threads_later_messages_with_their_own_expectations() -> None:
    line = json.dumps(
        {
            "id": "a",
            "message": "What did we decide about the kernel?",
            "expect": {"mentions": ["2Dt"]},
            "follow_ups": [
                {"message": "Who decided it?", "expect": {"mentions": ["Amara"]}},
                {
                    "message": "When is the renewal due?",
                    "topic_change": True,
                    "expect": {"mentions": ["2026-12-15"], "must_not_mention": ["2Dt"]},
                },
                {"message": "Thanks"},
            ],
        }
    )
    (case,) = parse_dataset(line)
    assert case.follow_ups == (
        FollowUp("Who decided it?", Expectations(mentions=("Amara",))),
        FollowUp(
            "When is the renewal due?",
            Expectations(mentions=("2026-12-15",), must_not_mention=("2Dt",)),
            topic_change=True,
        ),
        FollowUp("Thanks"),
    )
    # Written back as it was read; a case without follow-ups writes no key.
    assert parse_dataset(json.dumps(case.to_dict()))[0] == case
    assert "follow_ups" not in parse_dataset(GOOD)[0].to_dict()


@pytest.mark.parametrize(
    ("follow_ups", "needle"),
    [
        ('"next"', '"follow_ups" must be an array of objects, not a string'),
        ('["next"]', "follow_ups item 1: must be an object, not a string"),
        ('[{"message": "ok"}, {}]', 'follow_ups item 2: "message" must be a non-empty string'),
        ('[{"message": "  "}]', '"message" must be a non-empty string'),
        ('[{"message": "m", "topic": 1}]', 'follow_ups item 1: unknown key "topic"'),
        ('[{"message": "m", "topic_change": "yes"}]', '"topic_change" must be true or false'),
        (
            '[{"message": "m", "expect": {"mentions": [1]}}]',
            'follow_ups item 1: "expect.mentions" must be an array of strings',
        ),
        (
            "[" + ", ".join(['{"message": "m"}'] * (MAX_FOLLOW_UPS + 1)) + "]",
            f"a case has at most {MAX_FOLLOW_UPS}",
        ),
    ],
)
def test_bad_follow_ups_name_the_line_and_the_item(follow_ups: str, needle: str) -> None:
    with pytest.raises(DatasetError) as info:
        parse_dataset(f'{{"id": "a", "message": "m", "follow_ups": {follow_ups}}}', source="d")
    assert str(info.value).startswith("d, line 1: ") and needle in str(info.value)


@pytest.mark.parametrize("structure", STRUCTURES)
def test_a_case_names_how_its_answer_is_laid_out(structure: str) -> None:
    line = json.dumps({"id": "a", "message": "m", "structure": structure})
    (case,) = parse_dataset(line)
    assert case.structure == structure
    assert case.to_dict()["structure"] == structure
    assert parse_dataset(json.dumps(case.to_dict()))[0].structure == structure


def test_no_structure_is_none_and_stays_out_of_the_line() -> None:
    for line in (GOOD, '{"id": "a", "message": "m", "structure": null}'):
        (case,) = parse_dataset(line)
        assert case.structure is None
        assert "structure" not in case.to_dict()


def test_a_case_may_name_its_cluster() -> None:
    line = json.dumps({"id": "a", "message": "m", "cluster": " kernel-thread "})
    (case,) = parse_dataset(line)
    assert case.cluster == "kernel-thread"
    assert case.to_dict()["cluster"] == "kernel-thread"
    assert parse_dataset(json.dumps(case.to_dict()))[0].cluster == "kernel-thread"
    (plain,) = parse_dataset(GOOD)
    assert plain.cluster is None and "cluster" not in plain.to_dict()
    assert "cluster" in CASE_KEYS


def test_expected_sources_are_read_as_citations() -> None:
    sources = ["memory: adr/ADR019-use-amazon-ses", "transcript: conv-7", "profile"]
    line = json.dumps({"id": "a", "message": "m", "expect": {"sources": sources}})
    (case,) = parse_dataset(line)
    assert case.expect.sources == tuple(sources)
    assert case.expect.to_dict() == {"sources": sources}


def test_absent_expectations_are_not_scored() -> None:
    (case,) = parse_dataset(GOOD)
    assert case.expect == Expectations()
    assert case.workspace is None
    assert case.focus is None


def test_absolute_workspace_and_bom(tmp_path: Path) -> None:
    line = json.dumps({"id": "a", "message": "m", "workspace": str(tmp_path)})
    path = tmp_path / "bom.jsonl"
    path.write_text("\ufeff" + line + "\n", encoding="utf-8")
    assert load_dataset(path)[0].workspace == tmp_path.resolve()


@pytest.mark.parametrize(
    ("lines", "line_no", "needle"),
    [
        (["{not json"], 1, "invalid JSON"),
        ([GOOD, "[1, 2]"], 2, "must be a JSON object, not an array"),
        (['{"message": "m"}'], 1, '"id" is missing'),
        (['{"id": "a"}'], 1, '"message" is missing'),
        (['{"id": "  ", "message": "m"}'], 1, '"id" is empty'),
        (['{"id": "a", "message": ""}'], 1, '"message" is empty'),
        (['{"id": 7, "message": "m"}'], 1, '"id" must be a string, not a number'),
        (['{"id": "a", "message": ["m"]}'], 1, '"message" must be a string, not an array'),
        ([GOOD, "", GOOD], 3, 'duplicate id "a" (first used on line 1)'),
        (['{"id": "a", "message": "m", "expected": {}}'], 1, 'unknown key "expected"'),
        (['{"id": "a", "message": "m", "expect": {"skill": []}}'], 1, '"expect.skill"'),
        (['{"id": "a", "message": "m", "expect": []}'], 1, '"expect" must be an object'),
        (['{"id": "a", "message": "m", "expect": {"skills": "x"}}'], 1, "array of strings"),
        (
            ['{"id": "a", "message": "m", "expect": {"tools": [1]}}'],
            1,
            '"expect.tools" must be an array of strings; item 1 is a number',
        ),
        (
            [GOOD, '{"id": "b", "message": "m", "expect": {"mentions": ["x", null]}}'],
            2,
            '"expect.mentions" must be an array of strings; item 2 is null',
        ),
        (
            ['{"id": "a", "message": "m", "expect": {"mentions": [""]}}'],
            1,
            '"expect.mentions" item 1 is an empty string',
        ),
        (
            ['{"id": "a", "message": "m", "expect": {"must_not_mention": ["x", "  "]}}'],
            1,
            '"expect.must_not_mention" item 2 is an empty string',
        ),
        (['{"id": "a", "message": "m", "expect": {"has_goal": "yes"}}'], 1, "true or false"),
        (['{"id": "a", "message": "m", "expect": {"has_enough_context": 1}}'], 1, "true or false"),
        (['{"id": "a", "message": "m", "focus": 3}'], 1, '"focus" must be a string or null'),
        (
            ['{"id": "a", "message": "m", "workspace": "missing"}'],
            1,
            '"workspace": the folder',
        ),
        (['{"id": "a", "message": "m", "second_message": "m"}'], 1, 'unknown key "second_message"'),
        (['{"id": "a", "message": "m", "workspace": ""}'], 1, '"workspace" is empty'),
        (
            ['{"id": "a", "message": "m", "structure": "spreadsheet"}'],
            1,
            'unknown structure "spreadsheet"',
        ),
        (['{"id": "a", "message": "m", "structure": "Table"}'], 1, "use one of table, email, chat"),
        (
            ['{"id": "a", "message": "m", "structure": "ta\\nble"}'],
            1,
            'unknown structure "ta ble"',
        ),
        (
            ['{"id": "a", "message": "m", "structure": ["table"]}'],
            1,
            '"structure" must be a string',
        ),
        (['{"id": "a", "message": "m", "structure": 3}'], 1, "not a number"),
        (['{"id": "a", "message": "m", "cluster": " "}'], 1, '"cluster" is empty'),
        (['{"id": "a", "message": "m", "cluster": 4}'], 1, '"cluster" must be a string'),
        (['{"id": "a", "message": "m", "expect": {"sources": ["notes.md"]}}'], 1, "no citation"),
        (
            ['{"id": "a", "message": "m", "expect": {"sources": ["memory: a/b) x"]}}'],
            1,
            "no citation",
        ),
        (['{"id": "a", "message": "m", "expect": {"sources": ["profile: x"]}}'], 1, "no citation"),
    ],
)
def test_bad_lines_name_the_file_and_line(
    tmp_path: Path, lines: list[str], line_no: int, needle: str
) -> None:
    path = _write(tmp_path, *lines)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line {line_no}: ")
    assert needle in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        (lambda p: None, "no such dataset file"),
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.write_bytes(b"\xff\xfe\x00bad"), "is not UTF-8"),
        (lambda p: p.write_text("\n \n", encoding="utf-8"), "holds no cases"),
    ],
)
def test_unusable_files(tmp_path: Path, setup: object, needle: str) -> None:
    path = tmp_path / "d.jsonl"
    setup(path)  # type: ignore[operator]
    with pytest.raises(DatasetError, match=needle):
        load_dataset(path)


def test_dataset_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="line 1"):
        parse_dataset("{")


@settings(max_examples=100, deadline=None)
@given(st.text())
def test_any_text_parses_or_raises_dataset_error(text: str) -> None:
    problem = ""
    try:
        cases = parse_dataset(text)
    except DatasetError as exc:
        problem = str(exc)
    if problem:
        assert "line" in problem or "no cases" in problem
    else:
        assert all(case.id.strip() and case.message.strip() for case in cases)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*CASE_KEYS, "other"]), _json_values | st.text(max_size=10), max_size=5
    ),
    st.dictionaries(st.sampled_from([*EXPECT_KEYS, "x"]), _json_values, max_size=4),
)
def test_any_json_object_parses_or_raises_dataset_error(
    case: dict[str, object], expect: dict[str, object]
) -> None:
    case = {**case, "expect": expect} if "expect" in case else case
    problem = ""
    try:
        parse_dataset(json.dumps(case))
    except DatasetError as exc:
        problem = str(exc)
    assert not problem or problem.startswith("<text>, line 1: ")


# --------------------------------------------------------------------------- demo dataset


def _workspace_text(root: Path) -> str:
    parts = [
        path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".supercontext" not in path.parts
    ]
    return "\n".join(parts).casefold()


def test_the_demo_dataset_is_large_and_true_of_the_demo_workspace(
    demo_cases: list[EvalCase],
) -> None:
    root = demo_workspace_path()
    workspace = Workspace(root)
    text = _workspace_text(root)
    skills = {skill.dir_name for skill in workspace.skills} | {e.id for e in workspace.registry}
    tools = {tool.name for tool in workspace.orchestrator_tools}
    assert len(demo_cases) >= 30
    for case in demo_cases:
        expect = case.expect
        assert case.workspace is None, case.id
        for mention in expect.mentions or ():
            assert mention.casefold() in text, (case.id, mention)
        for follow_up in case.follow_ups:
            for mention in (
                *(follow_up.expect.mentions or ()),
                *(follow_up.expect.must_not_mention or ()),
            ):
                assert mention.casefold() in text, (case.id, follow_up.message, mention)
        for skill in expect.skills or ():
            assert skill in skills, (case.id, skill)
        for tool in expect.tools or ():
            assert tool in tools, (case.id, tool)
            assert tool != "agent_prepare_context"


def test_the_demo_dataset_covers_every_kind_of_expectation(demo_cases: list[EvalCase]) -> None:
    expects = [case.expect for case in demo_cases]
    assert sum(e.has_goal is False for e in expects) >= 10
    assert sum(e.has_goal is True for e in expects) >= 10
    assert sum(e.skills is not None for e in expects) >= 10
    assert sum(e.tools is not None for e in expects) >= 10
    assert sum(e.has_enough_context is not None for e in expects) >= 10
    assert sum(bool(e.mentions) for e in expects) >= 25
    greetings = [c for c in demo_cases if c.message.strip("!") in {"Hi", "Thanks", "Good morning"}]
    assert len(greetings) == 3
    assert all(c.expect.has_goal is False and c.expect.skills == () for c in greetings)
    unrelated = {"sourdough", "lofoten", "brake pads"}
    guarded = [
        c for c in demo_cases if unrelated & {m.casefold() for m in c.expect.must_not_mention or ()}
    ]
    assert len(guarded) == len(demo_cases)
    # Threads of several messages: some on one topic, some changing it, where a context
    # looked up for an earlier message is stale.
    threads = [c for c in demo_cases if c.follow_ups]
    later = [f for c in threads for f in c.follow_ups]
    assert len(threads) >= 10 and sum(len(c.follow_ups) >= 2 for c in threads) >= 5
    changed = [f for f in later if f.topic_change]
    assert len(changed) >= 5 and len(later) - len(changed) >= 5
    assert all(f.expect.mentions and f.expect.must_not_mention for f in changed)


def test_the_memory_only_facts_are_not_in_the_prompt_files() -> None:
    # The mention-rate gap between the baseline and a variant without memory_recall rests
    # on facts that live only in memory documents, not in PROFILE.md or MEMORY.md.
    root = demo_workspace_path()
    prompt_files = (
        (root / "PROFILE.md").read_text("utf-8") + (root / "MEMORY.md").read_text("utf-8")
    ).casefold()
    for fact in ("2dt", "gr-7731", "34 of the 40 sites", "gdal 3.8", "2027-01-18", "b05s"):
        assert fact not in prompt_files
        assert fact in _workspace_text(root / "memory")


def test_the_shipped_variant_is_the_baseline_without_memory_recall() -> None:
    from supercontext_lab.agents import default_agent_definition, load_agent_definition
    from supercontext_lab.eval import demo_variant_path

    variant = load_agent_definition(Path(demo_variant_path()))
    shipped = default_agent_definition()
    assert variant.tools.named == [t for t in shipped.tools.named if t != "memory_recall"]
    assert variant.model_dump(exclude={"tools"}) == shipped.model_dump(exclude={"tools"})
    assert variant.prompt == shipped.prompt
    with pytest.raises(FileNotFoundError, match="no shipped demo variant"):
        demo_variant_path("nope")


def test_the_readme_documents_every_key_with_a_line_that_loads(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Dataset format") :]
    section = section[: section.index("\n## ")]
    example = section.split("```json\n", 1)[1].split("\n```", 1)[0]
    (tmp_path / "my-workspace").mkdir()
    (case,) = load_dataset(_write(tmp_path, example))
    # The example sets every key, and the loader keeps each of them.
    data = json.loads(example)
    assert set(data) == set(CASE_KEYS) and set(data["expect"]) == set(EXPECT_KEYS)
    assert case.to_dict()["expect"] == data["expect"]
    assert (case.focus, case.structure) == (data["focus"], data["structure"])
    for key in CASE_KEYS:
        assert f"| `{key}` |" in section, key
    for key in EXPECT_KEYS:
        assert f"| `expect.{key}` |" in section, key
