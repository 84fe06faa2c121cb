"""Small helpers for messages about JSON values."""

from __future__ import annotations

__all__ = ["json_type_name"]


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
