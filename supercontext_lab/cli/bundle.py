"""``supercontext-lab bundle check``: would the harness accept this model output's envelope?

    supercontext-lab bundle check FILE [--json] [--strict] [--workspace DIR]

Parses the output (a file, or ``-`` for stdin) as the harness does and gives two verdicts:
*valid*, the output holds exactly one well-formed ``[context_bundle]`` envelope the harness
can read; *accepted*, valid and not refused by the options (``--strict`` refuses an
envelope with warnings, ``--workspace`` one recommending tools or skills the workspace
lacks). Exit status: 0 when accepted, 1 otherwise, 2 for bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .common import Parser, emit, emit_json, plural, read_text_input, workspace_argument

if TYPE_CHECKING:
    from ..bundle import ContextBundle
    from ..scout import Dropped

__all__ = ["add_bundle_parser"]


def add_bundle_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``bundle`` command (``bundle check``) to the CLI's subparsers."""
    bundle: argparse.ArgumentParser = sub.add_parser(
        "bundle", help="work with [context_bundle] envelopes"
    )
    bundle_sub = bundle.add_subparsers(dest="bundle_command", required=True, parser_class=Parser)
    check = bundle_sub.add_parser(
        "check",
        help="parse a model output and say whether its envelope would be accepted",
        description="Parse a model output as the harness does and say whether its envelope "
        "would be accepted. Two verdicts (the --json keys): valid means the output holds "
        "exactly one well-formed [context_bundle] envelope the harness can read; an output "
        "that is not valid is always rejected. accepted means valid and not refused by the "
        "options: --strict refuses an envelope with warnings (unknown keys, unreadable "
        "values, a missing summary), which the harness itself would read in part, and "
        "--workspace refuses recommended tools or skills the workspace lacks. So "
        '"valid": true, "accepted": false says the harness would use the envelope but the '
        "stricter check did not pass. In --json output a tool call's args is the JSON "
        "object the envelope wrote (a sketch that is not JSON stays text). Exit status: 0 "
        "when accepted, 1 otherwise.",
    )
    check.add_argument("file", help="a file holding the model output, or - for stdin")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument(
        "--strict",
        action="store_true",
        help="also fail (exit 1) when there are warnings: unknown keys, unreadable values, "
        "a missing summary",
    )
    check.add_argument(
        "--workspace",
        help="also check that every recommended tool is in this workspace's orchestrator "
        "catalogue and every skill is installed or in its registry (exit 1 otherwise)",
    )
    check.set_defaults(handler=_cmd_bundle_check)
    return bundle


def _cmd_bundle_check(args: argparse.Namespace) -> int:
    from ..bundle import bundle_rejection_reason, parse_context_bundle
    from ..bundle.lint import bundle_warnings
    from ..bundle.render import render_plain

    output = read_text_input(args.file)
    bundle = parse_context_bundle(output)
    if bundle is None:
        reason = bundle_rejection_reason(output) or "the output holds no usable envelope"
        if args.json:
            emit_json({"valid": False, "accepted": False, "reason": reason, "warnings": []})
        else:
            emit(f"rejected: {reason}")
        return 1
    # "valid" is the harness's rule (SPEC §2.1); --strict also refuses what it would
    # read only in part.
    warnings = bundle_warnings(output)
    unknown = _name_check(bundle, args.workspace)
    accepted = not (args.strict and warnings) and not unknown
    if args.json:
        report = {"valid": True, "accepted": accepted, "warnings": warnings}
        if args.workspace is not None:
            report["names"] = [item.to_dict() for item in unknown]
        emit_json({**report, "bundle": _checked_bundle_json(bundle)})
        return 0 if accepted else 1
    for item in unknown:
        emit(f"unknown name: {item.kind} {item.item!r}: {item.why}")
    if unknown:
        emit(f"rejected: {plural(len(unknown), 'name')} not found in the workspace")
    elif not accepted:
        emit(f"rejected (--strict): {plural(len(warnings), 'warning')}")
    elif warnings:
        emit(f"accepted, with {plural(len(warnings), 'warning')}: the harness would use it")
    else:
        emit("accepted: the harness would use this envelope")
    for warning in warnings:
        emit(f"warning: {warning}")
    emit(render_plain(bundle))
    return 0 if accepted else 1


def _checked_bundle_json(bundle: ContextBundle) -> dict[str, Any]:
    """The bundle as ``bundle check --json`` prints it: a tool call's ``args`` is the JSON
    object the envelope wrote (a sketch that is not a JSON object stays its text)."""
    data = bundle.to_dict()
    for call, shown in zip(
        bundle.recommended_tool_calls, data["recommended_tool_calls"], strict=True
    ):
        if call.args_json is not None:
            shown["args"] = call.args_json
    return data


def _name_check(bundle: ContextBundle, workspace: str | None) -> list[Dropped]:
    """The grounding check's name checks against ``--workspace`` (none without it)."""
    if workspace is None:
        return []
    from ..scout.grounding import check_names

    return check_names(bundle, workspace_argument(workspace))
