from __future__ import annotations

import json

from supercontext_lab.agents.schema import SCHEMA_PATH, agent_definition_json_schema, render_schema


def test_committed_schema_is_fresh() -> None:
    assert SCHEMA_PATH.read_text("utf-8") == render_schema(), (
        "agent_definition.schema.json is stale: run `python -m supercontext_lab.agents.schema`"
    )


def test_schema_forbids_unknown_keys_and_documents_fields() -> None:
    schema = agent_definition_json_schema()
    assert schema["additionalProperties"] is False
    assert json.loads(render_schema()) == schema
    for name, prop in schema["properties"].items():
        assert prop.get("description") or "$ref" in prop or "anyOf" in prop, name
