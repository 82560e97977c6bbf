"""Bad wire input: hypothesis throws malformed frames and messages at one daemon.

One daemon process serves the whole module (a process per example would be
far too slow). After every attack a valid `memory/recall` must come back with
the right memory, and whatever the attack provoked must be exactly what the
contract says: -32700 for a body that is not UTF-8 JSON, -32600 for JSON that
is not a request object (one, with id null, for an array), -32601 for an
unknown method, -32602 naming the bad field, and nothing at all for a
notification or a response to nothing. An oracle states the expected answer
of every generated message from the rules, independently of the daemon's code.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from memory_recall.protocol import limits, methods
from memory_recall.protocol.messages import RecallParams
from pydantic import ValidationError

from tests.memory_files import write_memory
from tests.reliability.harness import FULL_LOAD, WireDaemon, initialize_params, sized

EXAMPLES = sized(300, 5000)  # per property test
FRAMING_EXAMPLES = sized(25, 400)  # per framing
PROBE_QUERY = "how do we deploy the service"
MAX_QUERY = limits.MAX_QUERY_CHARS
RESULT = "result"  # an expected successful response instead of an error code

_tried: Counter[str] = Counter()
_timings: defaultdict[str, list[float]] = defaultdict(list)

fuzz_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=not FULL_LOAD,  # the default run is reproducible; the full one explores
)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WireDaemon]:
    root = tmp_path_factory.mktemp("wire-memory")
    deploy = write_memory(
        root, "deploy.md", "deploy steps", "how we deploy the service", "Run make deploy."
    )
    write_memory(root, "style.md", "code style", "formatting rules", "Use ruff.", type="feedback")
    wire = WireDaemon(tmp_path_factory.mktemp("wire-log") / "daemon.log")
    reply = wire.initialize({"roots": [{"path": str(root), "scope": "project"}], "watch": False})
    assert "result" in reply, reply
    wire.deploy_path = str(deploy)  # type: ignore[attr-defined]
    yield wire
    assert wire.close() == 0, "the daemon did not exit cleanly after shutdown + exit"
    log = wire.stderr_log.read_text(errors="replace")
    # No attack reached a catch-all: every one was answered by a rule.
    assert "failed to handle a message" not in log
    assert "failed to dispatch a message" not in log


@pytest.fixture(scope="module", autouse=True)
def _report(figures: dict[str, str]) -> Iterator[None]:
    yield
    total = sum(_tried.values())
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(_tried.items()))
    figures["wire input"] = (
        f"{total} malformed or hostile inputs ({kinds}) against one daemon process: "
        "alive after each, every follow-up recall correct, every error code as specified "
        "(reproduce: MEMORY_RECALL_FULL_LOAD=1 .venv/bin/pytest tests/reliability/test_wire_fuzz.py)"
    )
    if _timings:
        figures["wire input: answered at once"] = "; ".join(
            f"{what}: at most {max(times) * 1000:.0f} ms"
            for what, times in sorted(_timings.items())
        )


# -- the oracle ----------------------------------------------------------------------


@dataclass
class Expected:
    """One response the daemon owes: to `id`, an error `code` (or RESULT) naming `mention`."""

    id: Any
    code: int | frozenset[int] | str
    mention: str | None = None
    check: Any = None  # extra predicate on a successful result


@dataclass
class Attack:
    kind: str
    data: bytes
    expect: list[Expected] = field(default_factory=list)


def _is_id(value: Any) -> bool:
    return value is None or (isinstance(value, (str, int)) and not isinstance(value, bool))


def _lsp_notification(method: str) -> bool:
    entry = types.METHOD_TO_TYPES.get(method)
    return entry is not None and entry[1] is None


def expect_for_value(value: Any) -> list[Expected]:
    """What JSON-RPC over LSP framing says the answer to one parsed body is."""
    if isinstance(value, list):
        return [Expected(None, methods.INVALID_REQUEST, "batches")]
    if not isinstance(value, dict):
        return [Expected(None, methods.INVALID_REQUEST, "expected an object")]
    if "params" in value and value["params"] is None:  # `"params": null` is no params
        value = {k: v for k, v in value.items() if k != "params"}
    has_id = "id" in value
    msg_id = value.get("id")
    reply_id = msg_id if _is_id(msg_id) else None
    if value.get("jsonrpc") != "2.0":
        return [Expected(reply_id, methods.INVALID_REQUEST, "jsonrpc")]
    if not _is_id(msg_id):
        return [Expected(None, methods.INVALID_REQUEST, "'id'")]
    if "method" not in value:
        if not has_id or ("result" not in value and "error" not in value):
            return [Expected(reply_id, methods.INVALID_REQUEST, "neither a request")]
        return []  # a response to nothing: dropped
    method = value["method"]
    if not isinstance(method, str):
        return [Expected(reply_id, methods.INVALID_REQUEST, "'method'")]
    params = value.get("params")
    if "params" in value and not isinstance(params, (dict, list)):
        return [Expected(reply_id, methods.INVALID_PARAMS, "params")] if has_id else []
    if not has_id:
        return []  # notifications are never answered
    if _lsp_notification(method):
        return [Expected(reply_id, methods.INVALID_REQUEST, "is a notification")]
    if method == methods.RECALL:
        return [_expect_recall(reply_id, params)]
    if method == methods.STATUS:
        return [Expected(reply_id, RESULT, check=lambda r: r["protocolVersion"] == 2)]
    if method == methods.FORGET:  # no fuzzed path names a memory: refused, naming the field
        return [Expected(reply_id, frozenset({methods.INVALID_PARAMS, methods.REQUEST_FAILED}))]
    if method == types.INITIALIZE:  # malformed params, or a second initialize
        return [Expected(reply_id, frozenset({methods.INVALID_PARAMS, methods.INVALID_REQUEST}))]
    if method in types.METHOD_TO_TYPES:  # an LSP request this server does not offer
        return [Expected(reply_id, frozenset({methods.METHOD_NOT_FOUND, methods.INVALID_PARAMS}))]
    return [Expected(reply_id, methods.METHOD_NOT_FOUND, method)]


def _expect_recall(reply_id: Any, params: Any) -> Expected:
    if isinstance(params, list):
        return Expected(reply_id, methods.INVALID_PARAMS, "expected an object")
    try:
        RecallParams.model_validate(params or {})
    except ValidationError as exc:
        field_name = str(exc.errors()[0]["loc"][0])
        return Expected(reply_id, methods.INVALID_PARAMS, field_name)

    def check(result: dict[str, Any]) -> bool:
        return result["fast"] is None and result["refined"]["phase"] == "refined"

    return Expected(reply_id, RESULT, check=check)


def expect_for_body(body: bytes) -> list[Expected]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return [Expected(None, methods.PARSE_ERROR, "UTF-8")]
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return [Expected(None, methods.PARSE_ERROR, "JSON")]
    return expect_for_value(value)


# -- attacking and checking ---------------------------------------------------------

_probes = iter(range(1, 1 << 62))

ALLOWED_CODES = {
    methods.PARSE_ERROR,
    methods.INVALID_REQUEST,
    methods.METHOD_NOT_FOUND,
    methods.INVALID_PARAMS,
}


def run_attack(daemon: WireDaemon, attack: Attack) -> None:
    """Send the attack, then prove the daemon still answers a recall correctly."""
    _tried[attack.kind] += 1
    start = len(daemon.messages)
    daemon.send(attack.data)
    probe_id = f"probe-{next(_probes)}"
    reply = daemon.request(probe_id, methods.RECALL, {"query": PROBE_QUERY, "token": probe_id})
    assert "result" in reply, f"probe failed after {attack}: {reply}"
    refined = reply["result"]["refined"]
    assert refined["docs"] and refined["docs"][0]["path"] == daemon.deploy_path  # type: ignore[attr-defined]
    assert daemon.proc.poll() is None

    expected_ids = {probe_id}
    for exp in attack.expect:
        if exp.id is not None:
            expected_ids.add(exp.id)
            got = daemon.response(exp.id, start=start)
        else:
            got = _null_id_response(daemon, start, attack)
        _check(got, exp, attack)
    responses = [m for m in daemon.messages[start:] if "method" not in m]
    for message in responses:
        assert message.get("jsonrpc") == "2.0", message
        assert ("result" in message) != ("error" in message), message
        if "error" in message:
            error = message["error"]
            assert error["code"] in ALLOWED_CODES, (attack, message)
            assert isinstance(error["message"], str) and error["message"], message
        assert message.get("id") is None or message["id"] in expected_ids, (
            f"unexpected response {message} to {attack}"
        )
    popups = [m for m in daemon.messages[start:] if m.get("method") == types.WINDOW_SHOW_MESSAGE]
    assert not popups, f"{attack} popped a message up in the editor: {popups}"
    nulls = [m for m in responses if m.get("id") is None]
    assert len(nulls) == sum(1 for e in attack.expect if e.id is None), (attack, nulls)


def _null_id_response(daemon: WireDaemon, start: int, attack: Attack) -> dict[str, Any]:
    found = [m for m in daemon.messages[start:] if "method" not in m and m.get("id") is None]
    assert found, f"no id-null response to {attack}"
    return found[0]


def _check(got: dict[str, Any], exp: Expected, attack: Attack) -> None:
    if exp.code == RESULT:
        assert "result" in got, (attack, got)
        if exp.check is not None:
            assert exp.check(got["result"]), (attack, got)
        return
    assert "error" in got, (attack, got)
    code, message = got["error"]["code"], got["error"]["message"]
    codes = exp.code if isinstance(exp.code, frozenset) else {exp.code}
    assert code in codes, (attack, got)
    if exp.mention is not None:
        assert exp.mention.lower() in message.lower(), (attack, got)


# -- strategies -----------------------------------------------------------------------

MISSING = object()
KNOWN_METHODS = [
    methods.RECALL,
    methods.RECALL,
    methods.STATUS,
    types.INITIALIZE,
    types.INITIALIZED,
    types.CANCEL_REQUEST,
    types.SET_TRACE,
    types.PROGRESS,
    types.TEXT_DOCUMENT_HOVER,
    types.TEXT_DOCUMENT_DID_OPEN,
    types.WORKSPACE_DID_CHANGE_CONFIGURATION,
    types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
    types.WORKSPACE_SYMBOL,
    methods.FAST_RESULT,
    methods.SELECT,
    "memory/nonexistent",  # (memory/forget is a request of the write side now)
]
# Only these two legitimately end a session; everything else must leave it serving.
ENDING = (types.EXIT, types.SHUTDOWN)

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.one_of(
    st.just(MISSING),
    st.integers(),
    st.text(max_size=12),
    st.none(),
    st.booleans(),
    st.floats(),  # never an id: JSON-RPC ids are strings or integers
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
words = st.sampled_from(
    ["deploy", "service", "style", "ruff", "how", "the", "漢字テスト", "🙂", ""]
)
queries = st.one_of(
    st.text(max_size=200),
    st.lists(words, max_size=12).map(" ".join),
    st.just("deploy " * (MAX_QUERY // 7) + "x" * (MAX_QUERY % 7)),  # exactly the limit
    st.just("d" * (MAX_QUERY + 1)),  # one over
    st.integers(),
    st.none(),
    st.lists(st.text(max_size=5), max_size=2),
)
recall_params = st.fixed_dictionaries(
    {},
    optional={
        "query": queries,
        "token": st.one_of(
            st.text(max_size=10), st.integers(), st.none(), st.booleans(), json_values
        ),
        "recentTools": st.one_of(st.lists(st.text(max_size=30), max_size=6), json_values),
        "excludePaths": st.one_of(st.lists(st.text(max_size=40), max_size=6), json_values),
        "limit": st.one_of(
            st.integers(-3, 8), st.integers(), st.booleans(), st.floats(), st.none()
        ),
        "unknownKey": json_values,
    },
)
method_names = st.one_of(
    st.sampled_from(KNOWN_METHODS),
    st.text(max_size=30).filter(lambda m: m not in ENDING),
    st.integers(),
    st.none(),
)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    """A JSON-RPC-like object: mostly right, wrong in one or several places."""
    message: dict[str, Any] = {}
    jsonrpc = draw(st.sampled_from(["2.0"] * 8 + [MISSING, "1.0", 2.0, None]))
    if jsonrpc is not MISSING:
        message["jsonrpc"] = jsonrpc
    msg_id = draw(ids)
    if msg_id is not MISSING:
        message["id"] = msg_id
    shape = draw(st.sampled_from(["request"] * 6 + ["response", "error", "bare"]))
    if shape == "request":
        method = draw(method_names)
        message["method"] = method
        params = draw(
            st.one_of(st.just(MISSING), recall_params, json_values)
            if method == methods.RECALL
            else st.one_of(st.just(MISSING), json_values)
        )
        if params is not MISSING:
            message["params"] = params
    elif shape == "response":
        message["result"] = draw(json_values)
    elif shape == "error":
        message["error"] = draw(
            json_values | st.fixed_dictionaries({"code": st.integers(), "message": st.text()})
        )
    if draw(st.booleans()):
        message.update(draw(st.dictionaries(st.text(max_size=6), json_values, max_size=2)))
    if message.get("method") in ENDING:  # the extra keys may have put one back
        message["method"] = "memory/nonexistent"
    return message


# -- the properties -------------------------------------------------------------------


@fuzz_settings
@given(body=st.binary(max_size=400) | st.text(max_size=200).map(str.encode))
@example(body=b"not json")
@example(body=b"\xff\xfe{\x00}\x00")  # UTF-16: not what LSP framing carries
@example(body=b'{"jsonrpc":"2.0","id":1,"method":"memory/status","params":{"q":"\xed\xa0\x80"}}')
@example(body=b"[" * 100_000 + b"]" * 100_000)  # nesting deeper than the parser's recursion
@example(body=b"")
def test_any_body_is_answered_by_the_rules(daemon: WireDaemon, body: bytes) -> None:
    run_attack(daemon, Attack("raw body", WireDaemon.frame(body), expect_for_body(body)))


@fuzz_settings
@given(value=messages() | json_values)
@example(value=[])
@example(value=[{"jsonrpc": "2.0", "id": 7, "method": "memory/status"}])  # a batch: not run
@example(value={"jsonrpc": "2.0", "id": 1, "method": "memory/nope"})
@example(value={"jsonrpc": "2.0", "id": 2, "method": methods.RECALL, "params": {"query": 5}})
@example(
    value={
        "jsonrpc": "2.0",
        "id": 3,
        "method": methods.RECALL,
        "params": {"query": "a" * MAX_QUERY},
    }
)
@example(
    value={
        "jsonrpc": "2.0",
        "id": 4,
        "method": methods.RECALL,
        "params": {"query": "a" * (MAX_QUERY + 1)},
    }
)
@example(
    value={
        "jsonrpc": "2.0",
        "id": 5,
        "method": methods.RECALL,
        "params": {"query": "x", "limit": 6},
    }
)
@example(value={"jsonrpc": "2.0", "id": 6, "method": types.INITIALIZED, "params": {}})
@example(value={"jsonrpc": "2.0", "id": 7, "method": methods.STATUS, "params": None})
@example(value={"jsonrpc": "2.0", "id": 0, "method": methods.RECALL, "params": {"query": "x"}})
@example(
    value={"jsonrpc": "2.0", "id": 8, "method": types.INITIALIZE, "params": {"capabilities": {}}}
)
@example(value={"jsonrpc": "2.0", "id": 9, "result": None})  # a response to nothing
@example(value={"jsonrpc": "2.0", "method": types.CANCEL_REQUEST, "params": {"id": {"x": 1}}})
@example(value={"jsonrpc": "2.0", "id": {"a": 1}, "method": methods.STATUS})
@example(value={"jsonrpc": "1.0", "id": [1], "method": methods.STATUS})
def test_any_message_is_answered_by_the_rules(daemon: WireDaemon, value: Any) -> None:
    body = json.dumps(value).encode()
    run_attack(daemon, Attack("message", WireDaemon.frame(body), expect_for_value(value)))


good_messages = st.one_of(
    st.builds(
        lambda i: {"jsonrpc": "2.0", "id": i, "method": methods.STATUS}, st.integers(0, 10**9)
    ),
    st.builds(
        lambda i, q: {
            "jsonrpc": "2.0",
            "id": f"r{i}",
            "method": methods.RECALL,
            "params": {"query": q},
        },
        st.integers(0, 10**9),
        st.lists(words, max_size=6).map(" ".join),
    ),
)
FRAMINGS = [
    "short length",
    "long length, space padding",
    "long length, garbage padding",
    "no length header",
    "unparsable length",
    "extra headers",
    "LF line endings",
    "lowercase header, no space",
    "garbage header line",
    "header line over 8 KiB",
    "zero length",
    "blank lines before",
    "two frames at once",
]


@pytest.mark.parametrize("framing", FRAMINGS)
@settings(fuzz_settings, max_examples=FRAMING_EXAMPLES)
@given(
    message=good_messages,
    second=good_messages,
    delta=st.integers(1, 64),
)
def test_broken_framing_resynchronizes(
    daemon: WireDaemon, framing: str, message: dict[str, Any], second: dict[str, Any], delta: int
) -> None:
    body = json.dumps(message).encode()
    assert not re.search(rb"(?i)content-length", body)
    n = len(body)
    expect = expect_for_value(message)
    parse_error = [Expected(None, methods.PARSE_ERROR, "JSON")]
    if framing == "short length":
        # The rest of the body runs into the next header line, which still
        # carries its Content-Length: the stream recovers at the next frame.
        delta = min(delta, n - 1)
        data, expect = b"Content-Length: %d\r\n\r\n" % (n - delta) + body, parse_error
    elif framing == "long length, space padding":
        # The daemon waits for the missing bytes; trailing whitespace is still JSON.
        data = b"Content-Length: %d\r\n\r\n" % (n + delta) + body + b" " * delta
    elif framing == "long length, garbage padding":
        data, expect = (
            b"Content-Length: %d\r\n\r\n" % (n + delta) + body + b"x" * delta,
            parse_error,
        )
    elif framing == "no length header":
        # Answered at once (id null: the body is not read), reading resumes at the next header.
        data = b"Content-Type: application/json\r\n\r\n" + body
        expect = [Expected(None, methods.INVALID_REQUEST, "without Content-Length")]
    elif framing == "unparsable length":
        data = b"Content-Length: -%d\r\n\r\n" % n + body
        expect = [Expected(None, methods.INVALID_REQUEST, "not a byte count")]
    elif framing == "extra headers":
        data = (
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
            b"Content-Length: %d\r\nX-Junk: \xff\xfe\r\n\r\n" % n + body
        )
    elif framing == "LF line endings":
        data = b"Content-Length: %d\n\n" % n + body
    elif framing == "lowercase header, no space":
        data = b"content-length:%d\r\n\r\n" % n + body
    elif framing == "garbage header line":
        data = b"\x00\xffgarbage: yes\r\nContent-Length: %d\r\n\r\n" % n + body
    elif framing == "header line over 8 KiB":
        data = b"X-Long: " + b"y" * 10_000 + b"\r\n" + WireDaemon.frame(body)
    elif framing == "zero length":
        data, expect = b"Content-Length: 0\r\n\r\n", parse_error
    elif framing == "blank lines before":
        data = b"\r\n\n\r\n" + WireDaemon.frame(body)
    else:
        second = {**second, "id": f"second-{second['id']}"}
        data = WireDaemon.frame(body) + WireDaemon.frame(json.dumps(second).encode())
        expect = expect + expect_for_value(second)
    run_attack(daemon, Attack(f"framing: {framing}", data, expect))


# -- the limits, one by one -------------------------------------------------------------


def test_query_limit_is_exact(daemon: WireDaemon) -> None:
    at_limit = daemon.request("q-max", methods.RECALL, {"query": "deploy " + "x" * (MAX_QUERY - 7)})
    assert "result" in at_limit, at_limit
    over = daemon.request("q-over", methods.RECALL, {"query": "d" * (MAX_QUERY + 1)})
    assert over["error"]["code"] == methods.INVALID_PARAMS
    assert "query" in over["error"]["message"]
    assert str(MAX_QUERY) in over["error"]["message"]
    _tried["limit: query length"] += 2


def test_message_size_limit(daemon: WireDaemon) -> None:
    from memory_recall.protocol.framing import MAX_MESSAGE_BYTES

    # Just under the limit: thousands of excluded paths, answered normally.
    paths = [f"/nowhere/{i:07d}/" + "p" * 80 + ".md" for i in range(40_000)]
    message = {"jsonrpc": "2.0", "id": "big", "method": methods.RECALL,
               "params": {"query": PROBE_QUERY, "excludePaths": paths}}  # fmt: skip
    body = json.dumps(message).encode()
    assert MAX_MESSAGE_BYTES // 2 < len(body) <= MAX_MESSAGE_BYTES
    run_attack(
        daemon, Attack("limit: message size", WireDaemon.frame(body), expect_for_value(message))
    )
    # One byte over: discarded unread, answered with -32600, and the stream goes on.
    over = b" " * (MAX_MESSAGE_BYTES + 1)
    expect = [Expected(None, methods.INVALID_REQUEST, "limit")]
    run_attack(daemon, Attack("limit: message size", WireDaemon.frame(over), expect))


def test_requests_before_initialize_get_32002(tmp_path: Any) -> None:
    wire = WireDaemon(tmp_path / "daemon.log")
    try:
        for msg_id, method in [(1, methods.RECALL), (2, methods.STATUS), (3, "memory/nope")]:
            reply = wire.request(msg_id, method, {"query": "deploy"})
            assert reply["error"]["code"] == methods.SERVER_NOT_INITIALIZED, reply
            assert "initialize" in reply["error"]["message"]
        wire.send_message({"jsonrpc": "2.0", "method": types.INITIALIZED, "params": {}})
        wire.send(WireDaemon.frame(b"{oops"))
        parse = wire.wait_for(lambda m: m.get("id") is None and "error" in m)
        assert parse["error"]["code"] == methods.PARSE_ERROR
        root = tmp_path / "memory"
        write_memory(root, "deploy.md", "deploy steps", "how we deploy the service")
        assert "result" in wire.initialize({"roots": [{"path": str(root)}], "watch": False})
        reply = wire.request(4, methods.RECALL, {"query": PROBE_QUERY})
        assert reply["result"]["refined"]["docs"][0]["path"] == str(root / "deploy.md")
        _tried["before initialize"] += 5
    finally:
        assert wire.close() == 0


# -- issue 21: frames and envelopes that used to hang or slip through -------------------------


def _answered_within(daemon: WireDaemon, msg_id: Any, start: int, seconds: float) -> dict[str, Any]:
    """The response to `msg_id`, which must come within `seconds` (not the WAIT bound)."""
    return daemon.response(msg_id, start=start, timeout=seconds)


@pytest.mark.parametrize(
    "length",
    [str(4 * 1024 * 1024 + 1), "99999999999999999999999", "9" * 5000],
    ids=["one-over", "absurd", "5000-digits"],
)
def test_an_oversize_length_is_refused_at_once_and_the_next_request_answered(
    daemon: WireDaemon, length: str
) -> None:
    """The body of an oversize frame never has to arrive: the requests behind it are served."""
    start = len(daemon.messages)
    started = time.monotonic()
    # The header and the start of the body arrive together, as a client writes them.
    daemon.send(
        b"Content-Length: %s\r\n\r\n" % length.encode()
        + b'{"jsonrpc": "2.0", "id": "huge", "method": "memory/recall", "params": {"q'
    )
    daemon.send_message({"jsonrpc": "2.0", "id": "after-huge", "method": methods.STATUS})
    refused = _answered_within(daemon, "huge", start, 2.0)
    assert refused["error"]["code"] == methods.INVALID_REQUEST
    assert "limit" in refused["error"]["message"]
    assert "result" in _answered_within(daemon, "after-huge", start, 2.0)
    _timings["oversize length → next request answered"].append(time.monotonic() - started)
    _tried["issue 21: oversize Content-Length"] += 1


@pytest.mark.parametrize(
    ("header", "words"),
    [
        (b"Content-Length: -40\r\n\r\n", "not a byte count"),
        (b"Content-Length: forty\r\n\r\n", "not a byte count"),
        (b"Content-Type: application/json\r\n\r\n", "without Content-Length"),
        (b"X-Content-Length: 40\r\n\r\n", "without Content-Length"),
    ],
    ids=["negative", "non-numeric", "missing", "x-content-length"],
)
def test_an_unusable_length_is_answered_and_the_stream_resynchronises(
    daemon: WireDaemon, header: bytes, words: str
) -> None:
    start = len(daemon.messages)
    daemon.send(header + b'{"jsonrpc": "2.0", "id": "lost", "method": "memory/status"}')
    reply = daemon.request("after-bad-length", methods.STATUS)
    assert "result" in reply
    refused = [m for m in daemon.messages[start:] if "error" in m and m.get("id") is None]
    assert refused and words in refused[0]["error"]["message"], daemon.messages[start:]
    assert not daemon.responses_to("lost", start)  # its body was never taken for a frame
    _tried["issue 21: unusable Content-Length"] += 1


@pytest.mark.parametrize(
    "method", [methods.STATUS, methods.RECALL, types.SET_TRACE, "memory/nope"]
)  # shutdown and exit with null params end the session: tests/e2e/test_protocol_errors.py
def test_null_params_are_treated_as_absent_on_every_method(daemon: WireDaemon, method: str) -> None:
    start = len(daemon.messages)
    daemon.send_message(
        {"jsonrpc": "2.0", "id": f"null-{method}", "method": method, "params": None}
    )
    reply = daemon.response(f"null-{method}", start=start)
    if method == methods.RECALL:  # no query: the field is named, not 'params'
        assert reply["error"]["code"] == methods.INVALID_PARAMS
        assert "query" in reply["error"]["message"]
    elif method == "memory/nope":
        assert reply["error"]["code"] == methods.METHOD_NOT_FOUND
    elif method == types.SET_TRACE:
        assert reply["error"]["code"] == methods.INVALID_REQUEST  # a notification, not a request
    else:
        assert "result" in reply, reply
    _tried["issue 21: null params"] += 1


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"query": PROBE_QUERY, "token": "\ud800"}, "token"),
        ({"query": PROBE_QUERY, "recentTools": ["a\udfff"]}, "recentTools"),
        ({"query": PROBE_QUERY, "excludePaths": ["\udc80.md"]}, "excludePaths"),
    ],
    ids=["token", "recent-tool", "exclude-path"],
)
def test_a_lone_surrogate_is_refused_wherever_it_is(
    daemon: WireDaemon, message: dict[str, Any], field: str
) -> None:
    reply = daemon.request("surrogate", methods.RECALL, message)
    assert reply["error"]["code"] == methods.INVALID_PARAMS
    assert field in reply["error"]["message"] and "surrogate" in reply["error"]["message"]
    start = len(daemon.messages)
    daemon.send(WireDaemon.frame(b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "memory/status"}'))
    reply = daemon.wait_for(lambda m: "error" in m and m.get("id") is None, start=start)
    assert reply["error"]["code"] == methods.INVALID_REQUEST  # the id is never echoed
    _tried["issue 21: lone surrogates"] += 2


def test_request_id_zero_is_the_request_id_everywhere(daemon: WireDaemon) -> None:
    start = len(daemon.messages)
    reply = daemon.request(0, methods.RECALL, {"query": PROBE_QUERY, "token": "zero"})
    assert reply["result"]["requestId"] == 0
    telemetry = daemon.wait_for(
        lambda m: m.get("method") == methods.TELEMETRY and m["params"]["token"] == "zero",
        start=start,
    )
    assert telemetry["params"]["requestId"] == 0
    _tried["issue 21: id 0"] += 1


def test_recent_tools_are_bounded_and_refused_at_once(daemon: WireDaemon) -> None:
    tools = [f"tool_{i}" for i in range(100_000)]
    started = time.monotonic()
    reply = daemon.request(
        "many-tools", methods.RECALL, {"query": PROBE_QUERY, "recentTools": tools}
    )
    took = time.monotonic() - started
    assert reply["error"]["code"] == methods.INVALID_PARAMS
    assert "recentTools" in reply["error"]["message"]
    long_name = daemon.request(
        "long-tool", methods.RECALL, {"query": PROBE_QUERY, "recentTools": ["t" * 100_000]}
    )
    assert long_name["error"]["code"] == methods.INVALID_PARAMS
    _timings["100k recentTools refused"].append(took)
    _tried["issue 21: recentTools bounds"] += 2


def test_tracebacks_are_never_on_the_wire_nor_errors_in_the_log_for_client_mistakes(
    daemon: WireDaemon,
) -> None:
    mistakes = [
        {"jsonrpc": "2.0", "id": "m1", "method": types.INITIALIZE, "params": {"capabilities": 5}},
        {"jsonrpc": "2.0", "id": "m2", "method": methods.STATUS, "params": [1, 2]},
        {"jsonrpc": "2.0", "method": types.INITIALIZED, "params": {"x": [1]}},
        {"jsonrpc": "2.0", "method": types.SET_TRACE, "params": {"value": "bogus"}},
        {"jsonrpc": "2.0", "id": "m3", "method": types.WORKSPACE_SYMBOL, "params": {"query": 5}},
    ]
    before = daemon.stderr_log.read_text(errors="replace").count("\n")
    start = len(daemon.messages)
    for message in mistakes:
        daemon.send_message(message)
    assert "result" in daemon.request("after-mistakes", methods.STATUS)
    replies = [m for m in daemon.messages[start:] if "error" in m]
    assert all("data" not in m["error"] for m in replies), replies
    assert all(m["error"]["code"] != methods.INTERNAL_ERROR for m in replies), replies
    log_lines = daemon.stderr_log.read_text(errors="replace").splitlines()[before:]
    assert not [line for line in log_lines if " ERROR " in line or "Traceback" in line], log_lines
    _tried["issue 21: client mistakes"] += len(mistakes)


def test_a_repeated_initialized_repeats_no_message(tmp_path: Any) -> None:
    wire = WireDaemon(tmp_path / "daemon.log")
    try:
        wire.request("init", types.INITIALIZE, initialize_params({"watch": "yes", "ranker": 5}))
        for _ in range(4):
            wire.send_message({"jsonrpc": "2.0", "method": types.INITIALIZED, "params": {}})
        assert "result" in wire.request("st", methods.STATUS)
        time.sleep(0.2)
        shown = [m for m in wire.messages if m.get("method") == types.WINDOW_SHOW_MESSAGE]
        assert len(shown) == 2, shown  # one per invalid option, once
        _tried["issue 21: repeated initialized"] += 4
    finally:
        assert wire.close() == 0
