"""The workspace folder: every part, every part missing, malformed files, and the demo
workspace copied into the lab home (files/ is tests/sources/test_files_folder.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from supercontext_lab import testing
from supercontext_lab.errors import WorkspaceError
from supercontext_lab.sources import demo as demo_module
from supercontext_lab.sources.demo import demo_workspace_path, open_workspace
from supercontext_lab.sources.integrations import (
    DEFAULT_ORCHESTRATOR_TOOLS,
    Integration,
    OrchestratorTool,
)
from supercontext_lab.sources.skills import InstalledSkill, RegistryEntry, parse_registry_entries
from supercontext_lab.sources.workspace import Workspace

SHIPPED_DEMO = Path(demo_module.__file__).resolve().parent.parent / "demo" / "workspace"

# The reader's defaults and its tolerance: an entry with a key it does not know, and one
# with only an id and a name (the registry sample is testing.SAMPLE_REGISTRY).
REGISTRY = [
    {
        "id": "figure-polish",
        "name": "Journal Figure Polisher",
        "description": "Restyles matplotlib figures for journals.",
        "tags": ["figures", "matplotlib"],
        "category": "writing",
        "source": "community",
        "stars": 12,
    },
    {"id": "inbox-triage", "name": "Inbox Triage"},
]


def write(root: Path, rel: str, text: str) -> Path:
    return testing.write_file(root / rel, text)


def build_workspace(root: Path) -> Path:
    """A workspace with every part present, and parts a reader must pass over (a hidden
    skill, a folder without SKILL.md, an unknown integration key)."""
    testing.build_workspace(
        root,
        {
            "PROFILE.md": "# Maya\nEcologist.\n",
            "MEMORY.md": "- Grant due Friday.\n",
            "flavour/communication.md": "Short and direct.\n",
            "flavour/stack.md": "Python, R.\n",
            "skills/figure-polish/SKILL.md": (
                "---\nname: Journal Figure Polisher\ndescription: Restyles figures.\n"
                "tags: [figures, matplotlib]\n---\n# Body\nSteps.\n"
            ),
            "skills/notes-digest/SKILL.md": "---\ntags: notes, digest\n---\nNo name.\n",
            "skills/.hidden/SKILL.md": "---\nname: hidden\n---\n",
            "registry.json": json.dumps(REGISTRY),
            "integrations.toml": (
                '[[integration]]\ntoolkit = "gmail"\ndescription = "Mail"\nconnected = true\n\n'
                '[[integration]]\ntoolkit = "notion"\nconnected = false\n\n'
                '[[integration]]\ntoolkit = "slack"\nextra = 1\n'
            ),
            "orchestrator_tools.toml": (
                '[[tool]]\nname = "run_workflow"\ndescription = "Run a skill."\n\n'
                '[[tool]]\nname = "delegate_gmail"\n'
            ),
            "files/notes.md": "hello notes\n",
            "files/data/table.csv": "a,b\n1,2\n",
            "memory/global/grant.md": "The grant is due on Friday.\n",
        },
    )
    (root / "skills" / "empty-folder").mkdir()
    return root


def snapshot(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


# ---------------------------------------------------------------------- every part


def test_every_part_is_read(tmp_path: Path) -> None:
    ws = Workspace(build_workspace(tmp_path))
    assert ws.root == tmp_path.resolve()
    assert ws.profile_md == "# Maya\nEcologist.\n"
    assert ws.memory_md == "- Grant due Friday.\n"
    assert ws.flavour == {"communication": "Short and direct.\n", "stack": "Python, R.\n"}
    assert ws.skills == [
        InstalledSkill(
            dir_name="figure-polish",
            name="Journal Figure Polisher",
            description="Restyles figures.",
            tags=("figures", "matplotlib"),
            body="# Body\nSteps.",
        ),
        InstalledSkill(
            dir_name="notes-digest",
            name="notes-digest",
            description="",
            tags=("notes", "digest"),
            body="No name.",
        ),
    ]
    assert ws.registry == [
        RegistryEntry(
            id="figure-polish",
            name="Journal Figure Polisher",
            description="Restyles matplotlib figures for journals.",
            tags=("figures", "matplotlib"),
            category="writing",
            source="community",
        ),
        RegistryEntry("inbox-triage", "Inbox Triage", "", (), "", ""),
    ]
    assert ws.integrations == [
        Integration("gmail", "Mail", True),
        Integration("notion", "", False),
        Integration("slack", "", False),
    ]
    assert ws.connected_integrations == [Integration("gmail", "Mail", True)]
    assert ws.orchestrator_tools == [
        OrchestratorTool("run_workflow", "Run a skill."),
        OrchestratorTool("delegate_gmail", ""),
    ]
    assert ws.files_dir == tmp_path.resolve() / "files"
    assert ws.list_files() == ["data/table.csv", "notes.md"]
    assert ws.read_file("data/table.csv") == "a,b\n1,2\n"
    assert ws.read_file("notes.md", max_chars=5) == "hello"


def test_every_part_absent_is_an_empty_source(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    assert ws.profile_md == ""
    assert ws.memory_md == ""
    assert ws.flavour == {}
    assert ws.skills == []
    assert ws.registry == []
    assert ws.integrations == []
    assert ws.connected_integrations == []
    assert ws.orchestrator_tools == list(DEFAULT_ORCHESTRATOR_TOOLS)
    assert ws.list_files() == []
    assert snapshot(tmp_path) == {}


def test_default_orchestrator_catalogue() -> None:
    names = [tool.name for tool in DEFAULT_ORCHESTRATOR_TOOLS]
    assert len(names) == len(set(names))
    expected = {
        "memory_recall", "memory_store", "web_search", "web_fetch", "run_workflow",
        "skill_registry_install", "file_read", "file_write", "shell", "spawn_subagent",
        "agent_prepare_context", "set_thread_goal", "delegate_gmail",
        "delegate_google_calendar", "delegate_slack", "delegate_notion", "delegate_github",
        "delegate_google_drive",
    }  # fmt: skip
    assert set(names) == expected
    assert all(tool.description.strip() for tool in DEFAULT_ORCHESTRATOR_TOOLS)


def test_empty_orchestrator_file_means_no_tools(tmp_path: Path) -> None:
    write(tmp_path, "orchestrator_tools.toml", "# none\n")
    assert Workspace(tmp_path).orchestrator_tools == []


def test_reading_never_writes(tmp_path: Path) -> None:
    root = build_workspace(tmp_path)
    before = snapshot(root)
    ws = Workspace(root)
    for part in ("profile_md", "memory_md", "flavour", "skills", "registry", "integrations"):
        getattr(ws, part)
    assert ws.orchestrator_tools
    ws.list_files()
    ws.read_file("notes.md")
    assert snapshot(root) == before


def test_memory_index_is_the_only_write(tmp_path: Path) -> None:
    root = build_workspace(tmp_path)
    before = snapshot(root)
    hits = Workspace(root).memory.recall("global", "grant Friday")
    assert [hit.key for hit in hits] == ["grant"]
    after = snapshot(root)
    added = set(after) - set(before)
    assert added
    assert all(name.startswith(".supercontext") for name in added)
    assert {k: v for k, v in after.items() if k in before} == before


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_root_must_be_an_existing_folder(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "ws"
    if kind == "file":
        target.write_text("x")
    with pytest.raises(WorkspaceError, match=str(target)):
        Workspace(target)


# ---------------------------------------------------------------------- malformed files


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"registry\.json is not valid JSON"),
        ('{"id": "x"}', r"registry\.json must hold a JSON list"),
        ('[{"id": "a", "name": "A"}, 3]', r"registry\.json entry 1 must be a JSON object"),
        ('[{"name": "A"}]', r"registry\.json entry 0: id:"),
        ('[{"id": "a", "name": "A"}, {"id": "b"}]', r"registry\.json entry 1: name:"),
        ('[{"id": " ", "name": "A"}]', r"registry\.json entry 0: id:"),
        ('[{"id": "a", "name": "A", "tags": "x"}]', r"registry\.json entry 0: tags:"),
        ('[{"id": "a", "name": "A", "tags": [1]}]', r"registry\.json entry 0: tags\.0:"),
        ('[{"id": "a", "name": 5}]', r"registry\.json entry 0: name:"),
        ('[{"id": "a", "name": "A"}, {"id": "a", "name": "B"}]', r"entry 1: duplicate id 'a'"),
    ],
)
def test_malformed_registry(tmp_path: Path, content: str, message: str) -> None:
    write(tmp_path, "registry.json", content)
    with pytest.raises(WorkspaceError, match=message):
        _ = Workspace(tmp_path).registry


def test_parse_registry_entries_names_its_source() -> None:
    with pytest.raises(WorkspaceError, match=r"^https://reg\.example/x entry 0: id:"):
        parse_registry_entries([{"name": "n"}], "https://reg.example/x")


@pytest.mark.parametrize(
    ("name", "content", "part", "message"),
    [
        ("integrations.toml", "[[integration]\n", "integrations", r"integrations\.toml is not valid TOML"),
        ("integrations.toml", 'integration = "x"\n', "integrations", r"integrations\.toml: 'integration' must be an array"),
        ("integrations.toml", "integration = [1]\n", "integrations", r"integrations\.toml integration 0 must be a table"),
        ("integrations.toml", "[[integration]]\ndescription = 'x'\n", "integrations", r"integrations\.toml integration 0: toolkit:"),
        ("integrations.toml", "[[integration]]\ntoolkit = 'a'\nconnected = 'yes'\n", "integrations", r"integrations\.toml integration 0: connected:"),
        ("orchestrator_tools.toml", "tool = [", "orchestrator_tools", r"orchestrator_tools\.toml is not valid TOML"),
        ("orchestrator_tools.toml", "[[tool]]\ndescription = 'x'\n", "orchestrator_tools", r"orchestrator_tools\.toml tool 0: name:"),
    ],
)  # fmt: skip
def test_malformed_toml(tmp_path: Path, name: str, content: str, part: str, message: str) -> None:
    write(tmp_path, name, content)
    with pytest.raises(WorkspaceError, match=message):
        getattr(Workspace(tmp_path), part)


@pytest.mark.parametrize(
    ("text", "name", "tags", "body"),
    [
        ("---\nname: Demo\ntags:\n  - a\n  - b\n---\nBody\n", "Demo", ("a", "b"), "Body"),
        ("---\nname: '  '\n---\nBody\n", "bad", (), "Body"),
        ("---\nname: Never closed\nBody\n", "bad", (), "---\nname: Never closed\nBody"),
        ("No front matter at all.\n", "bad", (), "No front matter at all."),
    ],
)
def test_skill_front_matter_is_read_forgivingly(
    tmp_path: Path, text: str, name: str, tags: tuple[str, ...], body: str
) -> None:
    write(tmp_path, "skills/bad/SKILL.md", text)
    (skill,) = Workspace(tmp_path).skills
    assert (skill.dir_name, skill.name, skill.tags, skill.body) == ("bad", name, tags, body)


@pytest.mark.parametrize(
    ("rel", "part"),
    [
        ("PROFILE.md", "profile_md"),
        ("flavour/stack.md", "flavour"),
        ("skills/bad/SKILL.md", "skills"),
        ("registry.json", "registry"),
        ("integrations.toml", "integrations"),
    ],
)
def test_text_that_is_not_utf8(tmp_path: Path, rel: str, part: str) -> None:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"caf\xe9\n")
    with pytest.raises(WorkspaceError, match=f"{rel} in .* is not UTF-8"):
        getattr(Workspace(tmp_path), part)


def test_part_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").mkdir()
    with pytest.raises(WorkspaceError, match=r"MEMORY\.md in .* is not a file"):
        _ = Workspace(tmp_path).memory_md


# ---------------------------------------------------------------------- demo workspace


def test_shipped_demo_workspace_exists_and_parses() -> None:
    assert (SHIPPED_DEMO / "PROFILE.md").is_file(), (
        f"the demo workspace is missing at {SHIPPED_DEMO}"
    )
    ws = Workspace(SHIPPED_DEMO)
    assert ws.profile_md.strip()
    assert ws.memory_md.strip()
    assert ws.skills
    assert ws.registry
    assert ws.connected_integrations
    assert ws.orchestrator_tools
    assert set(ws.flavour) <= {
        "communication", "coding_style", "stack", "workflow", "environment", "directives",
        "anti_preferences",
    }  # fmt: skip
    for rel in ws.list_files():
        ws.read_file(rel)
    assert not (SHIPPED_DEMO / ".supercontext").exists()


def test_demo_workspace_is_copied_once(lab_home: Path) -> None:
    path = demo_workspace_path()
    assert path == lab_home / "demo-workspace"
    shipped = {k: v for k, v in snapshot(SHIPPED_DEMO).items() if "__pycache__" not in k}
    copied = snapshot(path)
    assert {k: v for k, v in copied.items() if not k.startswith(".supercontext")} == shipped
    assert (path / ".supercontext" / "demo-source.sha256").is_file()

    sentinel = path / "PROFILE.md"
    sentinel.write_text("edited by the user\n", encoding="utf-8")
    assert demo_workspace_path() == path
    assert sentinel.read_text(encoding="utf-8") == "edited by the user\n"
    assert [p.name for p in lab_home.iterdir() if p.name.startswith(".demo")] == []

    assert demo_workspace_path(refresh=True) == path
    assert sentinel.read_bytes() == (SHIPPED_DEMO / "PROFILE.md").read_bytes()
    assert [p.name for p in lab_home.iterdir() if p.name.startswith(".demo")] == []


def test_concurrent_first_use_yields_one_complete_copy(lab_home: Path) -> None:
    results: list[Path] = []
    errors: list[BaseException] = []

    def use() -> None:
        try:
            results.append(demo_workspace_path())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=use) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert results == [lab_home / "demo-workspace"] * 6
    copied = {k: v for k, v in snapshot(results[0]).items() if not k.startswith(".supercontext")}
    assert copied == {k: v for k, v in snapshot(SHIPPED_DEMO).items() if "__pycache__" not in k}
    assert [p.name for p in lab_home.iterdir()] == ["demo-workspace"]


def test_demo_workspace_is_recopied_when_the_shipped_content_changes(
    tmp_path: Path, lab_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "shipped"
    shutil.copytree(SHIPPED_DEMO, shipped)
    monkeypatch.setattr(demo_module, "_SHIPPED_DEMO", shipped)
    path = demo_workspace_path()
    marker = (path / ".supercontext" / "demo-source.sha256").read_text()
    write(shipped, "MEMORY.md", "- new release\n")
    assert demo_workspace_path() == path
    assert (path / "MEMORY.md").read_text(encoding="utf-8") == "- new release\n"
    assert (path / ".supercontext" / "demo-source.sha256").read_text() != marker


def test_missing_shipped_demo_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo_module, "_SHIPPED_DEMO", tmp_path / "gone")
    with pytest.raises(WorkspaceError, match="shipped demo workspace is missing"):
        demo_workspace_path()


def test_open_workspace(tmp_path: Path, lab_home: Path) -> None:
    assert open_workspace(None).root == (lab_home / "demo-workspace").resolve()
    assert open_workspace(tmp_path).root == tmp_path.resolve()
    assert open_workspace(str(tmp_path)).root == tmp_path.resolve()


def test_a_note_straight_under_memory_is_indexed_in_global(tmp_path: Path) -> None:
    write(tmp_path, "memory/freezer.md", "# Freezer inventory\nBox 3 holds the seed samples.\n")
    write(tmp_path, "memory/global/other.md", "Unrelated.\n")
    workspace = Workspace(tmp_path)
    hits = workspace.memory.recall("global", "seed samples")
    assert [(hit.namespace, hit.key) for hit in hits] == [("global", "freezer")]
    assert workspace.diagnostics == []


def test_a_loose_note_never_replaces_the_global_note_of_its_key(tmp_path: Path) -> None:
    write(tmp_path, "memory/global/plan.md", "The folder's plan.\n")
    write(tmp_path, "memory/plan.md", "The loose plan.\n")
    workspace = Workspace(tmp_path)
    assert [hit.content for hit in workspace.memory.recall("global", "plan")] == [
        "The folder's plan."
    ]
    assert workspace.diagnostics == [
        "memory/plan.md was not indexed: memory/global/plan.md has the same key; rename it."
    ]


def test_near_misses_of_the_layout_are_named_with_the_reason(tmp_path: Path) -> None:
    write(tmp_path, "Memory/global/a.md", "A note in the wrong case.\n")
    write(tmp_path, "SKILLS/x/SKILL.md", "---\nname: X\n---\n")
    write(tmp_path, "skills/y/skill.md", "---\nname: Y\n---\n")
    write(tmp_path, "skills/z/README.md", "No manifest.\n")
    write(tmp_path, "memory/todo.txt", "A text note.\n")
    write(tmp_path, "memory/global/deep/b.md", "Too deep.\n")
    write(tmp_path, "profile.md", "Lower case.\n")
    write(tmp_path, "notes.md", "At the top.\n")
    write(tmp_path, "flavour/stack.txt", "Python.\n")
    write(tmp_path, "flavour/misc.md", "Not a facet.\n")
    write(tmp_path, "flavour/Coding-Style.md", "A facet by another spelling.\n")
    write(tmp_path, "README.md", "For people.\n")
    write(tmp_path, ".hidden/x.md", "Passed over.\n")
    assert Workspace(tmp_path).diagnostics == [
        "Memory/ is not read: only memory/ is read (the name is case-sensitive); rename it.",
        "SKILLS/ is not read: only skills/ is read (the name is case-sensitive); rename it.",
        "flavour/misc.md is not read: 'misc' is not a facet (communication, coding_style, "
        "stack, workflow, environment, directives, anti_preferences); rename it.",
        "flavour/stack.txt is not read: a facet is read from a .md file, flavour/<facet>.md.",
        "memory/global/deep/ is not read: notes sit directly in a namespace folder "
        "(memory/<namespace>/<key>.md); move them up.",
        "memory/todo.txt is not read: only .md notes are indexed; rename it todo.md.",
        "notes.md is not read: at the top of a workspace only PROFILE.md and MEMORY.md are "
        "read; move a note into memory/ as a .md file, or into files/.",
        "profile.md is not read: only PROFILE.md is read (the name is case-sensitive); rename it.",
        "skills/y/skill.md is not read: only SKILL.md is read (the name is case-sensitive).",
        "skills/z/ is not read: it holds no SKILL.md, so it is not an installed skill.",
    ]


def test_the_demo_copy_reads_everything_and_keeps_its_readme() -> None:
    workspace = open_workspace(None)
    assert (workspace.root / "README.md").is_file()
    assert workspace.diagnostics == []


def test_noted_diagnostics_never_survey_the_workspace(tmp_path: Path) -> None:
    write(tmp_path, "Memory/global/a.md", "A note in the wrong case.\n")
    write(tmp_path, "memory/global/plan.md", "The folder's plan.\n")
    write(tmp_path, "memory/plan.md", "The loose plan.\n")
    workspace = Workspace(tmp_path)
    unsurveyed = (
        "not surveyed for refused files, to keep within the time limit "
        "(supercontext-lab workspace check lists them)"
    )
    assert workspace.noted_diagnostics() == [unsurveyed] and not workspace.surveyed
    workspace.memory.recall("global", "plan")
    # What the parts read refused is noted; the layout's near misses need the survey.
    loose = "memory/plan.md was not indexed: memory/global/plan.md has the same key; rename it."
    assert workspace.noted_diagnostics() == [loose, unsurveyed] and not workspace.surveyed
    surveyed = workspace.diagnostics
    assert workspace.surveyed and loose in surveyed and len(surveyed) == 2
    assert unsurveyed not in surveyed and workspace.noted_diagnostics() == surveyed
