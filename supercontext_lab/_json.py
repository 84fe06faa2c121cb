"""Small helpers for JSON values: how their type reads in a message, and compact text."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_type_name", "to_json"]


def to_json(payload: Any) -> str:
    """Compact, UTF-8-friendly JSON text: what the tools hand a model, what the trace
    stores, and the shape httpx sends a request body in (so its length is the body's)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def json_type_name(value: object) -> str:
    """How a JSON value's type reads in an error message: "a string", "an array", …"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
