"""Hostile workspaces and hostile input: reads confined to the workspace, every parser
bounded, every save atomic, every deadline covering the whole call.

A workspace is often somebody else's folder, so each of its sources is tried as a link
out of it (to a secret file, to ``/proc/self/environ``, to a device, as a FIFO), and each
file the lab parses is tried as a bomb (nesting, size). The expected behaviour is the
same everywhere: a one-line error naming the file, a turn that goes on (cold when it
must), the refusal recorded where a user can see it, and nothing lost.
"""

from __future__ import annotations

import json
import math
import os
import random
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from supercontext_lab.agents.definition import default_agent_toml, load_agent_definition
from supercontext_lab.agents.toml_edit import backup_path, edit_agent_toml, save_agent_files
from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.config import config_path, load_config, set_setting
from supercontext_lab.errors import (
    AgentDefinitionError,
    CacheError,
    ConfigError,
    DatasetError,
    WorkspaceError,
)
from supercontext_lab.eval.dataset import parse_dataset
from supercontext_lab.eval.results import ResultStore
from supercontext_lab.harness import Thread
from supercontext_lab.models.cache import ResponseCache
from supercontext_lab.scout.tool_round import tool_pool
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.tools.web import fetch_url

from .support import (
    ORCHESTRATOR_REPLY,
    Sandbox,
    assert_one_line_exit_2,
    finishes,
    header_dripper,
    run_cli,
    run_turn,
    shown_texts,
    write,
)

REPO = Path(__file__).resolve().parents[2]
SECRET = "OUTSIDE-SECRET-5d1f"
TOML_SECRET = f'[[tool]]\nname = "{SECRET}"\ndescription = "{SECRET}"\n' + (
    f'[[integration]]\ntoolkit = "{SECRET}"\nconnected = true\n'
)
JSON_SECRET = json.dumps([{"id": SECRET, "name": SECRET, "description": SECRET}])
MD_SECRET = f"---\nname: {SECRET}\ndescription: {SECRET}\n---\n{SECRET} lives here.\n"


# ---------------------------------------------------------------------- 1. confinement

# (the source, the path a link takes inside the workspace, what the outside file holds)
LINKED_SOURCES = [
    ("profile", "PROFILE.md", MD_SECRET),
    ("memory-md", "MEMORY.md", MD_SECRET),
    ("flavour", "flavour/communication.md", MD_SECRET),
    ("skill", "skills/grant-budget-check/SKILL.md", MD_SECRET),
    ("registry", "registry.json", JSON_SECRET),
    ("integrations", "integrations.toml", TOML_SECRET),
    ("orchestrator-tools", "orchestrator_tools.toml", TOML_SECRET),
    ("memory-document", "memory/global/notes.md", MD_SECRET),
    ("memory-namespace-folder", "memory/linked", None),
    ("flavour-folder", "flavour", None),
    ("skill-folder", "skills/linked-skill", None),
]


def _link_out(sandbox: Sandbox, rel: str, content: str | None) -> Path:
    """Replace ``rel`` in the workspace by a link to a secret outside it."""
    link = sandbox.root / rel
    if link.is_dir() and not link.is_symlink():
        for child in sorted(link.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() else child.unlink()
        link.rmdir()
    link.unlink(missing_ok=True)
    link.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        folder = sandbox.outside / "folder"
        write(folder / "communication.md", MD_SECRET)
        write(folder / "secret.md", MD_SECRET)
        write(folder / "SKILL.md", MD_SECRET)
        link.symlink_to(folder, target_is_directory=True)
    else:
        target = write(sandbox.outside / f"secret-{link.name}", content)
        link.symlink_to(target)
    return link


def _workspace_texts(workspace: Workspace) -> list[str]:
    """Everything the workspace hands the scout, read through its public API."""
    texts = [workspace.profile_md, workspace.memory_md, *workspace.flavour.values()]
    texts += [repr(skill) for skill in workspace.skills]
    texts += [repr(entry) for entry in workspace.registry]
    texts += [repr(item) for item in workspace.integrations]
    texts += [repr(tool) for tool in workspace.orchestrator_tools]
    texts += [repr(hit) for hit in workspace.memory.recall("*", SECRET, limit=50)]
    return texts


@pytest.mark.parametrize(
    ("source", "rel", "content"), LINKED_SOURCES, ids=[c[0] for c in LINKED_SOURCES]
)
def test_every_workspace_source_linked_outside_is_refused(
    source: str, rel: str, content: str | None, sandbox: Sandbox
) -> None:
    """Each workspace source (file or folder) linked outside: refused, shown, turn goes on"""
    _link_out(sandbox, rel, content)
    before = sandbox.fingerprint()
    workspace = Workspace(sandbox.root)
    assert all(SECRET not in text for text in _workspace_texts(workspace))
    refusals = [d for d in workspace.diagnostics if "outside the workspace" in d]
    assert refusals, workspace.diagnostics
    assert any(rel.split("/")[0] in d for d in refusals), refusals
    assert all("\n" not in d for d in workspace.diagnostics)

    turn = run_turn(sandbox.root, None)
    assert turn.result.reply == ORCHESTRATOR_REPLY
    assert turn.result.scout is not None
    assert any("outside the workspace" in p for p in turn.result.scout.problems)
    assert all(SECRET not in text for text in shown_texts(turn))
    assert sandbox.fingerprint() == before


SPECIAL = ["fifo", "dev-zero", "dev-urandom", "proc-environ-with-links-allowed"]


@pytest.mark.parametrize("kind", SPECIAL)
def test_special_files_are_refused_even_with_outside_links_allowed(
    kind: str, sandbox: Sandbox
) -> None:
    """A FIFO, a device or /proc as a workspace file: refused at once, never read"""
    set_setting("workspace.allow_outside_links", True)
    profile = sandbox.root / "PROFILE.md"
    profile.unlink()
    if kind == "fifo":
        os.mkfifo(profile)
    else:
        target = {
            "dev-zero": "/dev/zero",
            "dev-urandom": "/dev/urandom",
            "proc-environ-with-links-allowed": "/proc/self/environ",
        }[kind]
        profile.symlink_to(target)
    workspace = Workspace(sandbox.root)
    assert finishes(10, lambda: workspace.profile_md) == ""
    assert any("PROFILE.md" in d and "not a regular file" in d for d in workspace.diagnostics), (
        workspace.diagnostics
    )
    turn = finishes(30, lambda: run_turn(sandbox.root, None))
    assert turn.result.reply == ORCHESTRATOR_REPLY


def test_links_that_stay_inside_the_workspace_keep_working(sandbox: Sandbox) -> None:
    """Links that stay inside the workspace are followed, with no refusal recorded"""
    write(sandbox.root / "notes" / "profile.md", "Linked profile: PROFILE-INSIDE.\n")
    write(sandbox.root / "notes" / "memo.md", "Linked memo: MEMO-INSIDE ferns.\n")
    (sandbox.root / "PROFILE.md").unlink()
    (sandbox.root / "PROFILE.md").symlink_to("notes/profile.md")
    (sandbox.root / "memory" / "global" / "memo.md").symlink_to("../../notes/memo.md")
    (sandbox.root / "memory" / "shared").symlink_to("../notes", target_is_directory=True)
    workspace = Workspace(sandbox.root)
    assert "PROFILE-INSIDE" in workspace.profile_md
    hits = workspace.memory.recall("*", "ferns", limit=10)
    assert {(h.namespace, h.key) for h in hits} == {("global", "memo"), ("shared", "memo")}
    # No refusal; only the layout's note that notes/ itself is no part of a workspace
    # (its files are read through the links, as memory and PROFILE.md).
    assert workspace.diagnostics == [
        "notes/ is not read: not a part of a workspace (memory/, flavour/, skills/, files/); "
        "move notes into memory/<namespace>/ and other files into files/."
    ]


def test_outside_links_are_followed_only_when_allowed(sandbox: Sandbox) -> None:
    """workspace.allow_outside_links (off by default) opts in to links leaving the folder"""
    _link_out(sandbox, "PROFILE.md", MD_SECRET)
    assert SECRET not in Workspace(sandbox.root).profile_md
    assert SECRET in Workspace(sandbox.root, allow_outside_links=True).profile_md
    set_setting("workspace.allow_outside_links", True)
    assert SECRET in Workspace(sandbox.root).profile_md


_ENVIRON_SCRIPT = """
import json, os, sys
from pathlib import Path
from supercontext_lab.harness import Thread
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.testing import OpenAITestServer, ScriptedModel, ScriptedResponse, envelope

root = Path(sys.argv[1])
out = Path(sys.argv[2])
calls = [("memory_recall", json.dumps({"namespace": "*", "query": "SC_RELIABILITY_API_KEY"})),
         ("memory_flavour", json.dumps({"flavour": "communication"})),
         ("list_workflows", "{}"), ("skill_registry_browse", "{}")]
replies = [ScriptedResponse.reply(tool_calls=calls),
           ScriptedResponse.reply(envelope(summary="done", proposed_goal=None))]
with OpenAITestServer(replies) as server:
    model = OpenAICompatibleModel(base_url=server.base_url, model="m",
                                  api_key_env="SC_RELIABILITY_API_KEY", timeout_s=5)
    thread = Thread(root, scout_model=model, orchestrator_model=ScriptedModel(["ok"] * 4),
                    super_context_enabled=True, scout_timeout_s=20)
    result = thread.send("Help me check the grant renewal budget before I send it")
    saved = thread.save(out.with_suffix(".thread.json")).read_text("utf-8")
    scout = result.scout
    out.write_text(json.dumps({
        "authorization": [r.headers.get("Authorization") for r in server.requests],
        "bodies": [r.body.decode("utf-8", "replace") for r in server.requests],
        "shown": [json.dumps(result.to_dict()), repr(result), saved,
                  *(m.content or "" for m in scout.messages), *scout.problems],
        "problems": scout.problems,
        "preparation": result.preparation,
    }))
"""


def test_canary_in_the_environment_reaches_only_the_authorization_header(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """Every source linked at /proc/self/environ: the key stays in the Authorization header"""
    canary = "sk-canary-ENVIRON-3b8e2f"
    for rel in [
        "PROFILE.md",
        "MEMORY.md",
        "flavour/communication.md",
        "skills/grant-budget-check/SKILL.md",
        "registry.json",
        "integrations.toml",
        "memory/global/grant-budget.md",
    ]:
        path = sandbox.root / rel
        path.unlink()
        path.symlink_to("/proc/self/environ")
    (sandbox.root / "orchestrator_tools.toml").symlink_to("/proc/self/environ")
    script = tmp_path / "run.py"
    script.write_text(_ENVIRON_SCRIPT, encoding="utf-8")
    out = tmp_path / "out.json"
    env = {**os.environ, "SC_RELIABILITY_API_KEY": canary}
    done = subprocess.run(
        [sys.executable, str(script), str(sandbox.root), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text("utf-8"))
    assert report["authorization"] and all(a == f"Bearer {canary}" for a in report["authorization"])
    for index, text in enumerate([*report["bodies"], *report["shown"], done.stdout, done.stderr]):
        assert canary not in text, f"the canary leaked into text #{index}: {text[:300]!r}"
    assert any("outside the workspace" in p for p in report["problems"]), report["problems"]


# ---------------------------------------------------------------------- 2. TOML bombs


def _nested_arrays(depth: int) -> str:
    return "x = " + "[" * depth + "]" * depth + "\n"


TOML_BOMBS = [
    ("arrays-100k-deep", _nested_arrays(100_000)),
    ("inline-tables-5k-deep", "x = " + "{a = " * 5_000 + "1" + "}" * 5_000 + "\n"),
    ("dotted-key-100k-long", "a" + ".a" * 100_000 + " = 1\n"),
    ("table-header-100k-long", "[" + ".".join(["t"] * 100_000) + "]\n"),
    # Past every size limit (1M characters, 4 MB for config.toml) without filling the disk.
    ("string-of-5mb", 'x = "' + "s" * 5_000_000 + '"\n'),
    ("array-of-1.5m-items", "x = [" + "1," * 1_500_000 + "]\n"),
]


@pytest.mark.parametrize(("bomb", "text"), TOML_BOMBS, ids=[b[0] for b in TOML_BOMBS])
@pytest.mark.parametrize("file", ["orchestrator_tools.toml", "integrations.toml"])
def test_workspace_toml_bomb_makes_a_cold_turn_naming_the_file(
    file: str, bomb: str, text: str, sandbox: Sandbox
) -> None:
    """A workspace TOML bomb: a one-line WorkspaceError, and a cold turn naming the file"""
    write(sandbox.root / file, text)
    workspace = Workspace(sandbox.root)
    with pytest.raises(WorkspaceError) as caught:
        _ = workspace.orchestrator_tools if file.startswith("orch") else workspace.integrations
    message = str(caught.value)
    assert file in message and "\n" not in message and len(message) < 400
    started = time.perf_counter()
    turn = run_turn(sandbox.root, None)
    assert time.perf_counter() - started < 20
    assert turn.result.reply == ORCHESTRATOR_REPLY
    assert turn.result.preparation == "failed"
    assert turn.result.reason_detail is not None and file in turn.result.reason_detail


@pytest.mark.parametrize(("bomb", "text"), TOML_BOMBS, ids=[b[0] for b in TOML_BOMBS])
def test_config_toml_bomb_is_one_config_error(bomb: str, text: str) -> None:
    """A config.toml bomb: load_config raises one line naming the file, nothing rewritten"""
    path = config_path()
    write(path, text)
    before = path.read_bytes()
    with pytest.raises(ConfigError) as caught:
        load_config()
    message = str(caught.value)
    assert str(path) in message and "\n" not in message and len(message) < 600
    with pytest.raises(ConfigError):
        set_setting("web.timeout_s", 5.0)
    assert path.read_bytes() == before


def test_config_toml_bomb_is_one_line_from_therun_cli() -> None:
    """A nested config.toml: the CLI prints one line and exits 2, no traceback"""
    write(config_path(), _nested_arrays(100_000))
    assert_one_line_exit_2(run_cli("config", "get"), "config.toml")


@pytest.mark.parametrize(("bomb", "text"), TOML_BOMBS, ids=[b[0] for b in TOML_BOMBS])
def test_agent_toml_bomb_is_one_agent_definition_error(
    bomb: str, text: str, tmp_path: Path
) -> None:
    """An agent.toml bomb: loading and editing it raise one AgentDefinitionError"""
    path = write(tmp_path / "agent.toml", text)
    for attempt in (
        lambda: load_agent_definition(path),
        lambda: load_agent_definition(text),
        lambda: edit_agent_toml(text, {"temperature": 0.5}),
    ):
        with pytest.raises(AgentDefinitionError) as caught:
            finishes(20, attempt)
        assert "\n" not in str(caught.value) and len(str(caught.value)) < 600


# ---------------------------------------------------------------------- 4. saves


def test_saves_keep_the_file_mode(tmp_path: Path) -> None:
    """agent.toml, prompt.md, config.toml and saved threads keep their permission bits"""
    agent = write(tmp_path / "agent" / "agent.toml", default_agent_toml())
    prompt = write(tmp_path / "agent" / "prompt.md", "You are a scout.\n")
    agent.chmod(0o644)
    prompt.chmod(0o640)
    save_agent_files(agent, edit_agent_toml(agent.read_text("utf-8"), {"temperature": 0.4}),
                     prompt="You are a careful scout.\n")  # fmt: skip
    assert stat.S_IMODE(agent.stat().st_mode) == 0o644
    assert stat.S_IMODE(prompt.stat().st_mode) == 0o640
    assert stat.S_IMODE(backup_path(agent).stat().st_mode) == 0o644

    set_setting("web.timeout_s", 5.0)
    config_path().chmod(0o600)
    set_setting("web.timeout_s", 6.0)
    assert stat.S_IMODE(config_path().stat().st_mode) == 0o600

    thread_file = write(tmp_path / "thread.json", "{}")
    thread_file.chmod(0o640)
    Thread(tmp_path, super_context_enabled=False).save(thread_file)
    assert stat.S_IMODE(thread_file.stat().st_mode) == 0o640


def test_threads_saving_one_file_at_once_never_fail(tmp_path: Path) -> None:
    """8 threads saving one thread file 40 times each: no error, always a whole file"""
    target = tmp_path / "thread.json"
    threads = [Thread(tmp_path, super_context_enabled=False, goal=f"goal {i}") for i in range(8)]
    errors: list[BaseException] = []
    stop = threading.Event()
    seen: list[str] = []

    def save(thread: Thread) -> None:
        try:
            for _ in range(40):
                thread.save(target)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    def read() -> None:
        while not stop.is_set():
            try:
                seen.append(json.loads(target.read_text("utf-8"))["goal"])
            except FileNotFoundError:
                continue

    reader = threading.Thread(target=read)
    reader.start()
    workers = [threading.Thread(target=save, args=(t,)) for t in threads]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stop.set()
    reader.join()
    assert errors == []
    assert set(seen) <= {f"goal {i}" for i in range(8)}
    assert [p.name for p in tmp_path.iterdir() if p.name != "thread.json"] == []


_SAVER = """
import sys
from pathlib import Path
from supercontext_lab.agents.definition import default_agent_toml
from supercontext_lab.agents.toml_edit import edit_agent_toml, save_agent_files
from supercontext_lab.config import set_setting
from supercontext_lab.harness import Thread

kind, target = sys.argv[1], Path(sys.argv[2])
print("ready", flush=True)
for round in range(1, 100000):
    if kind == "thread":
        Thread(target.parent, super_context_enabled=False, goal="x" * 20000 + str(round)).save(target)
    elif kind == "agent":
        text = edit_agent_toml(default_agent_toml(), {"display_name": "v" * 5000 + str(round)})
        save_agent_files(target, text, prompt="p" * 20000 + str(round))
    else:
        set_setting("lab.note", "c" * 20000 + str(round))
"""


def _check_whole(kind: str, target: Path) -> None:
    if kind == "thread":
        data = json.loads(target.read_text("utf-8"))
        assert data["goal"].startswith("x" * 20000)
    elif kind == "agent":
        definition = load_agent_definition(target)
        assert definition.display_name.startswith("v" * 5000)
        prompt = target.with_name("prompt.md").read_text("utf-8")
        assert prompt.startswith("p" * 20000) and prompt[20000:].isdigit()
    else:
        assert str(load_config()["lab"]["note"]).startswith("c" * 20000)


@pytest.mark.parametrize("kind", ["thread", "agent", "config"])
def test_saves_killed_at_random_points_leave_old_or_new(kind: str, tmp_path: Path) -> None:
    """Saving processes killed with SIGKILL at random points: always a whole old or new file"""
    folder = tmp_path / "target"
    folder.mkdir()
    target = folder / ("thread.json" if kind == "thread" else "agent.toml")
    if kind == "config":
        target = config_path()
    script = tmp_path / "saver.py"
    script.write_text(_SAVER, encoding="utf-8")
    chance = random.Random(f"kill-{kind}")
    kills = 0
    for _attempt in range(12):
        saver = subprocess.Popen(
            [sys.executable, str(script), kind, str(target)],
            stdout=subprocess.PIPE,
            env=os.environ.copy(),
        )
        assert saver.stdout is not None
        saver.stdout.readline()
        time.sleep(chance.uniform(0.02, 0.4))
        saver.send_signal(signal.SIGKILL)
        saver.wait()
        kills += 1
        if target.exists():
            _check_whole(kind, target)
    assert kills == 12 and target.exists()


# ---------------------------------------------------------------------- 5. deadlines


def test_web_fetch_deadline_covers_the_response_headers() -> None:
    """A server dripping one header line at a time: web_fetch gives up on time"""
    with header_dripper() as url:
        started = time.perf_counter()
        result = finishes(15, lambda: fetch_url(url, timeout=1.0, allow_private_addresses=True))
        elapsed = time.perf_counter() - started
    assert not result.ok and "timed out" in result.content
    assert elapsed < 2.5, elapsed


def test_stuck_fetches_free_the_shared_tool_pool() -> None:
    """40 stuck fetches on the shared pool of 16 threads all end, and the pool is free again"""
    pool = tool_pool()
    with header_dripper() as url:
        started = time.perf_counter()
        futures = [
            pool.submit(fetch_url, url, timeout=0.5, allow_private_addresses=True)
            for _ in range(40)
        ]
        results = [future.result(timeout=20) for future in futures]
        elapsed = time.perf_counter() - started
        assert all(not r.ok and "timed out" in r.content for r in results)
        assert pool.submit(lambda: "free").result(timeout=2) == "free"
    assert elapsed < 5, elapsed


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-1", "1e309"])
def test_scout_timeout_that_is_not_a_finite_positive_number_is_refused(value: str) -> None:
    """scout --timeout inf/nan/0/negative: one line, exit 2"""
    assert_one_line_exit_2(run_cli("scout", "--timeout", value, "hello there"), "--timeout")


def test_nested_agent_toml_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    """scout --agent with a 100k-deep agent.toml: one line naming the file, exit 2"""
    agent = write(tmp_path / "agent.toml", _nested_arrays(100_000))
    assert_one_line_exit_2(run_cli("scout", "--agent", str(agent), "plan my week"), "agent.toml")


@pytest.mark.parametrize(
    ("bomb", "line"),
    [
        ("array-100k-deep", "[" * 100_000 + "]" * 100_000),
        ("object-100k-deep", '{"a":' * 100_000 + "1" + "}" * 100_000),
        ("deep-inside-a-case", '{"id": "a", "message": "m", "expect": ' + "[" * 50_000 + "]" * 50_000 + "}"),
    ],
    ids=["array-100k-deep", "object-100k-deep", "deep-inside-a-case"],
)  # fmt: skip
def test_nested_dataset_line_is_one_dataset_error(bomb: str, line: str, tmp_path: Path) -> None:
    """A nested line in an eval dataset: DatasetError naming the line; the CLI exits 2"""
    text = '{"id": "ok", "message": "hello"}\n' + line + "\n"
    with pytest.raises(DatasetError) as caught:
        parse_dataset(text, source="cases.jsonl")
    assert "line 2" in str(caught.value) and "\n" not in str(caught.value)
    dataset = write(tmp_path / "cases.jsonl", text)
    assert_one_line_exit_2(run_cli("eval", "--dataset", str(dataset)), "line 2")


# ---------------------------------------------------------------------- 6. the rest


def test_nested_json_in_workspace_and_saved_files_is_one_error(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """A 100k-deep registry.json and saved thread: one-line errors, a cold turn"""
    bomb = "[" * 100_000 + "]" * 100_000
    write(sandbox.root / "registry.json", bomb)
    with pytest.raises(WorkspaceError) as caught:
        _ = Workspace(sandbox.root).registry
    assert "registry.json" in str(caught.value) and "\n" not in str(caught.value)
    turn = run_turn(sandbox.root, None)
    assert turn.result.reply == ORCHESTRATOR_REPLY

    saved = write(tmp_path / "thread.json", '{"goal": ' + bomb + "}")
    with pytest.raises(WorkspaceError) as loading:
        Thread.load(saved)
    assert "thread.json" in str(loading.value) and "\n" not in str(loading.value)


def test_nested_json_in_an_envelope_and_a_cache_record_is_data(tmp_path: Path) -> None:
    """100k-deep JSON args in an envelope and in a cached record: no RecursionError"""
    deep = "[" * 100_000 + "]" * 100_000
    bundle = parse_context_bundle(
        "[context_bundle]\nhas_enough_context: true\nproposed_goal: none\nsummary: s\n"
        f'recommended_tool_calls:\n  - tool: web_search\n    args: {{"q": {deep}}}\n'
        "    why: w\n[/context_bundle]"
    )
    assert bundle is not None
    assert bundle.recommended_tool_calls[0].args_json is None

    cache = ResponseCache(tmp_path / "cache.sqlite3")
    store = ResultStore(tmp_path / "cache.sqlite3")
    store.put("r", {"ok": True})
    store.close()
    cache.close()
    with sqlite3.connect(tmp_path / "cache.sqlite3") as conn:  # damaged by another tool
        conn.execute(
            "INSERT INTO responses(key, model, base_url, reply, created) VALUES (?, ?, ?, ?, 0)",
            ("k", "m", "", deep),
        )
        conn.execute("UPDATE case_results SET result = ? WHERE key = 'r'", (deep,))
    cache = ResponseCache(tmp_path / "cache.sqlite3")
    store = ResultStore(tmp_path / "cache.sqlite3")
    for read in (lambda: cache.get("k"), lambda: store.get("r")):
        with pytest.raises(CacheError) as caught:
            read()
        assert "cache.sqlite3" in str(caught.value) and "\n" not in str(caught.value)
    cache.close()
    store.close()


@pytest.mark.parametrize("value", [math.inf, math.nan, -1.0])
def test_web_timeout_setting_that_is_not_finite_is_refused(value: float) -> None:
    """web.timeout_s of inf, nan or below zero: web_fetch refuses with one line"""
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(f"[web]\ntimeout_s = {value!s}\n", "utf-8")
    result = fetch_url("http://127.0.0.1:9/x", allow_private_addresses=True)
    assert not result.ok and "timeout" in result.content and "\n" not in result.content


def test_memory_tree_refuses_links_leaving_its_folder(tmp_path: Path) -> None:
    """MemoryTree on its own: a linked document or namespace is not indexed, and reported"""
    outside = write(tmp_path / "outside" / "secret.md", MD_SECRET)
    root = tmp_path / "tree"
    write(root / "memory" / "global" / "fine.md", "ferns are fine")
    (root / "memory" / "global" / "secret.md").symlink_to(outside)
    (root / "memory" / "elsewhere").symlink_to(outside.parent, target_is_directory=True)
    with MemoryTree(root) as tree:
        assert tree.recall("*", SECRET, limit=10) == []
        assert [h.key for h in tree.recall("*", "ferns")] == ["fine"]
        refused = tree.last_sync.refused
        assert sorted(rel for rel, _ in refused) == ["elsewhere", "global/secret.md"], refused
        assert all("outside the workspace" in reason for _, reason in refused)
