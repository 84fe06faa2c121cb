"""The offline orchestrator's reply: what it already knows, as readable bullets."""

from __future__ import annotations

from supercontext_lab.bundle.render import write_envelope
from supercontext_lab.models.base import Message
from supercontext_lab.models.offline import OfflineOrchestratorModel
from supercontext_lab.models.offline.orchestrator import REPLY_WIDTH

_LONG = (
    "The NBRC Project Grant Renewal 2027–2030 for SEEDSCAPE is due 2026-12-15 at 14:00 CET. "
    "It is submitted through the NBRC application portal; late submissions are not accepted. "
    "(memory: global/deadline-grant-renewal)"
)


def _reply(summary: str) -> str:
    envelope = write_envelope(
        has_enough_context=True, proposed_goal="Finish Section 3.2", summary=summary
    )
    message = f"## Prepared context (super context)\n{envelope}\n---\nFinish Section 3.2"
    reply = OfflineOrchestratorModel().complete([Message(role="user", content=message)])
    return reply.message.content or ""


def test_a_long_bullet_is_wrapped_under_its_first_word() -> None:
    lines = _reply(f"- {_LONG}\n* Short second fact. (profile)").splitlines()
    start = lines.index("What I already know:") + 1
    bullets = lines[start:]
    assert bullets[0].startswith("  • The NBRC Project Grant Renewal")
    # Every line of the first bullet after its first is indented, none is past the width.
    first_end = next(i for i, line in enumerate(bullets) if "Short second" in line)
    assert first_end > 1
    assert all(line.startswith("    ") for line in bullets[1:first_end])
    assert all(len(line) <= REPLY_WIDTH for line in bullets)
    assert " ".join(line.strip(" •") for line in bullets[:first_end]) == _LONG
    # A bullet written with "*" is a bullet too.
    assert bullets[first_end] == "  • Short second fact. (profile)"
