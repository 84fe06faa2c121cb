"""agent.toml and prompt.md as the editor opens and saves them: links, special files,
read-only files.

A definition folder is often a checkout where ``agent.toml`` links to the version in use.
Replacing that link with a plain file leaves the file it names unchanged while the editor
says "Saved"; following a link anywhere writes outside the folders the user chose; a FIFO
read as agent.toml hangs the kernel. Each case is checked through the editor's own
buttons, and every file involved is compared before and after.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from supercontext_lab.agents import default_agent_toml, default_prompt, load_agent_definition
from supercontext_lab.errors import AgentDefinitionError
from supercontext_lab.lab.widgets import AgentEditor
from supercontext_lab.sources.workspace import Workspace

from .support import finishes, write


def _snapshot(*folders: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry below ``folders``: a link's target, a file's bytes."""
    found: dict[str, tuple[str, bytes]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink():
                found[str(path)] = ("link", os.readlink(path).encode())
            elif path.is_file():
                found[str(path)] = ("file", path.read_bytes())
    return found


class Layout:
    """A definition folder, a workspace and a folder outside both."""

    def __init__(self, base: Path) -> None:
        self.folder = base / "scout"
        self.workspace = base / "ws"
        self.outside = base / "outside"
        for folder in (self.folder, self.workspace, self.outside):
            folder.mkdir(parents=True)
        write(self.workspace / "PROFILE.md", "# A researcher\n")
        self.agent = self.folder / "agent.toml"

    def link(self, name: str, target: Path) -> Path:
        link = self.folder / name
        link.symlink_to(target)
        return link


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path)


def _save_hotter(editor: AgentEditor) -> str:
    editor.temperature.value = 0.9
    editor.save_button.click()
    return str(editor.status.value)


# ------------------------------------------------------------------------ links kept


def _beside(layout: Layout) -> Path:
    return write(layout.folder / "versions" / "v2.toml", default_agent_toml())


def _in_workspace(layout: Layout) -> Path:
    return write(layout.workspace / "agents" / "scout.toml", default_agent_toml())


KEPT: dict[str, Callable[[Layout], Path]] = {
    "a-file-in-a-folder-of-the-definition": _beside,
    "a-file-in-the-workspace": _in_workspace,
}


@pytest.mark.parametrize("make", list(KEPT.values()), ids=list(KEPT))
def test_a_linked_agent_toml_is_saved_through_its_link(
    make: Callable[[Layout], Path], layout: Layout
) -> None:
    """agent.toml linked inside the definition's folder or the workspace: saved through

    The link stays a link, the file it names holds the new text with its mode kept, the
    previous version is kept beside it, and the status says where the text went."""
    target = make(layout)
    target.chmod(0o640)
    layout.link("agent.toml", target)
    editor = AgentEditor(layout.agent, workspace=Workspace(layout.workspace))

    status = _save_hotter(editor)

    assert layout.agent.is_symlink() and layout.agent.resolve() == target.resolve()
    assert target.read_text("utf-8") == editor.toml_text.value
    assert "temperature = 0.9" in target.read_text("utf-8")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.with_name(target.name + ".bak").read_text("utf-8") == default_agent_toml()
    assert load_agent_definition(layout.agent).temperature == 0.9
    assert "Saved" in status and str(target.resolve()) in status


def test_a_linked_prompt_md_is_saved_through_its_link(layout: Layout) -> None:
    """prompt.md linked inside the definition's folder: the prompt goes through the link"""
    write(layout.agent, default_agent_toml())
    prompt = write(layout.folder / "prompts" / "careful.md", default_prompt())
    layout.link("prompt.md", prompt)
    editor = AgentEditor(layout.agent)
    editor.prompt_text.value = "You are a careful scout.\n"

    editor.save_button.click()

    assert (layout.folder / "prompt.md").is_symlink()
    assert prompt.read_text("utf-8") == "You are a careful scout.\n"
    assert load_agent_definition(layout.agent).prompt == "You are a careful scout.\n"
    assert "Saved" in editor.status.value


# --------------------------------------------------------------------------- refused


def _outside(layout: Layout) -> None:
    layout.link("agent.toml", write(layout.outside / "agent.toml", default_agent_toml()))


def _loop(layout: Layout) -> None:
    layout.link("agent.toml", layout.folder / "other.toml")
    layout.link("other.toml", layout.agent)


def _nothing(layout: Layout) -> None:
    layout.link("agent.toml", layout.folder / "gone.toml")


def _fifo(layout: Layout) -> None:
    os.mkfifo(layout.folder / "pipe.toml")
    layout.link("agent.toml", layout.folder / "pipe.toml")


def _device(layout: Layout) -> None:
    layout.link("agent.toml", Path("/dev/null"))


def _read_only_target(layout: Layout) -> None:
    target = write(layout.folder / "versions" / "v1.toml", default_agent_toml())
    target.chmod(0o444)
    layout.link("agent.toml", target)


def _read_only_file(layout: Layout) -> None:
    write(layout.agent, default_agent_toml()).chmod(0o444)


def _prompt_outside(layout: Layout) -> None:
    write(layout.agent, default_agent_toml())
    layout.link("prompt.md", write(layout.outside / "prompt.md", default_prompt()))


REFUSED: dict[str, tuple[Callable[[Layout], None], str]] = {
    "a-link-to-a-file-outside": (_outside, "outside"),
    "a-link-loop": (_loop, "link loop"),
    "a-link-to-nothing": (_nothing, "does not exist"),
    "a-link-to-a-fifo": (_fifo, "FIFO"),
    "a-link-to-a-device": (_device, "outside"),
    "a-link-to-a-read-only-file": (_read_only_target, "read-only"),
    "a-read-only-agent-toml": (_read_only_file, "read-only"),
    "prompt-md-linked-outside": (_prompt_outside, "outside"),
}


@pytest.mark.parametrize(("make", "cause"), list(REFUSED.values()), ids=list(REFUSED))
def test_a_save_the_editor_cannot_make_is_refused_with_its_cause(
    make: Callable[[Layout], None], cause: str, layout: Layout
) -> None:
    """Links out, loops, links to nothing, FIFOs, devices, read-only files: refused, one line

    Typed into 'Save to' (the editor cannot open a FIFO to begin with); nothing in any
    folder changes, links included, and the status never says "Saved"."""
    make(layout)
    before = _snapshot(layout.folder, layout.workspace, layout.outside)
    editor = AgentEditor(workspace=Workspace(layout.workspace))
    editor.save_path.value = str(layout.agent)
    editor.prompt_text.value = "You are a careful scout.\n"

    status = finishes(10, lambda: _save_hotter(editor))

    assert _snapshot(layout.folder, layout.workspace, layout.outside) == before
    assert "Saved" not in status
    assert cause in status and "not saved" in status
    assert "\n" not in status


SPECIAL: dict[str, Callable[[Layout], None]] = {
    "a-fifo": lambda layout: os.mkfifo(layout.agent),
    "a-link-to-a-fifo": _fifo,
    "a-device": _device,
    "a-fifo-as-prompt-md": lambda layout: (
        write(layout.agent, default_agent_toml()),
        os.mkfifo(layout.folder / "prompt.md"),
    ),
}


@pytest.mark.parametrize("make", list(SPECIAL.values()), ids=list(SPECIAL))
def test_opening_a_special_file_is_one_line_at_once(
    make: Callable[[Layout], None], layout: Layout
) -> None:
    """Opening a FIFO, a link to one or a device in the editor: one line at once, no wait"""
    make(layout)
    with pytest.raises(AgentDefinitionError) as caught:
        finishes(10, lambda: AgentEditor(layout.agent))
    assert "not a regular file" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_path_holding_a_nul_is_one_line(layout: Layout) -> None:
    """A NUL in the path to open or in 'Save to': one line, nothing written"""
    with pytest.raises(AgentDefinitionError) as caught:
        AgentEditor(str(layout.folder) + "/agent\0.toml")
    assert "NUL" in str(caught.value)
    editor = AgentEditor()
    editor.save_path.value = str(layout.folder) + "/agent\0.toml"
    status = _save_hotter(editor)
    assert "NUL" in status and "Saved" not in status
    assert list(layout.folder.iterdir()) == []


def test_an_agent_toml_linked_to_the_environment_is_never_read(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """agent.toml or prompt.md linked to /proc/self/environ: refused, the key never shown"""
    canary = "sk-canary-agent-file-0123456789"
    monkeypatch.setenv("SUPERCONTEXT_PROBE_KEY", canary)
    layout.link("agent.toml", Path("/proc/self/environ"))
    with pytest.raises(AgentDefinitionError) as caught:
        AgentEditor(layout.agent)
    assert "not a regular file" in str(caught.value) and canary not in str(caught.value)
    with pytest.raises(AgentDefinitionError):
        load_agent_definition(layout.agent)
    layout.agent.unlink()
    write(layout.agent, default_agent_toml())
    layout.link("prompt.md", Path("/proc/self/environ"))
    with pytest.raises(AgentDefinitionError) as caught:
        AgentEditor(layout.agent)
    assert canary not in str(caught.value)
