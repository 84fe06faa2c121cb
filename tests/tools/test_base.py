"""Every tool result leaves the registry with secrets masked (tools/base.py)."""

from __future__ import annotations

import json

from supercontext_lab._secrets import SECRET_MARKER
from supercontext_lab.tools.base import NoArgs, ToolRegistry, ToolResult, make_tool, masked_result

AWS = "AKIAIOSFODNN7EXAMPLE"
PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"


def _registry(result: ToolResult) -> ToolRegistry:
    return ToolRegistry([make_tool("read", "Read.", NoArgs, lambda _args: result)])


def test_a_structured_result_is_masked_in_its_data_and_its_json() -> None:
    payload = {"hits": [{"content": f"key {AWS}", "score": 1.5}, {"content": PEM}]}
    result = _registry(ToolResult.success(payload)).call("read", "{}")
    assert result.ok and result.data == {
        "hits": [{"content": f"key {SECRET_MARKER}", "score": 1.5}, {"content": SECRET_MARKER}]
    }
    # A cut private key block is masked in the data, and the JSON is written from it.
    assert json.loads(result.content) == result.data


def test_a_text_result_is_masked_as_text() -> None:
    result = masked_result(ToolResult(ok=False, content=f"failed on {AWS}"))
    assert result == ToolResult(ok=False, content=f"failed on {SECRET_MARKER}")


def test_a_result_without_secrets_is_unchanged() -> None:
    plain = ToolResult.success({"hits": [{"content": "The budget is 40k."}]})
    assert _registry(plain).call("read", "{}") == plain
