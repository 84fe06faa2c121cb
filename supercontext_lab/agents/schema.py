"""The JSON schema of ``agent.toml``, generated from :class:`AgentDefinition`.

The schema is committed as package data (``agent_definition.schema.json``) so editors
can validate agent.toml files; a test fails when it is stale. Regenerate it with::

    python -m supercontext_lab.agents.schema
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from .definition import AgentDefinition

__all__ = ["SCHEMA_PATH", "agent_definition_json_schema", "render_schema"]

SCHEMA_PATH = Path(__file__).with_name("agent_definition.schema.json")


def agent_definition_json_schema() -> dict[str, Any]:
    """The JSON schema of an agent definition (descriptions from the field docstrings)."""
    schema = AgentDefinition.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "supercontext_lab agent.toml"
    return schema


def render_schema() -> str:
    """The schema as the exact text committed in the package."""
    return json.dumps(agent_definition_json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    write_atomic(SCHEMA_PATH, render_schema())
    print(f"wrote {SCHEMA_PATH}")
