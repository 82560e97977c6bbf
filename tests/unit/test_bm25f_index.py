"""bm25f's index against its definition: whatever the corpus and its history of changes,
the indexed ranking equals the plain document-by-document scan, and the fast phase is
exactly the first two of it."""

from __future__ import annotations

import pickle

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_recall.protocol.limits import FAST_LIMIT, LEXICAL_CANDIDATES
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.index import Bm25Index, Bm25WindowIndex
from memory_recall.server.ranking.bm25f.ranker import Bm25Ranker
from memory_recall.server.ranking.bm25f.scan import rank_scan
from memory_recall.server.ranking.bm25f.terms import body_window, whole_body
from memory_recall.server.ranking.bm25f.tokens import COMMON_TWO_LETTER_WORDS, recall_tokens
from memory_recall.server.ranking.shortlist import RecallQuery
from memory_recall.server.ranking.view import CorpusView, input_order_key

from tests.conftest import make_doc
from tests.unit.test_index import as_pairs, documents, queries, vocabularies

# What bm25f reads beyond spec tokens: acronyms, compounds, camelCase, dates, repeats.
EXTRA = [
    "CI", "PR", "ci", "GP", "billing-api", "billing", "api", "services/billing/refund.ts",
    "getUserName", "user", "2025-04-06", "2025", "deploy deploy deploy", "ฐานข้อมูล",
    # A compound's parts elsewhere in other words: first part ending one, last part
    # starting one, a middle part inside a longer one (bm25f.ranker._find_compound).
    "prebilling-apis", "api-billing", "my-billing-api-v2", "services/billings/refund.tsx",
    "xservices/billing/refund.ts", "Billing-API", "İstanbul-API", "KIŞ-plan",
    # Folded forms (bm25f.folding): accents, Turkish and German casing, Greek, Vietnamese,
    # Traditional and Simplified Chinese.
    "ação", "acao", "Configuração", "ISTANBUL", "İstanbul", "kış", "KIŞ", "Straße", "strasse",
    "Ελλάδα", "ελλαδα", "đường", "duong", "資料庫", "资料库", "數據", "数据",
]  # fmt: skip


@st.composite
def scenarios(draw: st.DrawFn, most: int = 12):
    vocabulary = draw(vocabularies) + draw(st.lists(st.sampled_from(EXTRA), max_size=4))
    paths = [f"/m/{i}.md" for i in range(draw(st.integers(0, most)))]
    docs = {p: draw(documents(p, vocabulary)) for p in paths}
    changes = []
    for _ in range(draw(st.integers(0, 8))):
        path = f"/m/{draw(st.integers(0, most + 2))}.md"
        changes.append((path, draw(documents(path, vocabulary)) if draw(st.booleans()) else None))
    return vocabulary, docs, changes


def apply(index: Bm25Index, docs: dict[str, MemoryDocument], changes) -> None:
    for doc in docs.values():
        index.add(doc)
    for path, doc in changes:
        index.remove(path)
        docs.pop(path, None)
        if doc is not None:
            index.add(doc)
            docs[path] = doc


KINDS = {Bm25Index: whole_body, Bm25WindowIndex: body_window}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_the_incremental_index_ranks_exactly_like_the_scan(scenario, data):
    vocabulary, docs, changes = scenario
    kind = data.draw(st.sampled_from(sorted(KINDS, key=lambda k: k.KIND)))
    # Small thresholds put short posting lists behind bitmaps, and score through them.
    index = kind(dense_postings=data.draw(st.sampled_from((1, 2, 512))), tiebreak=input_order_key)
    ranker = Bm25Ranker(index_kind=kind, sparse_postings=data.draw(st.sampled_from((0, 256))))
    apply(index, docs, changes)
    if data.draw(st.booleans()):
        index.warm(share=1_000_000)
    snapshot = CorpusView.of(docs.values())
    excluded = data.draw(st.sets(st.sampled_from(sorted(docs) or ["/none"])))

    def keep(doc):
        return doc.path not in excluded

    for _ in range(3):
        tokens = recall_tokens(data.draw(queries(list(docs.values()), vocabulary)))
        want = rank_scan(snapshot.documents, tokens, keep, body=KINDS[kind])
        for limit in (None, 1, 2, 5):
            got = ranker.rank(index, tokens, keep, limit)
            assert as_pairs(got) == as_pairs(want[:limit]), (tokens, limit)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_an_index_asked_between_its_changes_ranks_exactly_like_the_scan(scenario, data):
    """What the index keeps from one recall for the next (a compound's checks in the
    text, count codes) never outlives a change of what it read."""
    vocabulary, docs, changes = scenario
    index = Bm25Index(tiebreak=input_order_key)
    ranker = Bm25Ranker()
    apply(index, docs, [])
    asked = [recall_tokens(data.draw(queries(list(docs.values()), vocabulary))) for _ in range(3)]
    for change in [None, *changes]:
        if change is not None:
            apply(index, {}, [change])
            path, doc = change
            docs.pop(path, None)
            if doc is not None:
                docs[path] = doc
        snapshot = CorpusView.of(docs.values())
        for tokens in asked:
            want = rank_scan(snapshot.documents, tokens)
            assert as_pairs(ranker.rank(index, tokens)) == as_pairs(want), tokens
    for checks in index._compounds.values():  # each kept for the document its slot holds
        for slot, (doc, _check) in checks.items():
            assert index.slot(doc.path) == slot and index.document(slot) is doc


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(most=40), st.data())
def test_the_fast_phase_is_exactly_the_top_two_of_the_ranking(scenario, data):
    vocabulary, docs, _ = scenario
    snapshot = CorpusView.of(docs.values())
    ranker = Bm25Ranker(sparse_postings=data.draw(st.sampled_from((0, 256))))
    for _ in range(3):
        query = data.draw(queries(list(docs.values()), vocabulary))
        recall = RecallQuery.build(snapshot, query, ranker=ranker, tokenizer=recall_tokens)
        exact = rank_scan(snapshot.documents, recall.tokens)
        assert as_pairs(recall.top(FAST_LIMIT)) == as_pairs(exact[:FAST_LIMIT]), query
        shortlist = recall.shortlist()
        assert as_pairs(shortlist.fast) == as_pairs(exact[:FAST_LIMIT])
        assert as_pairs(shortlist.ranked) == as_pairs(exact[:LEXICAL_CANDIDATES])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_a_saved_index_reloads_to_the_same_answers_and_keeps_changing(scenario, data):
    vocabulary, docs, changes = scenario
    # A threshold of 1 keeps a bitmap of every list, warmed and saved with the index.
    index = Bm25Index(dense_postings=data.draw(st.sampled_from((1, 512))), tiebreak=input_order_key)
    apply(index, docs, changes)
    index.warm(share=1_000_000)
    parts = pickle.loads(pickle.dumps(list(index.parts())))
    reloaded = Bm25Index.from_parts(parts, input_order_key)
    reloaded.relink(docs)
    # The words' field counts are saved, not counted again from the terms.
    assert reloaded._word_fields == index._word_fields
    ranker = Bm25Ranker()
    tokens = recall_tokens(data.draw(queries(list(docs.values()), vocabulary)))
    assert as_pairs(ranker.rank(reloaded, tokens)) == as_pairs(ranker.rank(index, tokens))
    if docs:
        gone = data.draw(st.sampled_from(sorted(docs)))
        reloaded.remove(gone)
        del docs[gone]
        want = rank_scan(CorpusView.of(docs.values()).documents, tokens)
        assert as_pairs(ranker.rank(reloaded, tokens)) == as_pairs(want)
        ranker = Bm25Ranker(sparse_postings=0)  # through the reloaded bitmaps
        assert as_pairs(ranker.rank(reloaded, tokens)) == as_pairs(want)


def test_the_whole_body_is_indexed_and_its_length_normalizes_it():
    filler = "Notes about the team and the week. " * 60  # ~2,100 characters
    deep = make_doc("Session log", body=filler + "The flaky test was fixed by pinning xdist.")
    short = make_doc("xdist", body="Pinning xdist fixed it.")
    index = Bm25Index.of([deep, short])
    window = Bm25WindowIndex.of([deep, short])
    ranker, window_ranker = Bm25Ranker(), Bm25Ranker(index_kind=Bm25WindowIndex)
    found = [s.document for s in ranker.rank(index, recall_tokens("flaky test pinning"))]
    assert found == [deep, short]  # past character 1,200, and "flaky" only there
    assert [s.document for s in window_ranker.rank(window, recall_tokens("flaky pinning"))] == [
        short
    ]


def test_acronyms_are_indexed_as_written_and_survive_a_reload():
    gp = make_doc("Doctor", body="My GP is Dr. Byrne; the GP practice is near.", path="/m/gp.md")
    build = make_doc("Build", body="gp ci build guide", path="/m/build.md")  # lowercase: words
    index = Bm25Index.of([gp, build])
    assert index.field_counts(2, ["\x01gp"]) == {0: 2}
    assert index.field_counts(2, ["\x01ci"]) == {}
    parts = pickle.loads(pickle.dumps(list(index.parts())))
    reloaded = Bm25Index.from_parts(parts)
    reloaded.relink({doc.path: doc for doc in (gp, build)})
    assert reloaded.field_counts(2, ["\x01gp"]) == {0: 2}
    reloaded.remove("/m/gp.md")
    assert reloaded.field_counts(2, ["\x01gp"]) == {}
    assert [s.document for s in Bm25Ranker().rank(index, recall_tokens("my GP"))] == [gp]


def test_the_spec_index_holds_no_acronyms():
    from memory_recall.server.ranking.index import DocumentIndex

    gp = make_doc("Doctor", body="My GP is Dr. Byrne.")
    index = DocumentIndex.of([gp])
    assert not [t for field in index.document_terms(gp).fields for t in field if t < " "]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_the_ascii_fast_path_counts_what_the_regexes_count(raw):
    from collections import Counter

    from memory_recall.server.ranking.bm25f import terms

    slow: Counter[str] = Counter(terms._ASCII_WORD.findall(raw.lower()))
    slow.update(terms.ACRONYM_MARK + word.lower() for word in terms._ACRONYM.findall(raw))
    # Two-letter heads of hyphenated names (`db` of `db-stg-7`), as the regex reads them.
    heads = [w for w in terms._LOWER_TWO.findall(raw) if w not in COMMON_TWO_LETTER_WORDS]
    slow.update(terms.ACRONYM_MARK + w for w in heads)
    assert terms.term_counts(raw.lower(), raw) == slow
    assert terms.acronyms(raw) == [
        terms.ACRONYM_MARK + w.lower() for w in terms._ACRONYM.findall(raw)
    ] + [terms.ACRONYM_MARK + w for w in heads]


def test_count_codes_kept_for_one_question_serve_the_next_whatever_it_asked_first():
    """The count codes an index keeps depend on the words they count, never on which
    memories the first asker wanted: explaining one memory, or a folded form looked up
    beside another exact set (`acao`, then `ação`), must not change the next ranking."""
    filler = " x" * 600
    docs = [
        make_doc(body=f"acao{filler} acao", path="/m/long.md"),
        make_doc(body="acao acao acao", path="/m/short.md"),
        make_doc(body="ação", path="/m/accented.md"),
        make_doc(description="ação deploy", path="/m/described.md"),
    ] + [make_doc(body=f"acao other {i}", path=f"/m/{i}.md") for i in range(8)]
    for first in ("explain", "acao"):
        snapshot = CorpusView.of(docs)
        ranker = Bm25Ranker(sparse_postings=0)  # long lists through the count codes
        if first == "explain":
            ranker.explain(snapshot, recall_tokens("acao"), docs[1])
        else:
            ranker.rank(snapshot.index(Bm25Index), recall_tokens(" deploy acao "))
        for query in ("acao", "ação", " deploy acao "):
            tokens = recall_tokens(query)
            got = ranker.rank(snapshot.index(Bm25Index), tokens)
            assert as_pairs(got) == as_pairs(rank_scan(snapshot.documents, tokens)), (first, query)


def test_a_cache_built_while_the_index_changes_is_not_kept(monkeypatch):
    """A search in a worker thread (a remember's candidates) built a long list's cached
    bitmap while the event loop removed a document: kept, the removed slot stayed in it
    for good (and in the snapshot), a term held by more slots than there were documents
    had a negative IDF, and every remember of every later daemon failed."""
    from memory_recall.server.ranking import postings
    from memory_recall.server.ranking.bm25f.index import BODY
    from memory_recall.server.ranking.bm25f.query import idf

    docs = [make_doc(f"Note {i}", "", f"common words {i}") for i in range(80)]
    index = Bm25Index.of(docs)
    index._dense[BODY].pop("common", None)
    building = postings.code_bitmaps

    def removed_meanwhile(*args, **kwargs):
        index.remove(docs[0].path)  # the event loop, between the read and the store
        return building(*args, **kwargs)

    monkeypatch.setattr(postings, "code_bitmaps", removed_meanwhile)
    index.field_sums(BODY, ["common"])
    monkeypatch.setattr(postings, "code_bitmaps", building)
    slots = [index.slot(doc.path) for doc in docs]
    live = sum(1 << slot for slot in slots if slot is not None)
    assert index.field_any(BODY, ["common"]) & ~live == 0
    assert idf(5, 3) >= 0  # more holders than documents: read as all of them


def test_a_stale_cache_read_back_from_a_snapshot_is_dropped():
    """A snapshot written before the fix above may hold a cached bitmap with a removed
    slot: read back, that cache is dropped (built again from its list when asked)."""
    from memory_recall.server.ranking.bm25f.index import BODY

    docs = [make_doc(f"Note {i}", "", f"common words {i}") for i in range(80)]
    index = Bm25Index.of(docs)
    index.field_sums(BODY, ["common"])  # builds the cache
    index.remove(docs[0].path)
    gone = 1 << 200  # a slot no document holds, as a stale cache kept it
    index._dense[BODY]["common"].slices[0] |= gone
    again = Bm25Index.from_parts(index.parts())
    again.relink({doc.path: doc for doc in docs[1:]})
    assert again.field_any(BODY, ["common"]) & gone == 0
