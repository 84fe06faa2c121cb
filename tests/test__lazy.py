"""Lazy package exports: a name's module is imported when the name is first used."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from supercontext_lab._json import json_type_name
from supercontext_lab._lazy import lazy_exports


def test_a_name_is_loaded_on_first_access_and_kept() -> None:
    namespace: dict[str, Any] = {"__all__": ["json_type_name"], "kept": 1}
    get, names = lazy_exports("supercontext_lab", {"_json": ("json_type_name",)}, namespace)
    assert "json_type_name" not in namespace
    assert get("json_type_name") is json_type_name
    assert namespace["json_type_name"] is json_type_name
    assert names() == ["__all__", "json_type_name", "kept"]


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    get, _ = lazy_exports("supercontext_lab", {"_json": ("json_type_name",)}, {})
    with pytest.raises(AttributeError, match="module 'supercontext_lab' has no attribute 'nope'"):
        get("nope")


def test_importing_the_package_loads_the_engine_only_when_it_is_used() -> None:
    code = (
        "import sys, supercontext_lab\n"
        "print('supercontext_lab.harness' in sys.modules)\n"
        "supercontext_lab.Thread\n"
        "print('supercontext_lab.harness' in sys.modules)\n"
        "print('Thread' in dir(supercontext_lab))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True"]
