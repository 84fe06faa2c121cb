"""The live ``agent.toml`` editor: a form and the raw TOML kept in sync, validated as you type.

The raw TOML text is the single source of truth. A form change is applied to the text
with :func:`~supercontext_lab.agents.edit_agent_toml` / :func:`set_tool_enabled` (so
comments and layout survive); an edit of the text is validated with the loader and, when
valid, shown in the form. While the text is invalid the form is disabled, Apply, Save and
Run again refuse, and the loader's one-line message is shown, with the line of a syntax
error (:mod:`.toml_errors`).

Where Save writes, what it refuses and what Revert loads are the files' business
(:mod:`.editor_files`): the editor shows what they say.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from ...agents.definition import AgentDefinition, load_agent_definition
from ...agents.toml_edit import edit_agent_toml, set_tool_enabled
from ...errors import AgentDefinitionError
from ...harness.progress import Progress, RunProgress
from ...scout import ScoutRun
from ...sources.workspace import Workspace
from .agent_form import OMIT_FIELDS, AgentForm
from .comparison import BundleComparison
from .editor_files import AgentFiles, Outcome
from .guard import guarded
from .html import note, pre
from .panel import BundlePanel
from .status import status_html
from .toml_errors import error_excerpt

__all__ = ["OMIT_FIELDS", "AgentEditor"]


class AgentEditor(widgets.VBox):  # type: ignore[misc]
    """Edit an agent definition live; see the module docstring for the rules.

    ``path`` is an ``agent.toml`` (or a folder holding one); a path that does not exist
    yet starts from the shipped text and Save creates it. ``rerun`` runs the scout with a
    definition (usually on the last message) for *Run again*, whose result is shown
    beside ``baseline`` (or the previous rerun) with the differences marked.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        rerun: Callable[[AgentDefinition], ScoutRun] | None = None,
        baseline: ScoutRun | None = None,
        workspace: Workspace | None = None,
    ) -> None:
        self.rerun = rerun
        self.baseline = baseline
        self.workspace = workspace
        self.last_run: ScoutRun | None = None
        self.error: str | None = None
        self._callbacks: list[Callable[[AgentDefinition], Any]] = []
        self._syncing = False
        # Where each unticked tool stood in [tools] named, so re-ticking puts it back there.
        self._tool_orders: dict[str, list[str]] = {}
        self.files = AgentFiles(path)
        self._build_controls(self.files.text, self.files.prompt)
        self.status.value = note(self.files.opening_note, "info")
        self.definition: AgentDefinition | None = self._validate()
        self._wire()

    @property
    def source_path(self) -> Path | None:
        """The agent.toml being edited (``None`` for the shipped definition)."""
        return self.files.source_path

    # -- construction ----------------------------------------------------------------------

    def _build_controls(self, text: str, prompt: str) -> None:
        self.form = AgentForm()
        # The controls stay reachable on the editor itself (tests and notebooks set them).
        form = self.form
        self.temperature, self.max_iterations = form.temperature, form.max_iterations
        self.max_result_chars, self.model_hint = form.max_result_chars, form.model_hint
        self.iteration_policy, self.sandbox_mode = form.iteration_policy, form.sandbox_mode
        self.agent_tier = form.agent_tier
        self.prefetch, self.grounding = form.prefetch, form.grounding
        self.omit_boxes, self.tool_boxes = form.omit_boxes, form.tool_boxes
        self.toml_text = widgets.Textarea(value=text, rows=30, layout=widgets.Layout(width="100%"))
        self.prompt_text = widgets.Textarea(
            value=prompt, rows=30, layout=widgets.Layout(width="100%")
        )
        self.tabs = widgets.Tab(
            children=[
                widgets.HBox([self.form, self.toml_text], layout=widgets.Layout(width="100%")),
                self.prompt_text,
            ],
            titles=("agent.toml", "prompt.md"),
        )
        self.validation = widgets.HTML()
        self.apply_button = widgets.Button(
            description="Apply", icon="check", tooltip="Use this definition in this kernel"
        )
        self.save_button = widgets.Button(
            description="Save", icon="save", tooltip="Validate, then save atomically with a backup"
        )
        self.revert_button = widgets.Button(
            description="Revert", icon="undo", tooltip="Back to the file on disk"
        )
        self.rerun_button = widgets.Button(
            description="Run again",
            icon="refresh",
            tooltip="Run the scout again with this definition and compare",
            disabled=self.rerun is None,
        )
        # "auto" rather than "100%": the label takes room too, and 100% for the whole
        # widget pushed the text box past the editor's right edge.
        self.save_path = widgets.Text(
            value="" if self.source_path is None else str(self.source_path),
            description="Save to",
            placeholder="path/to/agent.toml",
            layout=widgets.Layout(width="auto"),
        )
        self.status = widgets.HTML()
        self.status.add_class("scl-editor-status")
        # What changed on disk, shown by a Revert of a file somebody else saved.
        self.disk_changes = widgets.HTML()
        self.disk_changes.add_class("scl-editor-disk-changes")
        # The latest Run again, a new BundleComparison each time (see comparison.py).
        self.comparison: BundleComparison | None = None
        self.comparison_box = widgets.VBox(layout=widgets.Layout(width="100%"))
        self.output = widgets.Output()
        buttons = widgets.HBox(
            [self.apply_button, self.save_button, self.revert_button, self.rerun_button]
        )
        super().__init__(
            children=[
                self.tabs,
                self.validation,
                buttons,
                self.save_path,
                self.status,
                self.disk_changes,
                self.comparison_box,
                self.output,
            ]
        )
        self.add_class("scl-agent-editor")

    def _wire(self) -> None:
        for key, control in self.form.fields().items():
            control.observe(self._guarded(self._form_handler(key)), names="value")
        for tool, box in self.tool_boxes.items():
            box.observe(self._guarded(self._tool_handler(tool)), names="value")
        self.toml_text.observe(self._guarded(self._on_text), names="value")
        self.prompt_text.observe(self._guarded(self._on_text), names="value")
        self.save_path.observe(self._guarded(self._on_text), names="value")
        self.apply_button.on_click(self._guarded(self._on_apply))
        self.save_button.on_click(self._guarded(self._on_save))
        self.revert_button.on_click(self._guarded(self._on_revert))
        self.rerun_button.on_click(self._guarded(self._on_rerun))

    def _guarded(self, handler: Callable[..., None]) -> Callable[..., None]:
        return guarded(handler, output=self.output, status=self.status)

    # -- public ----------------------------------------------------------------------------

    def on_apply(
        self, callback: Callable[[AgentDefinition], Any]
    ) -> Callable[[AgentDefinition], Any]:
        """Call ``callback(definition)`` on every successful Apply (usable as a decorator)."""
        self._callbacks.append(callback)
        return callback

    @property
    def before_panel(self) -> BundlePanel | None:
        """The earlier run's panel in the latest comparison (``None`` before any)."""
        return self.comparison.before_panel if self.comparison is not None else None

    @property
    def after_panel(self) -> BundlePanel | None:
        """The latest *Run again* panel (``None`` before any)."""
        return self.comparison.after_panel if self.comparison is not None else None

    @property
    def diff_html(self) -> widgets.HTML:
        """The field-by-field differences of the latest comparison (empty before any)."""
        return self.comparison.diff_html if self.comparison is not None else widgets.HTML()

    @property
    def current(self) -> AgentDefinition | None:
        """The definition the editor holds now, or ``None`` while it is invalid."""
        return self._validate(render=False)

    # -- validation and form sync ------------------------------------------------------------

    def _validate(self, *, render: bool = True) -> AgentDefinition | None:
        try:
            definition = load_agent_definition(self.toml_text.value, prompt=self.prompt_text.value)
        except AgentDefinitionError as exc:
            if render:
                self._show_invalid(str(exc))
            return None
        if render:
            self._show_valid(definition)
        return definition

    def _show_invalid(self, message: str) -> None:
        self.error = message
        excerpt = error_excerpt(self.toml_text.value, message)
        self.validation.value = note(message, "error", strong="Invalid:") + (
            pre(excerpt) if excerpt else ""
        )
        self.form.set_disabled(True)
        for button in (self.apply_button, self.save_button, self.rerun_button):
            button.disabled = True

    def _show_valid(self, definition: AgentDefinition) -> None:
        self.error = None
        self.validation.value = note(
            f"valid · definition {definition.definition_hash()}", "ok", strong="✓"
        )
        self._syncing = True
        try:
            self.form.show(definition)
        finally:
            self._syncing = False
        self.form.set_disabled(False)
        self.apply_button.disabled = False
        self.save_button.disabled = not self.save_path.value.strip()
        self.rerun_button.disabled = self.rerun is None

    def _on_text(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        definition = self._validate()
        if change.get("owner") is not self.save_path and change.get("old") != change.get("new"):
            self._show_edited(definition)

    def _show_edited(self, definition: AgentDefinition | None) -> None:
        # Whatever the status said (a save, a rerun, a revert) was about the text before
        # this edit; leaving it would claim, say, a clean rerun of an invalid definition.
        if definition is None:
            self.status.value = note(
                "Unsaved edits, invalid: Apply, Save and Run again are off until it is fixed.",
                "warn",
            )
            return
        actions = "Apply uses them in this kernel, Save writes them"
        if self.rerun is not None:
            actions += ", Run again compares them with the last run"
        self.status.value = note(f"Unsaved edits: {actions}.", "info")

    def _write_text(self, new_text: str) -> None:
        if new_text != self.toml_text.value:
            self.toml_text.value = new_text  # validates and re-syncs the form

    def _refuse_form_change(self, exc: AgentDefinitionError) -> None:
        # The text stays valid; put the form back to what the text says.
        self._validate()
        self.validation.value = note(
            f"{exc} The form change was not applied.", "error", strong="Refused:"
        )

    def _form_handler(self, key: str) -> Callable[[dict[str, Any]], None]:
        def handle(change: dict[str, Any]) -> None:
            if self._syncing:
                return
            value = change["new"]
            if isinstance(value, float):
                value = round(value, 4)  # slider steps are binary floats
            try:
                self._write_text(edit_agent_toml(self.toml_text.value, {key: value}))
            except AgentDefinitionError as exc:
                self._refuse_form_change(exc)

        return handle

    def _tool_handler(self, tool: str) -> Callable[[dict[str, Any]], None]:
        def handle(change: dict[str, Any]) -> None:
            if self._syncing:
                return
            enabled = bool(change["new"])
            definition = self.current
            if not enabled and definition is not None:
                self._tool_orders[tool] = list(definition.tools.named)
            order = self._tool_orders.get(tool) if enabled else None
            try:
                self._write_text(set_tool_enabled(self.toml_text.value, tool, enabled, order=order))
            except AgentDefinitionError as exc:
                self._refuse_form_change(exc)

        return handle

    # -- buttons -----------------------------------------------------------------------------

    def _refused(self, action: str) -> None:
        self.status.value = note(
            f"{action} refused: the definition is invalid ({self.error}). Fix it first.",
            "error",
        )

    def _on_apply(self, _button: Any = None) -> None:
        definition = self._validate()
        if definition is None:
            self._refused("Apply")
            return
        self.definition = definition
        for callback in list(self._callbacks):
            callback(definition)
        self.status.value = note(
            f"Applied definition {definition.definition_hash()} to this kernel.", "ok"
        )

    def _show(self, outcome: Outcome) -> None:
        self.status.value = note(outcome.message, outcome.kind)

    def _allowed(self) -> list[Path]:
        """Folders a linked agent file may lead into besides its own: the workspace."""
        return [self.workspace.root] if self.workspace is not None else []

    def _on_save(self, _button: Any = None) -> None:
        definition = self._validate()
        if definition is None:
            self._refused("Save")
            return
        target = self.files.save_target(self.save_path.value)
        if isinstance(target, Outcome):
            self._show(target)
            return
        refusal = self.files.check_unchanged(target)
        if refusal is not None:
            self._show(refusal)
            return
        outcome = self.files.save(
            target, self.toml_text.value, self.prompt_text.value, allowed=self._allowed()
        )
        if outcome.written:
            self.disk_changes.value = ""
        self._show(outcome)

    def _on_revert(self, _button: Any = None) -> None:
        text, prompt, outcome, changes = self.files.revert()
        self._syncing = True
        try:
            self.toml_text.value = text
            self.prompt_text.value = prompt
        finally:
            self._syncing = False
        self._validate()
        self.disk_changes.value = changes
        self._show(outcome)

    def _on_rerun(self, _button: Any = None) -> None:
        if self.rerun is None:
            self.status.value = note("Run again needs a rerun function; none was given.", "warn")
            return
        definition = self._validate()
        if definition is None:
            self._refused("Run again")
            return
        previous = self.last_run or self.baseline

        def show(progress: Progress) -> None:
            self.status.value = status_html(progress, what="Run again")

        with RunProgress(show) as progress:
            progress.set("running the scout", f"with definition {definition.definition_hash()}")
            run = self.rerun(definition)
        self.last_run = run
        self._show_comparison(previous, run)

    def _show_comparison(self, previous: ScoutRun | None, run: ScoutRun) -> None:
        # A new widget, never the old one refilled: a cell that displayed the previous
        # comparison keeps showing that step.
        self.comparison = BundleComparison(previous, run, workspace=self.workspace)
        self.comparison_box.children = (self.comparison,)
        changed = self.comparison.changed
        self.status.value = note(
            f"Ran again with definition {run.definition_hash}. Changed: "
            + (", ".join(changed) if changed else "nothing"),
            "ok",
        )
