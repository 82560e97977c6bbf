"""Semantic recall (issue 20): the endpoint's answers validated, vectors cached by text
hash and model, the fill rule, hostile endpoints, and nothing imported when off.

The endpoint is a local HTTP server with a deterministic encoder (server/dev/embed_server):
words map to concepts, so "replacing the login layer" and "migrating the auth middleware"
share every concept and no word.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
from memory_recall.server.dev.embed_server import Behaviour, ConceptEncoder, EmbedServer
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.spec import ScoredDocument
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.service import RecallRequest, RecallService
from memory_recall.server.semantic.cache import VectorCache
from memory_recall.server.semantic.channel import SemanticChannel
from memory_recall.server.semantic.endpoint import (
    EmbeddingError,
    EmbeddingsEndpoint,
    parse_answer,
)
from memory_recall.server.semantic.fill import fill, fuse
from memory_recall.server.store.state import StateStore

from tests.conftest import make_doc
from tests.unit.test_recall_service import FakeSelector, Listener

CONCEPTS = {
    "replacing": "migrate", "migrating": "migrate", "migration": "migrate",
    "login": "auth", "auth": "auth", "authentication": "auth",
    "layer": "middleware", "middleware": "middleware",
}  # fmt: skip
AUTH = make_doc("Auth middleware migration", "migrating the auth middleware", path="/m/auth.md")
OTHERS = [
    make_doc(f"note {i}", f"about topic{i} and thing{i}", body=f"word{i} " * 5, path=f"/m/n{i}.md")
    for i in range(6)
]
DEPLOY = make_doc("deploy checklist", "how we deploy the layer", path="/m/deploy.md")
DOCS = [AUTH, DEPLOY, *OTHERS]
QUERY = "replacing the login layer"


@pytest.fixture
def server():
    with EmbedServer(ConceptEncoder(CONCEPTS)) as s:
        yield s


def channel_for(server: EmbedServer, store: StateStore | None = None, model: str = "m1", **kw):
    endpoint = EmbeddingsEndpoint(server.url, model, None)
    return SemanticChannel(endpoint, VectorCache(store, model), **kw)


def answer(vectors, indexes=None) -> bytes:
    indexes = indexes if indexes is not None else range(len(vectors))
    data = [{"embedding": v, "index": i} for v, i in zip(vectors, indexes, strict=True)]
    return json.dumps({"data": data}).encode()


# -- the answer, validated ---------------------------------------------------------------


def test_answers_are_put_in_input_order_by_index():
    assert parse_answer(answer([[0.0, 1.0], [1.0, 0.0]], [1, 0]), 2, None) == [
        [1.0, 0.0],
        [0.0, 1.0],
    ]


@pytest.mark.parametrize(
    ("raw", "expected", "dimension", "reason"),
    [
        (answer([[1.0, 0.0]]), 2, None, "wrong count"),
        (answer([[1.0, 0.0], [1.0]]), 2, None, "wrong dimension"),
        (answer([[1.0, 0.0]]), 1, 3, "wrong dimension"),
        (json.dumps({"data": [{"embedding": [math.nan, 1.0]}]}).encode(), 1, None, "finite"),
        (json.dumps({"data": [{"embedding": [1.0, "x"]}]}).encode(), 1, None, "finite"),
        (answer([[0.0, 0.0]]), 1, None, "all zeros"),
        (answer([[1.0], [1.0]], [0, 0]), 2, None, "repeated index"),
        (b"<html>", 1, None, "not an OpenAI"),
    ],
)
def test_a_bad_answer_is_an_error_naming_what_is_wrong(raw, expected, dimension, reason):
    with pytest.raises(EmbeddingError, match=reason):
        parse_answer(raw, expected, dimension)


async def test_http_errors_and_a_missing_key_are_reasons(server, monkeypatch):
    server.behaviour.status = 500
    with pytest.raises(EmbeddingError, match="HTTP 500"):
        await EmbeddingsEndpoint(server.url, "m", None).embed(["x"])
    monkeypatch.delenv("MR_TEST_EMBED_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="MR_TEST_EMBED_KEY is not set"):
        await EmbeddingsEndpoint(server.url, "m", "MR_TEST_EMBED_KEY").embed(["x"])


# -- the cache --------------------------------------------------------------------------


async def test_a_restart_re_embeds_nothing_and_a_model_change_re_embeds_all(server, tmp_path):
    store = StateStore(tmp_path / "state.sqlite3")
    view = CorpusView.of(DOCS)
    first = channel_for(server, store, batch_size=3)
    await first.sync(view)
    assert len(first.matrix) == len(DOCS) and first.counters.failure is None
    assert server.requests > 1  # batched
    sent = server.texts
    store.close()

    again = channel_for(server, StateStore(tmp_path / "state.sqlite3"))  # a restart
    await again.sync(view)
    assert server.texts == sent  # nothing re-embedded
    assert len(again.matrix) == len(DOCS) and again.counters.embedded == 0

    other = channel_for(server, StateStore(tmp_path / "state.sqlite3"), model="m2")
    await other.sync(view)
    assert server.texts >= sent + len(DOCS)  # every memory again, for the new model
    assert other.counters.embedded >= len(DOCS)


async def test_a_changed_memory_alone_is_embedded_again(server):
    channel = channel_for(server)
    await channel.sync(CorpusView.of(DOCS))
    sent = server.texts
    changed = make_doc("Auth middleware migration", "now with tokens", path="/m/auth.md")
    await channel.sync(CorpusView.of([changed, *DOCS[1:]]))
    assert server.texts == sent + 1


async def test_a_failed_batch_is_recorded_and_the_vectors_held_are_kept(server):
    channel = channel_for(server)
    await channel.sync(CorpusView.of(DOCS))
    server.behaviour.status = 500
    await channel.sync(CorpusView.of([*DOCS, make_doc("new one", path="/m/new.md")]))
    assert "HTTP 500" in (channel.counters.failure or "")
    assert len(channel.matrix) == len(DOCS)  # what existed still serves


# -- the fill rule ------------------------------------------------------------------------


def scored(doc, score=1):
    return ScoredDocument(doc, score)


def test_fill_never_moves_a_lexical_document_and_respects_the_floor():
    lexical = [scored(DEPLOY, 5)]
    hits = [
        (scored(DEPLOY, 0), 0.9, 5.0),
        (scored(AUTH, 0), 0.8, 4.0),
        (scored(OTHERS[0], 0), 0.7, 1.0),
    ]
    out, added = fill(lexical, hits, 5, z_floor=3.0)
    assert [s.document for s in out] == [DEPLOY, AUTH]
    assert added == {AUTH.path: 0.8}
    full = [scored(d) for d in OTHERS[:2]]
    assert fill(full, hits, 2)[0] == full  # no empty slot: nothing added


def test_fusion_can_put_a_semantic_hit_above_a_lexical_one():
    lexical = [scored(DEPLOY, 5), scored(OTHERS[0], 1)]
    hits = [(scored(AUTH, 0), 0.9, 5.0), (scored(OTHERS[0], 0), 0.8, 4.0)]
    assert [s.document for s in fuse(lexical, hits, 5)] == [OTHERS[0], DEPLOY, AUTH]


# -- recall with the channel --------------------------------------------------------------


def view_source(docs=DOCS):
    view = CorpusView.of(docs)

    async def snapshot() -> CorpusView:
        return view

    return snapshot


async def recall(service, query=QUERY, request_id=1):
    listener = Listener()
    result = await service.recall(
        RecallRequest(request_id=request_id, query=query), view_source(), listener
    )
    return result, listener


async def test_a_memory_sharing_no_word_with_the_query_is_found(server):
    lexical_only = RecallService(None, RANKERS["bm25f"])
    result, _ = await recall(lexical_only)
    assert AUTH.path not in [d.path for d in result.refined.docs]

    service = RecallService(None, RANKERS["bm25f"])
    service.semantic = channel_for(server, fast_deadline_s=2.0)
    await service.semantic.sync(CorpusView.of(DOCS))
    result, _ = await recall(service)
    docs = result.refined.docs
    assert docs[0].path == DEPLOY.path  # the lexical match keeps its place ("layer")
    filled = [d for d in docs if d.similarity is not None]
    assert [d.path for d in filled] == [AUTH.path] and filled[0].score == 0
    assert result.refined.semantic.filled == 1 and result.refined.semantic.failure is None


async def test_a_query_no_word_of_which_matches_stays_silent_with_vectors_on(server):
    """Silence is not lowered by the channel (docs/ranking.md): a similarity alone does not
    say the question has an answer, so a lexically silent result is not filled."""
    query = "replacing the login"  # no memory shares a word with it
    lexical_only = RecallService(None, RANKERS["bm25f"])
    result, _ = await recall(lexical_only, query=query)
    assert result.refined.status == "no_relevant_results"

    service = RecallService(None, RANKERS["bm25f"])
    service.semantic = channel_for(server, fast_deadline_s=2.0)
    await service.semantic.sync(CorpusView.of(DOCS))
    result, _ = await recall(service, query=query)
    assert result.refined.status == "no_relevant_results" and not result.refined.docs
    assert result.refined.semantic.filled == 0 and result.refined.semantic.failure is None


async def test_the_fast_phase_fills_and_the_model_sees_similarities(server):
    selector = FakeSelector([AUTH.path])
    service = RecallService(selector, RANKERS["bm25f"])
    service.semantic = channel_for(server, fast_deadline_s=2.0)
    await service.semantic.sync(CorpusView.of(DOCS))
    result, _listener = await recall(service)
    # DEPLOY matches one word of three ("layer"): delivered fast only when the calibration
    # is sure enough of it, and then the strong semantic hit takes the free slot beside it;
    # else the fast phase stays silent and the model, shown AUTH's similarity, picks it.
    asked = selector.requests[0]
    assert AUTH.path in [d.path for d in asked.candidates]
    assert asked.similarity[AUTH.path] > 0.5
    fast = {d.path: d for d in result.fast.docs} if result.fast else {}
    if fast:
        assert set(fast) == {DEPLOY.path, AUTH.path}
        assert fast[AUTH.path].similarity is not None
        assert result.refined.status == "already_delivered"
    else:
        assert [d.path for d in result.refined.docs] == [AUTH.path]


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        (Behaviour(delay_s=10.0, only_for="login"), "not back within"),
        (Behaviour(status=500, only_for="login"), "HTTP 500"),
        (Behaviour(wrong_dimension=True, only_for="login"), "wrong dimension"),
        (Behaviour(nan=True, only_for="login"), "finite"),
        (Behaviour(wrong_count=True, only_for="login"), "wrong count"),
    ],
)
async def test_a_hostile_endpoint_disables_the_channel_for_that_recall(server, behaviour, reason):
    # A deadline a loaded test machine keeps for a local answer; the slow endpoint misses it.
    deadline = 0.3 if behaviour.delay_s else 2.0
    service = RecallService(None, RANKERS["bm25f"])
    service.semantic = channel_for(server, timeout_s=5.0, fast_deadline_s=deadline)
    await service.semantic.sync(CorpusView.of(DOCS))
    server.behaviour = behaviour
    started = time.perf_counter()
    result, _ = await recall(service)
    elapsed = time.perf_counter() - started
    assert [d.path for d in result.refined.docs] == [DEPLOY.path]  # the lexical result
    assert reason in (result.refined.semantic.failure or "")
    # Without a selector the refined phase is what the host waits for: the fast deadline,
    # never the slow endpoint's answer.
    if behaviour.delay_s:
        assert elapsed < behaviour.delay_s
    assert service.semantic.counters.query_failures == 1


async def test_lexical_results_are_not_delayed_when_no_slot_is_empty(server):
    selector = FakeSelector([])
    service = RecallService(selector, RANKERS["bm25f"])
    docs = [
        make_doc("login layer one", path="/m/1.md"),
        make_doc("login layer two", path="/m/2.md"),
    ]
    service.semantic = channel_for(server)
    await service.semantic.sync(CorpusView.of(docs))
    # The query's vector takes far longer than any wait below: the fast phase must not
    # wait for it.
    server.behaviour = Behaviour(delay_s=30.0, only_for="login layer?")
    listener = Listener()
    request = RecallRequest(request_id=1, query="login layer?")
    task = asyncio.ensure_future(service.recall(request, view_source(docs), listener))
    started = time.perf_counter()
    while not listener.fast and time.perf_counter() - started < 10:
        await asyncio.sleep(0.005)
    assert len(listener.fast) == 1  # sent while the vector was still on its way
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


# -- off ------------------------------------------------------------------------------------


def test_off_imports_nothing_of_the_channel(tmp_path: Path):
    """A daemon initialized without `embeddings` never imports the channel or numpy."""
    code = """
import sys
from lsprotocol import types
from memory_recall.server.lsp.server import MemoryServer
server = MemoryServer()
server.on_initialize(types.InitializeParams(
    capabilities=types.ClientCapabilities(),
    initialization_options={"roots": [{"path": sys.argv[1]}], "watch": False},
))
loaded = sorted(m for m in sys.modules if m == "numpy" or ".semantic" in m)
print(",".join(loaded))
"""
    env = {"MEMORY_RECALL_STATE_DIR": "off", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env,
        timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_the_reserved_slot_goes_to_a_strong_hit_before_the_lexical_tail():
    lexical = [scored(d) for d in [DEPLOY, *OTHERS[:4]]]
    hits = [(scored(AUTH, 0), 0.8, 4.0), (scored(OTHERS[5], 0), 0.7, 1.0)]
    out, added = fill(lexical, hits, 5, z_floor=3.0, reserve=1)
    assert [s.document for s in out] == [DEPLOY, *OTHERS[:3], AUTH]  # the lexical top 4 kept
    assert added == {AUTH.path: 0.8}
    weak = [(scored(OTHERS[5], 0), 0.7, 1.0)]
    assert fill(lexical, weak, 5, z_floor=3.0, reserve=1)[0] == lexical  # below the floor
