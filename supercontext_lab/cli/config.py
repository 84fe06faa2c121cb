"""``supercontext-lab config``: read or set the Super Context flag.

    supercontext-lab config get
    supercontext-lab config set on|off

``get`` prints the effective flag and where it comes from (the environment, the lab's
config file, or the default); ``set`` saves it in config.toml and says so when the
environment overrides what was saved.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import Parser, emit

__all__ = ["add_config_parser"]


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
