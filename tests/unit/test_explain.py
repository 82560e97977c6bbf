"""memory/explain: each ranker accounts for its own score (the parts sum to the score it
ranks with, on every labelled corpus), and the explainer says which phase sent a memory,
or why none did, including a memory only the network found."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_recall.server.dev.network_eval import load_network_corpus
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.recall.explain import ExplainRequest, explain
from memory_recall.server.recall.explain_text import format_explanation
from memory_recall.server.recall.network import FixedNetwork

EVAL = Path(__file__).parents[2] / "fixtures" / "eval"
CORPORA = sorted(p for p in EVAL.glob("*.json") if p.name != "baseline.json")


@pytest.mark.parametrize("ranker", ["bm25f", "spec"])
@pytest.mark.parametrize("corpus_path", CORPORA[::1], ids=lambda p: p.stem)
def test_explained_parts_sum_to_the_rankers_score(corpus_path: Path, ranker: str) -> None:
    spec = RANKERS[ranker]
    corpus, _network = load_network_corpus(corpus_path)
    snapshot = corpus.snapshot
    explain_of = spec.rank.explain  # type: ignore[attr-defined]
    checked = 0
    for case in corpus.cases[:25]:
        shortlist = build_shortlist(snapshot, case.query, ranker=spec.rank, tokenizer=spec.tokenize)
        for scored in shortlist.ranked[:8]:
            found = explain_of(snapshot, shortlist.tokens, scored.document)
            assert found.score == scored.score, (case.id, scored.document.path)
            assert sum(p.value for p in found.parts) == pytest.approx(scored.score)
            checked += 1
        # and a memory the ranker did not return scores what its parts say
        for doc in snapshot.documents[:3]:
            found = explain_of(snapshot, shortlist.tokens, doc)
            assert sum(p.value for p in found.parts) == pytest.approx(found.score)
    assert checked


def _multihop():
    corpus, network = load_network_corpus(EVAL / "multihop.json")
    return corpus.snapshot, FixedNetwork.of(network, corpus.snapshot.documents)


QUERY = "I'm about to restructure the invoice module, anything I should know first?"


def test_a_hit_is_explained_with_its_rank_parts_and_phase() -> None:
    snapshot, network = _multihop()
    e = explain(
        snapshot,
        ExplainRequest("billing/invoice-module.md", QUERY, with_selector=True),
        RANKERS["bm25f"],
        network=network,
    )
    assert e.found and e.rank == 1
    assert {p.term for p in e.parts} >= {"invoice", "module"}
    assert e.phases[0].phase == "fast" and e.phases[0].delivered
    assert e.silence is not None and not e.silence.silenced
    assert "fast phase" in e.summary


def test_a_network_only_find_carries_its_path() -> None:
    snapshot, network = _multihop()
    e = explain(
        snapshot,
        ExplainRequest("conventions/test-rules.md", QUERY, with_selector=True),
        RANKERS["bm25f"],
        network=network,
    )
    assert e.rank is None and e.parts == []
    assert e.network is not None and e.network.seed == "billing/invoice-module.md"
    assert e.network.via[0].kind == "link" and e.network.via[0].to == "conventions/test-rules.md"
    assert e.candidate
    assert "network" in format_explanation(e)


def test_a_miss_says_why_none_sent_it_and_an_unknown_path_is_not_found() -> None:
    snapshot, network = _multihop()
    miss = explain(
        snapshot,
        ExplainRequest("people/priya-raman.md", QUERY, with_selector=True),
        RANKERS["spec"],
        network=network,
    )
    assert miss.found and not any(p.delivered for p in miss.phases)
    assert miss.summary.startswith("Not sent")
    gone = explain(snapshot, ExplainRequest("nope.md", QUERY), RANKERS["bm25f"])
    assert not gone.found and "no memory" in gone.summary


def test_silence_is_explained() -> None:
    snapshot, _network = _multihop()
    e = explain(
        snapshot,
        ExplainRequest("billing/invoice-module.md", "zzqx frobnicate the quux"),
        RANKERS["bm25f"],
    )
    assert e.score == 0 and e.summary.startswith("Not sent")


def test_the_recall_joins_the_network_exactly_as_network_eval_measures() -> None:
    """What `memory-recall dev network-eval` measures is what a recall sends."""
    from memory_recall.server.network.activation import spread
    from memory_recall.server.network.join import join_candidates, join_fast
    from memory_recall.server.ranking.shortlist import RecallQuery
    from memory_recall.server.recall.network import NetworkRecall

    corpus, network = load_network_corpus(EVAL / "multihop.json")
    fixed = FixedNetwork.of(network, corpus.snapshot.documents)
    spec = RANKERS["bm25f"]
    changed = 0
    for case in corpus.cases:
        query = RecallQuery.build(
            corpus.snapshot, case.query, ranker=spec.rank, tokenizer=spec.tokenize
        )
        shortlist = query.shortlist()
        lexical = [(s.document.path, float(s.score)) for s in shortlist.ranked]
        reached = spread(network, lexical)
        expected_fast, _added = join_fast(lexical[:2], reached)
        expected_joined = [j.path for j in join_candidates(lexical, reached)]
        joined = NetworkRecall(fixed, query.keep)
        assert [s.document.path for s in joined.fast(shortlist.fast, shortlist.ranked)] == (
            expected_fast
        )
        manifest = [d.path for d in joined.candidates(shortlist).candidates]
        # the manifest is the joined list interleaved with recent memories
        assert [p for p in manifest if p in set(expected_joined)] == expected_joined
        changed += expected_fast != [p for p, _ in lexical[:2]]
    assert changed  # the rule did act on this corpus


def test_the_fast_phase_explained_is_the_one_the_confidence_gate_sends() -> None:
    from memory_recall.server.ranking.view import CorpusView

    from tests.conftest import beyond_small_folders, make_doc

    docs = [
        make_doc("Zebra canary hosts", "zebra deploys hit the canary hosts first", path="/z/c.md"),
        make_doc("Zebra service owners", "who owns the zebra service deploys", path="/z/o.md"),
        make_doc("Zebra dashboards", "where the zebra service graphs are", path="/z/d.md"),
        *(make_doc(f"note {i}", f"topic {i}", f"word{i} " * 5, path=f"/n{i}.md") for i in range(6)),
    ]
    snapshot = CorpusView.of(beyond_small_folders(docs))
    silent = explain(
        snapshot,
        ExplainRequest("/z/c.md", "the canary budget of the payments team?", with_selector=True),
        RANKERS["bm25f"],
    )
    assert silent.rank == 1 and not silent.phases[0].delivered
    assert "silent" in silent.phases[0].reason and silent.phases[1].delivered
    sure = explain(
        snapshot,
        ExplainRequest("/z/o.md", "who owns the zebra service deploys?", with_selector=True),
        RANKERS["bm25f"],
    )
    assert sure.phases[0].delivered and "confidence, 0." in sure.phases[0].reason
