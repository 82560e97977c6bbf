"""The checked-in JSON Schema is generated from the pydantic models."""

from __future__ import annotations

from memory_recall.protocol.schema_gen import SCHEMA_PATH, render


def test_schema_is_up_to_date():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "protocol/schema is stale: run `python -m memory_recall.protocol.schema_gen`"
    )
