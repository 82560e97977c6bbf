"""The JSON-RPC envelope (protocol/README.md errors): every malformed body gets the right answer.

`classify` is pure, so each branch is tested directly, plus one property: no
byte string makes it raise, and it never echoes an id that is not one.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_recall.protocol import methods
from memory_recall.server.lsp.transport import (
    BadResponse,
    Deliver,
    Exit,
    Ignore,
    Reply,
    classify,
)


def body(message: object) -> bytes:
    return json.dumps(message).encode("utf-8")


def request(method: object = methods.RECALL, id: object = 1, **extra: object) -> bytes:
    return body({"jsonrpc": "2.0", "id": id, "method": method, "params": {"query": "x"}, **extra})


# -- not a JSON object: no id to answer to, so id null --------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"\xff\xfe{}", b'{"jsonrpc": "2.0", "method": "\xc3("}', "{}".encode("utf-16")],
    ids=["invalid-byte", "broken-sequence", "utf-16"],
)
def test_a_body_that_is_not_utf8_is_a_parse_error(raw):
    verdict = classify(raw)
    assert isinstance(verdict, Reply)
    assert (verdict.id, verdict.code) == (None, methods.PARSE_ERROR)
    assert "UTF-8" in verdict.message


@pytest.mark.parametrize("raw", [b"", b"{", b"{'a': 1}", b"Content-Length: 2", b'{"id": 1,}'])
def test_a_body_that_is_not_json_is_a_parse_error(raw):
    verdict = classify(raw)
    assert isinstance(verdict, Reply)
    assert (verdict.id, verdict.code) == (None, methods.PARSE_ERROR)
    assert "not JSON" in verdict.message


@pytest.mark.parametrize("raw", [b"[" * 100_000, b'{"a":' * 100_000])
def test_json_nested_too_deeply_is_a_parse_error_not_a_crash(raw):
    verdict = classify(raw)
    assert isinstance(verdict, Reply)
    assert (verdict.id, verdict.code) == (None, methods.PARSE_ERROR)


def test_a_batch_gets_one_invalid_request_with_id_null():
    verdict = classify(body([json.loads(request()), json.loads(request(id=2))]))
    assert isinstance(verdict, Reply)
    assert (verdict.id, verdict.code) == (None, methods.INVALID_REQUEST)
    assert "batch" in verdict.message


@pytest.mark.parametrize("value", ["memory/recall", 42, 1.5, None, True])
def test_json_that_is_not_an_object_is_an_invalid_request(value):
    verdict = classify(body(value))
    assert isinstance(verdict, Reply)
    assert (verdict.id, verdict.code) == (None, methods.INVALID_REQUEST)


# -- envelope fields -------------------------------------------------------------------


@pytest.mark.parametrize("version", [None, "1.0", 2.0, "2"])
def test_a_wrong_jsonrpc_version_is_an_invalid_request_answered_to_its_id(version):
    message = json.loads(request(id="r-1"))
    if version is None:
        del message["jsonrpc"]
    else:
        message["jsonrpc"] = version
    verdict = classify(body(message))
    assert verdict == Reply("r-1", methods.INVALID_REQUEST, verdict.message)
    assert "jsonrpc" in verdict.message


@pytest.mark.parametrize("bad_id", [True, False, 1.5, 1.0, {"n": 1}, [1]])
def test_an_id_that_is_not_a_string_or_integer_is_never_echoed(bad_id):
    verdict = classify(request(id=bad_id))
    assert isinstance(verdict, Reply)
    assert (verdict.id, verdict.code) == (None, methods.INVALID_REQUEST)
    assert "'id'" in verdict.message


@pytest.mark.parametrize("good_id", [0, -1, 2**53, "abc", "", "識別子"])
def test_string_and_integer_ids_are_echoed(good_id):
    verdict = classify(request(method=5, id=good_id))
    assert isinstance(verdict, Reply)
    assert verdict.id == good_id
    assert type(verdict.id) is type(good_id)


@pytest.mark.parametrize("method", [5, None, ["memory/recall"], {"m": 1}])
def test_a_method_that_is_not_a_string_is_an_invalid_request(method):
    verdict = classify(request(method=method, id=9))
    assert verdict == Reply(9, methods.INVALID_REQUEST, verdict.message)
    assert "'method'" in verdict.message


@pytest.mark.parametrize("params", ["query", 3, True])
def test_params_that_are_not_an_object_or_array_are_invalid_params(params):
    verdict = classify(request(id=4, params=params))
    assert verdict == Reply(4, methods.INVALID_PARAMS, verdict.message)
    assert "'params'" in verdict.message


@pytest.mark.parametrize("params", ["query", 3])
def test_a_notification_with_bad_params_is_dropped_silently(params):
    verdict = classify(body({"jsonrpc": "2.0", "method": "initialized", "params": params}))
    assert verdict == Ignore()


@pytest.mark.parametrize("method", ["shutdown", methods.STATUS, methods.RECALL, "initialize"])
def test_null_params_are_the_same_as_no_params(method):
    """Several client libraries send `"params": null` for methods without parameters."""
    verdict = classify(body({"jsonrpc": "2.0", "id": 3, "method": method, "params": None}))
    assert verdict == Deliver({"jsonrpc": "2.0", "id": 3, "method": method}, 3)
    note = classify(body({"jsonrpc": "2.0", "method": "initialized", "params": None}))
    assert note == Deliver({"jsonrpc": "2.0", "method": "initialized"}, None)


@pytest.mark.parametrize("params", [None, {}, [], "x", 3, {"why": "bye"}])
def test_exit_ends_the_process_whatever_its_params(params):
    assert classify(body({"jsonrpc": "2.0", "method": "exit", "params": params})) == Exit()
    assert classify(body({"jsonrpc": "2.0", "method": "exit"})) == Exit()


def test_exit_with_an_id_is_answered_and_still_exits():
    verdict = classify(body({"jsonrpc": "2.0", "id": 9, "method": "exit"}))
    assert isinstance(verdict, Exit) and verdict.reply is not None
    assert verdict.reply.id == 9 and verdict.reply.code == methods.INVALID_REQUEST


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": methods.RECALL,
                "params": {"query": "a", "token": "\ud800"},
            },
            "params.token",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": methods.RECALL,
                "params": {"query": "a", "recentTools": ["x\udfff"]},
            },
            "params.recentTools[0]",
        ),
    ],
    ids=["token", "recent-tool"],
)
def test_a_lone_surrogate_in_params_is_invalid_params_naming_the_field(message, field):
    verdict = classify(body(message))
    assert verdict == Reply(1, methods.INVALID_PARAMS, verdict.message)
    assert field in verdict.message and "surrogate" in verdict.message


def test_a_lone_surrogate_id_is_never_echoed():
    verdict = classify(body({"jsonrpc": "2.0", "id": "a\udc00", "method": methods.STATUS}))
    assert verdict == Reply(None, methods.INVALID_REQUEST, verdict.message)
    assert "surrogate" in verdict.message


def test_a_surrogate_pair_is_text_and_delivered():
    message = {
        "jsonrpc": "2.0",
        "id": "🙂",
        "method": methods.RECALL,
        "params": {"query": "🙂", "token": "🙂"},
    }
    assert isinstance(classify(body(message)), Deliver)


@pytest.mark.parametrize(
    "message",
    [{"jsonrpc": "2.0", "id": 3}, {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "params": {}}],
    ids=["id-only", "empty", "params-only"],
)
def test_neither_request_notification_nor_response_is_an_invalid_request(message):
    verdict = classify(body(message))
    if isinstance(verdict, BadResponse):  # an id with nothing else may be a broken reply
        verdict = verdict.otherwise
    assert isinstance(verdict, Reply)
    assert verdict.code == methods.INVALID_REQUEST
    assert verdict.id == message.get("id")


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": "srv-1", "result": {"selected": []}},
        {"jsonrpc": "2.0", "id": "srv-1", "result": None},
        {"jsonrpc": "2.0", "id": "srv-1", "error": {"code": -32803, "message": "no"}},
    ],
    ids=["result", "null-result", "error"],
)
def test_responses_to_our_requests_are_delivered(message):
    assert classify(body(message)) == Deliver(message, "srv-1")


@pytest.mark.parametrize(
    ("message", "otherwise"),
    [
        ({"jsonrpc": "2.0", "id": "srv-1", "error": "boom"}, Ignore()),
        ({"jsonrpc": "2.0", "id": "srv-1", "error": {"message": "no code"}}, Ignore()),
        ({"jsonrpc": "2.0", "id": "srv-1", "error": {"code": "1", "message": "x"}}, Ignore()),
        ({"jsonrpc": "2.0", "id": "srv-1", "error": {}}, Ignore()),
        ({"jsonrpc": "2.0", "id": "srv-1", "error": {"code": 1}}, Ignore()),
        ({"jsonrpc": "2.0", "id": "srv-1"}, Reply),
        ({"jsonrpc": "1.0", "id": "srv-1", "result": {"selected": []}}, Reply),
        ({"id": "srv-1", "result": {"selected": []}}, Reply),
        ({"jsonrpc": "2.0", "id": "srv-1", "result": {"selected": ["\ud800"]}}, Ignore()),
    ],
    ids=["error-text", "no-code", "text-code", "empty-error", "no-message", "nothing",
         "jsonrpc-1.0", "no-jsonrpc", "surrogate"],
)  # fmt: skip
def test_a_malformed_reply_fails_our_request_at_once_or_is_answered_as_before(message, otherwise):
    """A reply to `memory/select` the daemon cannot use must fail the selection
    now, not leave the recall waiting for its deadline (issue 21)."""
    verdict = classify(body(message))
    assert isinstance(verdict, BadResponse) and verdict.id == "srv-1"
    assert verdict.reason.startswith("malformed reply: ")
    if otherwise is Reply:
        assert isinstance(verdict.otherwise, Reply)
        assert verdict.otherwise.code == methods.INVALID_REQUEST
    else:
        assert verdict.otherwise == otherwise


# -- LSP rules -----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["initialized", "$/cancelRequest", "$/setTrace"])
def test_a_notification_method_sent_with_an_id_is_answered_invalid_request(method):
    verdict = classify(request(method=method, id=12, params={"id": 1}))
    assert verdict == Reply(12, methods.INVALID_REQUEST, verdict.message)
    assert method in verdict.message and "notification" in verdict.message


@pytest.mark.parametrize(
    "method",
    [methods.RECALL, methods.STATUS, methods.FORGET, methods.CONSOLIDATE, methods.REMEMBER],
)
def test_a_request_only_method_sent_as_a_notification_is_ignored_with_a_warning(method):
    """A write sent without an id never runs: no answer could say what it did."""
    verdict = classify(body({"jsonrpc": "2.0", "method": method, "params": {"query": "x"}}))
    assert isinstance(verdict, Ignore)
    assert verdict.warning is not None
    assert method in verdict.warning and "add an id" in verdict.warning


@pytest.mark.parametrize(
    "params",
    [{}, {"id": True}, {"id": 1.5}, {"id": None}, {"id": {"n": 1}}, [1]],
    ids=["no-id", "bool", "float", "null", "object", "array"],
)
def test_a_cancel_with_a_bad_target_is_ignored_with_a_warning(params):
    verdict = classify(body({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": params}))
    assert isinstance(verdict, Ignore)
    assert verdict.warning is not None and "$/cancelRequest" in verdict.warning


def test_a_cancel_without_params_is_ignored_with_a_warning():
    verdict = classify(body({"jsonrpc": "2.0", "method": "$/cancelRequest"}))
    assert isinstance(verdict, Ignore) and verdict.warning


@pytest.mark.parametrize("target", [7, "req-7"])
def test_a_good_cancel_is_delivered_deferred(target):
    message = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": target}}
    assert classify(body(message)) == Deliver(message, None, deferred=True)


@pytest.mark.parametrize("msg_id", [1, "r-1", None])
def test_a_good_request_is_delivered_at_once(msg_id):
    message = json.loads(request(id=msg_id))
    assert classify(body(message)) == Deliver(message, msg_id, deferred=False)


def test_a_good_notification_and_a_request_with_array_params_are_delivered():
    note = {"jsonrpc": "2.0", "method": "initialized", "params": {}}
    assert classify(body(note)) == Deliver(note, None)
    positional = {"jsonrpc": "2.0", "id": 2, "method": "custom/thing", "params": [1, 2]}
    assert classify(body(positional)) == Deliver(positional, 2)


def test_an_unknown_method_is_left_for_the_dispatcher_to_answer():
    message = {"jsonrpc": "2.0", "id": 5, "method": "memory/unknown"}
    assert classify(body(message)) == Deliver(message, 5)


# -- the property -----------------------------------------------------------------------

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=8),
)
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
_envelope = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | _json_leaf,
        "id": _json,
        "method": st.sampled_from(
            [methods.RECALL, methods.STATUS, "$/cancelRequest", "initialized", "shutdown"]
        )
        | _json_leaf,
        "params": _json,
        "result": _json,
        "error": _json,
    },
).map(lambda m: json.dumps(m).encode())


def _check(verdict: object) -> None:
    assert isinstance(verdict, (Reply, Ignore, Deliver, Exit, BadResponse))
    if isinstance(verdict, BadResponse):
        verdict = verdict.otherwise
    if isinstance(verdict, Exit):
        verdict = verdict.reply
    if isinstance(verdict, Reply):
        assert verdict.id is None or (
            isinstance(verdict.id, (str, int)) and not isinstance(verdict.id, bool)
        )
        assert verdict.code in {
            methods.PARSE_ERROR,
            methods.INVALID_REQUEST,
            methods.INVALID_PARAMS,
        }
        assert verdict.message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=256) | _envelope)
def test_classify_never_raises_and_never_echoes_a_bad_id(raw):
    _check(classify(raw))
