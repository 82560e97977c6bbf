"""The MCP face's stdio: a line the SDK cannot read gets the JSON-RPC error it deserves."""

from __future__ import annotations

import pytest
from mcp.types import jsonrpc_message_adapter
from memory_recall.server.mcp.wire import INVALID_REQUEST, PARSE_ERROR, error_for


def _error_of(line: bytes) -> int:
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as exc:
        return error_for(exc).code
    raise AssertionError(f"{line[:40]!r} was read")


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"[" * 100_000 + b"]" * 100_000, PARSE_ERROR),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, PARSE_ERROR),
        (b"{not json", PARSE_ERROR),
        (b"", PARSE_ERROR),
        (b'{"jsonrpc":"2.0","what":"nothing"}', INVALID_REQUEST),
        (b'"just a string"', INVALID_REQUEST),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', INVALID_REQUEST),
    ],
)
def test_each_unreadable_line_has_its_error(line: bytes, code: int) -> None:
    assert _error_of(line) == code


def test_too_deep_says_so() -> None:
    try:
        jsonrpc_message_adapter.validate_json(b"[" * 100_000, by_name=False)
    except Exception as exc:
        assert "nested too deeply" in error_for(exc).message
