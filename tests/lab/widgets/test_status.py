"""The live status line of a run: escaped, a widget view only, gone when the run ends."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell
from IPython.display import display
from IPython.utils.capture import capture_output

from supercontext_lab.harness.progress import Progress
from supercontext_lab.lab.shown import WIDGET_VIEW_MIME
from supercontext_lab.lab.widgets import RunStatus
from supercontext_lab.lab.widgets.status import status_html

SCRIPT = "<script>alert(1)</script>"


def test_the_line_names_the_phase_and_the_seconds_and_escapes_the_rest() -> None:
    line = status_html(Progress("asking the model", f"m{SCRIPT} (call 2 of up to 8)", 12.4))
    assert "<b>Scout:</b> asking the model m&lt;script&gt;" in line
    assert "(call 2 of up to 8)" in line
    assert "· 12 s</span>" in line
    assert "<script" not in line


def test_it_is_displayed_as_a_view_only_and_hidden_when_finished(
    shell: InteractiveShell,  # a shell to display in
) -> None:
    status = RunStatus("Turn")
    with capture_output() as captured:
        display(status)
    (output,) = captured.outputs
    assert set(output.data) == {WIDGET_VIEW_MIME}
    assert output.data[WIDGET_VIEW_MIME]["model_id"] == status.model_id

    status.show(Progress("gathering", "with memory_recall", 1.0))
    assert "<b>Turn:</b> gathering with memory_recall" in status.value
    status.finish()
    assert status.value == ""
    assert status.layout.display == "none"
