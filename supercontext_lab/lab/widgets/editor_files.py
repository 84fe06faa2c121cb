"""The files behind the live ``agent.toml`` editor: what they held, where a Save goes, and
whether somebody else saved them in between.

Saving: the file opened is saved in place; the shipped definition (``path=None``) is
read-only, so Save writes to the path typed in the editor's *Save to* (a "save as" that
then becomes the file being edited). The package's own ``context_scout`` folder is never
written. Saves are atomic and keep a ``.bak`` of the replaced file; a file that is a link
is written through to its target when that stays inside the definition's folder or the
workspace, and refused with the cause otherwise (see
:func:`~supercontext_lab.agents.toml_edit.write_target`).

Files are read bounded and without blocking (a FIFO given as agent.toml is refused, not
waited on). :class:`AgentFiles` remembers what the file held when it was opened (or last
saved or reverted): a Save over a file that somebody else has saved since is refused, and
Revert then loads the file and shows what changed on disk. Every answer is an
:class:`Outcome`, a sentence for the editor's status line; the editor decides nothing
about files itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...agents import definition as definition_module
from ...agents.definition import default_agent_toml, default_prompt, read_agent_file
from ...agents.toml_edit import backup_path, save_agent_files, write_target
from .diff import text_diff_html

__all__ = ["SHIPPED_DIR", "AgentFiles", "OnDisk", "Outcome", "on_disk", "prompt_for"]

SHIPPED_DIR = Path(definition_module.__file__).resolve().parent / "context_scout"
"""The package's own definition folder: read, never written."""

OnDisk = tuple[str | None, str | None]
"""What an agent.toml and the prompt.md beside it hold on disk (``None``: no file)."""


def on_disk(toml_path: Path) -> OnDisk:
    """What ``toml_path`` and the prompt.md beside it hold now."""
    return read_agent_file(toml_path), read_agent_file(toml_path.with_name("prompt.md"))


def prompt_for(toml_path: Path) -> str:
    """The prompt a definition saved at ``toml_path`` would load: prompt.md beside it, else
    the shipped one."""
    beside = read_agent_file(toml_path.with_name("prompt.md"))
    return default_prompt() if beside is None else beside


@dataclass(frozen=True)
class Outcome:
    """What a file operation says: a sentence and the kind of note it is shown as."""

    message: str
    kind: str = "info"
    written: bool = False
    """Whether a Save wrote the files (what changed on disk before is then moot)."""


class AgentFiles:
    """The agent file an editor edits (``source_path``, ``None`` for the shipped one) and
    what it last saw there.

    ``path`` is an ``agent.toml``, a folder holding one, a file that does not exist yet
    (Save creates it from the shipped text) or ``None``. :attr:`text` and :attr:`prompt`
    are what the editor opens with; :attr:`opening_note` says which case it was.
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.source_path: Path | None = None
        # What the file held when it was opened, saved or reverted (see check_unchanged).
        self.disk: OnDisk = (None, None)
        self.text, self.prompt = default_agent_toml(), default_prompt()
        self.opening_note = (
            "Editing the shipped definition (read-only): type a path in 'Save to' to save a copy."
        )
        if path is not None:
            target = Path(path).expanduser()
            self.source_path = target / "agent.toml" if target.is_dir() else target
            self.disk = on_disk(self.source_path)
            if self.disk[0] is not None:
                self.text, self.prompt = self.disk[0], prompt_for(self.source_path)
                self.opening_note = f"Editing {self.source_path}."
            else:
                self.opening_note = (
                    f"{self.source_path} does not exist yet: Save creates it from this text."
                )
        # What a Revert of a definition with no file on disk goes back to.
        self.saved_text, self.saved_prompt = self.text, self.prompt

    def save_target(self, raw: str) -> Path | Outcome:
        """The file *Save to* ``raw`` names, or the refusal when it names none allowed."""
        raw = raw.strip()
        if not raw:
            return Outcome(
                "Save refused: type the path of your copy in 'Save to' first "
                "(the shipped definition is read-only).",
                "warn",
            )
        if "\0" in raw:
            return Outcome("Save refused: the path in 'Save to' holds a NUL.", "warn")
        target = Path(raw).expanduser()
        if target.is_dir():
            target = target / "agent.toml"
        # realpath, not resolve: a link loop must reach the save's own refusal.
        if Path(os.path.realpath(target)).parent == SHIPPED_DIR:
            return Outcome(
                "Save refused: the shipped definition is read-only; choose another path.", "warn"
            )
        return target

    def check_unchanged(self, target: Path) -> Outcome | None:
        """The refusal when ``target`` no longer holds what was last seen there, else
        ``None``. A first save to another path names a file on purpose: no refusal."""
        if self.source_path is None or os.path.abspath(target) != os.path.abspath(self.source_path):
            return None
        if on_disk(target) == self.disk:
            return None
        return Outcome(
            f"Save refused: {target} changed on disk since you opened it; nothing was "
            "written. Revert loads it and shows what changed.",
            "error",
        )

    def save(self, target: Path, text: str, prompt: str, *, allowed: list[Path]) -> Outcome:
        """Write ``text`` to ``target`` and ``prompt`` to the prompt.md beside it (unless
        that already holds it); ``target`` becomes the file being edited."""
        # Both files, always: an agent.toml saved alone would run with whatever prompt.md
        # lies beside it later, or the shipped one, not the prompt the editor showed; and a
        # copied definition is whole only with its prompt. A prompt.md that already holds
        # this prompt is left as it is (no new .bak of an unchanged file).
        prompt_arg = None if read_agent_file(target.with_name("prompt.md")) == prompt else prompt
        real = write_target(target, allowed=allowed)
        existed = real.exists()
        try:
            save_agent_files(target, text, prompt=prompt_arg, allowed=allowed)
        except OSError as exc:
            return Outcome(f"Save failed: {target}: {exc}", "error")
        self.source_path = target
        self.saved_text, self.saved_prompt = text, prompt
        self.disk = on_disk(target)
        if self.disk[0] != text:
            # Saved, then replaced at once by another save: "Saved" would be untrue. What
            # this editor wrote stays its base, so Save refuses and Revert shows theirs.
            self.disk = (text, self.disk[1])
            return Outcome(
                f"Save of {target} was overwritten at once: it holds other text now. "
                "Revert loads it.",
                "error",
                written=True,
            )
        through = f" (through the link to {real})" if real != target else ""
        kept = f" (previous version kept in {backup_path(real).name})" if existed else ""
        also = " and prompt.md" if prompt_arg is not None else " (prompt.md beside it unchanged)"
        return Outcome(f"Saved {target}{through}{also}{kept}.", "ok", written=True)

    def revert(self) -> tuple[str, str, Outcome, str]:
        """What to go back to: the text and prompt, the status, and the HTML of what
        changed on disk since it was last seen (``""`` when nothing did)."""
        changes = ""
        source = self.source_path
        if source is not None and source.exists():
            disk = on_disk(source)
            text = disk[0] or ""
            prompt = default_prompt() if disk[1] is None else disk[1]
            where = str(source)
            if disk != self.disk:
                changes = self._changes_html(disk)
                where += ", which changed on disk since you opened it (changes below)"
            self.disk = disk
        else:
            text, prompt = self.saved_text, self.saved_prompt
            where = "the text it was opened with"
        self.saved_text, self.saved_prompt = text, prompt
        return text, prompt, Outcome(f"Reverted to {where}."), changes

    def _changes_html(self, disk: OnDisk) -> str:
        """The differences between what was last seen on disk and ``disk``."""
        names = ("agent.toml", "prompt.md")
        return "".join(
            text_diff_html(before or "", after or "", title=name)
            for name, before, after in zip(names, self.disk, disk, strict=True)
            if before != after
        )
