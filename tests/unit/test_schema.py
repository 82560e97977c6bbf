"""The checked-in JSON Schema is generated from the pydantic models."""

from __future__ import annotations

from memory_recall.protocol.schema_gen import SCHEMA_PATH, render


def test_schema_is_up_to_date():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "protocol/schema is stale: run `python -m memory_recall.protocol.schema_gen`"
    )


def test_the_settings_page_is_generated_from_the_options_model():
    from memory_recall.protocol.settings_doc import DOC_PATH
    from memory_recall.protocol.settings_doc import render as render_page

    page = DOC_PATH.read_text(encoding="utf-8")
    assert render_page(page) == page, (
        "docs/configuration.md is stale: run `python -m memory_recall.protocol.settings_doc`"
    )
