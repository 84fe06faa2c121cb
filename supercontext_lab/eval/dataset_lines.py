"""The line a dataset's case is read from, and its text fields: every error names both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._json import json_type_name
from ..errors import DatasetError

__all__ = ["Line", "optional_text", "required_text"]


class Line:
    """Error helper bound to one line of one file (and a part of it: ``at``)."""

    def __init__(self, source: str, number: int, at: str = "") -> None:
        self.source = source
        self.number = number
        self.at = at

    def error(self, problem: str) -> DatasetError:
        return DatasetError(f"{self.source}, line {self.number}: {self.at}{problem}")


def required_text(where: Line, data: Mapping[str, Any], key: str) -> str:
    if key not in data:
        raise where.error(f'"{key}" is missing; every case needs "id" and "message".')
    value = data[key]
    if not isinstance(value, str):
        raise where.error(f'"{key}" must be a string, not {json_type_name(value)}.')
    if not value.strip():
        raise where.error(f'"{key}" is empty; give the case a non-empty {key}.')
    return value


def optional_text(where: Line, data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise where.error(f'"{key}" must be a string or null, not {json_type_name(value)}.')
    return value
