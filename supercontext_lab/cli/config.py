"""``supercontext-lab config``: read or set the Super Context flag, and the models.

    supercontext-lab config get
    supercontext-lab config set on|off
    supercontext-lab config model [ID [--only scout|reply] [--base-url URL] [--api-key-env NAME]]

``get`` prints the effective flag and where it comes from (the environment, the lab's
config file, or the default); ``set`` saves it in config.toml and says so when the
environment overrides what was saved. ``model ID`` is the one switch for a model: it
saves ID as the route of the scout (``[models.burst]``) and of the reply
(``[models.agentic]``), which every thread, notebook and command then uses; ``--only``
sets one of them apart, ``offline`` goes back to the embedded models, and ``model`` alone
prints both.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import PROG, Parser, UsageProblem, emit

__all__ = ["add_config_parser"]

# The role as the user names it, and the route (model hint) it runs on.
_HINTS = {"scout": "burst", "reply": "agentic"}


def add_config_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``config`` command (``config get``, ``config set``) to the CLI's subparsers."""
    config: argparse.ArgumentParser = sub.add_parser(
        "config", help="read or set the Super Context flag"
    )
    config_sub = config.add_subparsers(dest="action", required=True, parser_class=Parser)
    config_sub.add_parser("get", help="print the effective flag and its source").set_defaults(
        handler=_cmd_config
    )
    setter = config_sub.add_parser("set", help="persist the flag in config.toml")
    setter.add_argument("value", choices=["on", "off"])
    setter.set_defaults(handler=_cmd_config)
    model = config_sub.add_parser(
        "model",
        help="print or save the model of the scout and the reply",
        description="With ID (such as local:smollm2, ollama:qwen2.5 or offline), save it in "
        "config.toml as the model of the scout ([models.burst]) and of the reply "
        "([models.agentic]); every new thread, the magics and the notebooks use it unless "
        "told otherwise. Without ID, print both.",
    )
    model.add_argument("model_id", nargs="?", metavar="ID", help="a model id; offline resets")
    model.add_argument(
        "--only", choices=list(_HINTS), help="set the model of one role only, keeping the other"
    )
    model.add_argument("--base-url", help="the server's OpenAI-compatible URL (with /v1)")
    model.add_argument("--api-key-env", help="NAME of the variable holding the API key")
    model.set_defaults(handler=_cmd_model)
    return config


def _cmd_config(args: argparse.Namespace) -> int:
    from ..config import set_super_context_enabled, super_context_status

    if args.action == "set":
        value = {"on": True, "off": False}[args.value]
        set_super_context_enabled(value)
    status = super_context_status()
    state = "on" if status.enabled else "off"
    if args.action == "set" and status.enabled != (args.value == "on"):
        emit(f"super_context_enabled: {state} (saved {args.value}, overridden by {status.detail})")
    else:
        emit(f"super_context_enabled: {status.describe()}")
    return 0


def _cmd_model(args: argparse.Namespace) -> int:
    from ..routes import ModelRoute, get_model_route, parse_model_id, set_model_route

    if args.model_id is None:
        if args.only or args.base_url or args.api_key_env:
            raise UsageProblem(
                f"{PROG}: config model: --only, --base-url and --api-key-env need ID"
            )
    else:
        route: ModelRoute | None = parse_model_id(
            args.model_id, base_url=args.base_url, api_key_env=args.api_key_env
        )
        if route is not None and route.kind == "offline" and route.model is None:
            route = None  # the default: no table at all
        for role, hint in _HINTS.items():
            if args.only in (None, role):
                set_model_route(hint, route)
    for role, hint in _HINTS.items():
        shown = get_model_route(hint)
        name = shown.label or (shown.kind if shown.model is None else f"{shown.kind}:{shown.model}")
        emit(f"{role + ':':7}{name}  ([models.{hint}])")
    return 0
