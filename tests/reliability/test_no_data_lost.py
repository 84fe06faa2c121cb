"""No data lost: concurrent writers, saves interrupted at every step and invalid edits
(corrupt files and a damaged memory index are in ``test_corrupt_files.py``).

The eight-process ``config.toml`` storm lives in ``tests/config/test_store_processes.py``
(``test_concurrent_writers_lose_no_update``); its ``agent.toml`` counterpart is here.
Crashes are simulated two ways: an error raised at each step of a save (the code's own
clean-up runs) and a process killed with ``os._exit`` at each step (nothing runs after).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from supercontext_lab.agents.definition import default_agent_toml, load_agent_definition
from supercontext_lab.agents.toml_edit import (
    backup_path,
    edit_agent_toml,
    save_agent_files,
    set_tool_enabled,
)
from supercontext_lab.config import (
    config_path,
    set_setting,
    set_super_context_enabled,
    update_config,
)
from supercontext_lab.errors import AgentDefinitionError, ConfigError

from .support import fingerprint, write

REPO_ROOT = Path(__file__).resolve().parents[2]

OLDER = edit_agent_toml(default_agent_toml(), {"temperature": 0.1})
OLD = edit_agent_toml(default_agent_toml(), {"temperature": 0.2})
NEW = edit_agent_toml(default_agent_toml(), {"temperature": 0.9, "max_iterations": 5})
OLD_PROMPT = "You are the old scout.\n"
NEW_PROMPT = "You are the new scout.\n"


def clean_env(home: Path) -> dict[str, str]:
    """A minimal environment for a child process (no inherited lab variables)."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home.parent),
        "PYTHONPATH": str(REPO_ROOT),
        "SUPERCONTEXT_LAB_HOME": str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def run_children(
    code: str, argv_list: list[list[str]], env: dict[str, str]
) -> list[subprocess.CompletedProcess[str]]:
    """Run one child per argv at the same time and wait for all of them."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code), *argv],
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in argv_list
    ]
    done = []
    for child, argv in zip(children, argv_list, strict=True):
        out, err = child.communicate(timeout=60)
        done.append(subprocess.CompletedProcess(argv, child.returncode, out, err))
    return done


# ---------------------------------------------------------------------- concurrent saves

SAVER = """
import sys
from pathlib import Path
from supercontext_lab.agents.definition import default_agent_toml
from supercontext_lab.agents.toml_edit import edit_agent_toml, save_agent_files

path, worker, saves = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for index in range(saves):
    temperature = round(worker / 10 + index / 1000, 4)
    save_agent_files(path, edit_agent_toml(default_agent_toml(), {"temperature": temperature}))
"""

LOADER = """
import os, sys
from pathlib import Path
from supercontext_lab.agents.definition import load_agent_definition

path, stop = Path(sys.argv[1]), sys.argv[2]
reads = 0
while True:
    done = os.path.exists(stop)
    load_agent_definition(path)           # a torn file would raise here
    load_agent_definition(path.with_name(path.name + ".bak"))
    reads += 1
    if done:
        break
print(reads)
"""


@pytest.mark.slow
def test_eight_processes_saving_agent_toml_leave_it_whole(tmp_path: Path, lab_home: Path) -> None:
    """8 processes saving agent.toml 25 times each while a reader loads it and its backup."""
    workers, saves = 8, 25
    path = tmp_path / "agent" / "agent.toml"
    save_agent_files(path, OLD)
    save_agent_files(path, OLD)
    env = clean_env(lab_home)
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(LOADER), str(path), str(stop)],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        results = run_children(
            SAVER, [[str(path), str(w), str(saves)] for w in range(1, workers + 1)], env
        )
    finally:
        stop.touch()
        reads, reader_err = reader.communicate(timeout=60)
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    assert reader.returncode == 0, reader_err
    assert int(reads) >= 1
    written = {round(w / 10 + i / 1000, 4) for w in range(1, workers + 1) for i in range(saves)}
    assert load_agent_definition(path).temperature in written
    assert load_agent_definition(backup_path(path)).temperature in written | {0.2}
    assert sorted(p.name for p in path.parent.iterdir()) == ["agent.toml", "agent.toml.bak"]


# ---------------------------------------------------------------------- interrupted saves


class Crash(OSError):
    """The simulated failure at one step of a save: the disk is full."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.ENOSPC, message)


class Steps:
    """Counts the file-system steps of a save and fails the ``crash_at``-th one."""

    def __init__(self, crash_at: int | None) -> None:
        self.crash_at = crash_at
        self.count = 0

    def step(self) -> None:
        self.count += 1
        if self.count == self.crash_at:
            raise Crash(f"simulated crash at step {self.count}")


class _Handle:
    """A file handle whose writes count as steps; a crashing write writes half first."""

    def __init__(self, handle: Any, steps: Steps) -> None:
        self._handle = handle
        self._steps = steps

    def write(self, data: Any) -> int:
        try:
            self._steps.step()
        except Crash:
            self._handle.write(data[: len(data) // 2])
            self._handle.flush()
            raise
        return int(self._handle.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> _Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.__exit__(*exc)


@contextmanager
def instrumented(monkeypatch: pytest.MonkeyPatch, steps: Steps) -> Iterator[None]:
    """Make mkstemp, every write, fsync, chmod and replace a countable, crashable step."""
    real_mkstemp, real_fdopen = tempfile.mkstemp, os.fdopen
    real_fsync, real_replace, real_chmod = os.fsync, os.replace, os.chmod

    def mkstemp(*args: Any, **kwargs: Any) -> Any:
        steps.step()
        return real_mkstemp(*args, **kwargs)

    def fdopen(*args: Any, **kwargs: Any) -> Any:
        return _Handle(real_fdopen(*args, **kwargs), steps)

    def fsync(fd: int) -> None:
        steps.step()
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        steps.step()
        real_replace(src, dst)

    def chmod(path: Any, mode: int, **kwargs: Any) -> None:
        steps.step()
        real_chmod(path, mode, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(tempfile, "mkstemp", mkstemp)
        patch.setattr(os, "fdopen", fdopen)
        patch.setattr(os, "fsync", fsync)
        patch.setattr(os, "replace", replace)
        patch.setattr(os, "chmod", chmod)
        yield


def _agent_folder(base: Path) -> Path:
    """An agent folder holding OLD (prompt OLD_PROMPT) with OLDER as its backup."""
    folder = base / "agent"
    save_agent_files(folder / "agent.toml", OLDER, prompt=OLD_PROMPT)
    save_agent_files(folder / "agent.toml", OLD, prompt=OLD_PROMPT)
    return folder


def _count_steps(monkeypatch: pytest.MonkeyPatch, action: Callable[[], object]) -> int:
    """How many instrumented steps ``action`` takes when nothing fails."""
    steps = Steps(None)
    with instrumented(monkeypatch, steps):
        action()
    return steps.count


def _check_agent_folder(folder: Path, *, with_prompt: bool) -> None:
    """Each file is old or new, whole; a new file always has the old one as backup."""
    toml = (folder / "agent.toml").read_text(encoding="utf-8")
    backup = backup_path(folder / "agent.toml").read_text(encoding="utf-8")
    assert toml in (OLD, NEW)
    assert backup in (OLDER, OLD)
    if toml == NEW:
        assert backup == OLD
    load_agent_definition(folder / "agent.toml")
    load_agent_definition(backup_path(folder / "agent.toml"))
    prompt = (folder / "prompt.md").read_text(encoding="utf-8")
    assert prompt in (OLD_PROMPT, NEW_PROMPT)
    if prompt == NEW_PROMPT:
        assert with_prompt
        assert (folder / "prompt.md.bak").read_text(encoding="utf-8") == OLD_PROMPT


@pytest.mark.parametrize("with_prompt", [False, True], ids=["agent.toml", "agent.toml+prompt.md"])
def test_agent_save_failing_at_every_step_keeps_old_or_new(
    with_prompt: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """agent.toml (and prompt.md) save failing with a full disk at every step."""
    prompt = NEW_PROMPT if with_prompt else None
    dry = _agent_folder(tmp_path / "dry")
    total = _count_steps(
        monkeypatch, lambda: save_agent_files(dry / "agent.toml", NEW, prompt=prompt)
    )
    assert total >= 8  # backup and file: mkstemp, write, fsync, replace each
    for crash_at in range(1, total + 1):
        folder = _agent_folder(tmp_path / f"crash-{crash_at}")
        with (
            instrumented(monkeypatch, Steps(crash_at)),
            pytest.raises(AgentDefinitionError, match="could not save") as err,
        ):
            save_agent_files(folder / "agent.toml", NEW, prompt=prompt)
        assert isinstance(err.value.__cause__, Crash)
        _check_agent_folder(folder, with_prompt=with_prompt)
        names = sorted(p.name for p in folder.iterdir())
        assert names == ["agent.toml", "agent.toml.bak", "prompt.md", "prompt.md.bak"]
        # and the next save simply works
        save_agent_files(folder / "agent.toml", NEW, prompt=prompt)
        assert (folder / "agent.toml").read_text(encoding="utf-8") == NEW


KILLED_SAVE = """
import os, sys, tempfile
from pathlib import Path

crash_at, kind = int(sys.argv[2]), sys.argv[3]
count = 0


def step():
    global count
    count += 1
    if count == crash_at:
        os._exit(137)   # the process dies here: no clean-up, no flush


def counted(real):
    def wrapper(*args, **kwargs):
        step()
        return real(*args, **kwargs)
    return wrapper


tempfile.mkstemp = counted(tempfile.mkstemp)
os.fsync = counted(os.fsync)
os.replace = counted(os.replace)
os.chmod = counted(os.chmod)
if kind == "agent":
    from supercontext_lab.agents.toml_edit import save_agent_files
    save_agent_files(Path(sys.argv[1]), sys.stdin.read(), prompt="You are the new scout.\\n")
else:
    from supercontext_lab.config import set_setting
    set_setting("stress.value", "new")
print(count)
"""


def _killed_at(kind: str, target: Path, crash_at: int, home: Path, text: str = "") -> int:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_SAVE), str(target), str(crash_at), kind],
        input=text,
        env=clean_env(home),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode in (0, 137), done.stderr
    return done.returncode


@pytest.mark.slow
def test_agent_save_killed_at_every_step_keeps_old_or_new(tmp_path: Path, lab_home: Path) -> None:
    """agent.toml and prompt.md save killed (os._exit) at every step."""
    crash_at, outcomes = 1, []
    while True:
        folder = _agent_folder(tmp_path / f"killed-{crash_at}")
        code = _killed_at("agent", folder / "agent.toml", crash_at, lab_home, NEW)
        _check_agent_folder(folder, with_prompt=True)
        leftovers = [p for p in folder.iterdir() if p.name.endswith(".tmp")]
        assert all(p.name.startswith((".agent.toml.", ".prompt.md.")) for p in leftovers)
        outcomes.append((folder / "agent.toml").read_text(encoding="utf-8") == NEW)
        if code == 0:
            break
        crash_at += 1
    assert crash_at >= 9  # every step was tried, then the save ran to the end
    assert outcomes[0] is False and outcomes[-1] is True


def _config_before() -> bytes:
    text = '# my settings\n[context]\nsuper_context_enabled = false\n\n[stress]\nvalue = "old"\n'
    write(config_path(), text)
    return text.encode()


def _check_config(before: bytes) -> None:
    text = config_path().read_text(encoding="utf-8")
    data = tomlkit.parse(text).unwrap()
    assert data["stress"]["value"] in ("old", "new")
    if data["stress"]["value"] == "old":
        assert text.encode() == before
    assert data["context"]["super_context_enabled"] is False
    assert text.startswith("# my settings\n")


def test_config_save_failing_at_every_step_keeps_old_or_new(
    lab_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """config.toml save failing with a full disk at every step."""
    _config_before()
    total = _count_steps(monkeypatch, lambda: set_setting("stress.value", "new"))
    assert total >= 4
    for crash_at in range(1, total + 1):
        before = _config_before()
        if crash_at == total:
            # The last step, the folder's fsync after the rename, may fail quietly.
            with instrumented(monkeypatch, Steps(crash_at)):
                set_setting("stress.value", "new")
        else:
            with instrumented(monkeypatch, Steps(crash_at)), pytest.raises(ConfigError) as err:
                set_setting("stress.value", "new")
            assert str(config_path()) in str(err.value)  # the disk error, naming the file
        _check_config(before)
        assert sorted(p.name for p in lab_home.iterdir()) == ["config.toml", "config.toml.lock"]


@pytest.mark.slow
def test_config_save_killed_at_every_step_keeps_old_or_new(lab_home: Path) -> None:
    """config.toml save killed (os._exit) at every step."""
    crash_at = 1
    while True:
        before = _config_before()
        code = _killed_at("config", config_path(), crash_at, lab_home)
        _check_config(before)
        for leftover in lab_home.glob(".config.toml.*.tmp"):
            leftover.unlink()  # what a killed writer leaves behind is a stray temp file only
        if code == 0:
            break
        crash_at += 1
    assert crash_at >= 5
    assert tomlkit.parse(config_path().read_text(encoding="utf-8"))["stress"]["value"] == "new"


# ---------------------------------------------------------------------- invalid edits

INVALID_EDITS: list[tuple[str, dict[str, Any]]] = [
    ("temperature-above-2", {"temperature": 3}),
    ("temperature-negative", {"temperature": -0.1}),
    ("temperature-boolean", {"temperature": True}),
    ("temperature-text", {"temperature": "hot"}),
    ("max-iterations-zero", {"max_iterations": 0}),
    ("max-iterations-float", {"max_iterations": 2.5}),
    ("max-result-chars-below-500", {"max_result_chars": 100}),
    ("unknown-policy", {"iteration_policy": "forever"}),
    ("unknown-sandbox", {"sandbox_mode": "root"}),
    ("bad-id", {"id": "bad id!"}),
    ("empty-model-hint", {"model.hint": ""}),
    ("unknown-top-key", {"unknown_key": 1}),
    ("unknown-model-key", {"model.extra": 1}),
    ("unknown-tools-key", {"tools.extra": []}),
    ("shell-tool", {"tools.named": ["memory_recall", "shell"]}),
    ("memory-tree-tool", {"tools.named": ["memory_tree"]}),
    ("file-write-tool", {"tools.named": ["file_write"]}),
    ("install-tool", {"tools.named": ["skill_registry_install"]}),
    ("recursion-tool", {"tools.named": ["agent_prepare_context"]}),
    ("unknown-tool", {"tools.named": ["teleport"]}),
    ("duplicate-tool", {"tools.named": ["memory_recall", "memory_recall"]}),
    ("worker-with-subagents", {"subagents.named": ["helper"]}),
    ("named-not-a-list", {"tools.named": "memory_recall"}),
    ("tools-not-a-table", {"tools": 5}),
]


def _raw_edit(text: str, changes: dict[str, Any]) -> str:
    """Apply ``changes`` with tomlkit alone, skipping validation (what a careless editor
    might try to save)."""
    doc = tomlkit.parse(text)
    for dotted, value in changes.items():
        *tables, key = dotted.split(".")
        node: Any = doc
        for name in tables:
            if name not in node or not hasattr(node[name], "keys"):
                node[name] = tomlkit.table()
            node = node[name]
        node[key] = value
    return tomlkit.dumps(doc)


@pytest.mark.parametrize(("case", "changes"), INVALID_EDITS, ids=[c for c, _ in INVALID_EDITS])
def test_invalid_agent_edit_is_never_written(
    case: str, changes: dict[str, Any], tmp_path: Path
) -> None:
    """Invalid agent.toml edits, refused by the editor and by the save."""
    folder = _agent_folder(tmp_path)
    before = fingerprint(folder)
    with pytest.raises(AgentDefinitionError):
        edit_agent_toml(OLD, changes)
    with pytest.raises(AgentDefinitionError):
        save_agent_files(folder / "agent.toml", _raw_edit(OLD, changes))
    assert fingerprint(folder) == before


@pytest.mark.parametrize(
    ("case", "save"),
    [
        ("toml-syntax-error", lambda p: save_agent_files(p, "temperature = [")),
        ("empty-text", lambda p: save_agent_files(p, "")),
        ("empty-prompt", lambda p: save_agent_files(p, OLD, prompt="  \n")),
        ("enable-shell", lambda p: save_agent_files(p, set_tool_enabled(OLD, "shell", True))),
        (
            "enable-file-write",
            lambda p: save_agent_files(p, set_tool_enabled(OLD, "file_write", True)),
        ),
    ],
)
def test_invalid_agent_save_is_never_written(
    case: str, save: Callable[[Path], object], tmp_path: Path
) -> None:
    """Invalid text, an empty prompt and write tools given to save_agent_files."""
    folder = _agent_folder(tmp_path)
    before = fingerprint(folder)
    with pytest.raises(AgentDefinitionError):
        save(folder / "agent.toml")
    assert fingerprint(folder) == before


def _set_flag_to_text(doc: Any) -> None:
    doc["context"]["super_context_enabled"] = "yes"


def _replace_context(doc: Any) -> None:
    doc["context"] = 5


def _fail_midway(doc: Any) -> None:
    doc["stress"]["value"] = "half-done"
    raise RuntimeError("the edit failed half way")


@pytest.mark.parametrize(
    ("case", "write_it", "error"),
    [
        ("flag-not-a-bool", lambda: set_super_context_enabled("yes"), TypeError),  # type: ignore[arg-type]
        (
            "flag-setting-not-a-bool",
            lambda: set_setting("context.super_context_enabled", "on"),
            TypeError,
        ),
        (
            "route-through-set-setting",
            lambda: set_setting("models.burst.kind", "openai"),
            ValueError,
        ),
        ("setting-of-a-bad-type", lambda: set_setting("web.timeout", [1]), TypeError),  # type: ignore[arg-type]
        ("edit-makes-flag-text", lambda: update_config(_set_flag_to_text), ConfigError),
        ("edit-replaces-a-table", lambda: update_config(_replace_context), ConfigError),
        ("edit-raises-half-way", lambda: update_config(_fail_midway), RuntimeError),
    ],
)
def test_invalid_config_write_is_never_written(
    case: str, write_it: Callable[[], object], error: type[Exception], lab_home: Path
) -> None:
    """Invalid config writes: wrong types, bad edits, an edit failing half way."""
    before = _config_before()
    with pytest.raises(error):
        write_it()
    assert config_path().read_bytes() == before
