"""The candidate index gives exactly the reference scan's ranking (docs/ranking.md)."""

from __future__ import annotations

import pickle
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.index import DocumentIndex
from memory_recall.server.ranking.shortlist import build_shortlist, index_ranker, reference_ranker
from memory_recall.server.ranking.spec import rank_scan
from memory_recall.server.ranking.view import CorpusView, input_order_key
from memory_recall.server.roots import Scope
from memory_recall.server.tokens import query_tokens

from tests.conftest import make_doc

# Words in many scripts, with the characters NFKC and lowercasing change:
# full-width and half-width forms, ligatures, combining marks, dotted capital I,
# Katakana's prolonged sound mark and middle dot, CJK punctuation.
WORDS = [
    "deploy", "Deployment", "redeploy", "staging", "the", "other", "rule", "release",
    "café", "cafe\u0301", "naïve", "Straße", "STRASSE", "ﬁle", "file", "İstanbul", "istanbul",
    "ǅemal", "über", "Ünïcödé", "ＤＥＰＬＯＹ", "ｄｅｐｌｏｙ", "１２３", "123", "v2", "x86_64",
    "сервер", "Сервер", "деплой", "βάση", "ΒΆΣΗ", "δεδομένων",
    "本番環境", "環境変数", "東京", "漢字", "デプロイ", "ﾃﾞﾌﾟﾛｲ", "カタカナ・テスト", "ラーメン",
    "ひらがな", "おはよう", "한국어", "데이터베이스", "서버", "々", "〇", "①",
    "abc漢字", "漢字abc", "デプロイment", "q\u0308\u0301", "\u0301abc", "a\u200db", "x\u0301yz",
    "n\u0303\u0304o", "각", "각",
]  # fmt: skip
SEPARATORS = [" ", " ", " ", "\n", ", ", ". ", "-", "_", "/", "、", "。", "・", "", "—", "'"]
RARE_CHARS = "aeioustnrxyzéöçßıİ̇ЖжΣσς漢字東京あアｱーー・한글ＡａＺ0１²½ﬀ\u0301\u0308\u3000"

word = st.one_of(
    st.sampled_from(WORDS),
    st.text(alphabet=RARE_CHARS, min_size=1, max_size=6),
)
# Each example writes with a small vocabulary, so documents and queries share words.
vocabularies = st.lists(word, min_size=1, max_size=8)


@st.composite
def texts(draw: st.DrawFn, vocabulary: list[str], max_words: int = 8) -> str:
    out = []
    for _ in range(draw(st.integers(0, max_words))):
        out.append(draw(st.sampled_from(vocabulary) | word))
        out.append(draw(st.sampled_from(SEPARATORS)))
    return "".join(out)


@st.composite
def documents(draw: st.DrawFn, path: str, vocabulary: list[str]) -> MemoryDocument:
    body = draw(texts(vocabulary, 12))
    if draw(st.booleans()):  # something past the 1,200-character body window
        body = body + "x " * draw(st.integers(590, 610)) + draw(texts(vocabulary, 4))
    return MemoryDocument(
        path=path,
        relative_path=path.rsplit("/", 1)[-1],
        scope=draw(st.sampled_from(Scope)),
        type=draw(st.sampled_from(("user", "feedback", "project", "reference"))),
        title=draw(texts(vocabulary, 4)),
        description=draw(texts(vocabulary, 6)),
        body=body,
        mtime_ms=float(draw(st.integers(1, 3))),  # few values: many ties to break
        root_index=draw(st.integers(0, 1)),
    )


@st.composite
def queries(draw: st.DrawFn, docs: list[MemoryDocument], vocabulary: list[str]) -> str:
    """Often fragments of the documents' own text, so that matches happen."""
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if docs and draw(st.booleans()):
            doc = draw(st.sampled_from(docs))
            source = draw(st.sampled_from((doc.title, doc.description, doc.body)))
            if source:
                start = draw(st.integers(0, len(source) - 1))
                length = draw(st.integers(1, 12))
                parts.append(source[start : start + length])
                continue
        parts.append(draw(texts(vocabulary, 3)))
    parts.append(draw(st.sampled_from(("", " rule", " dashboard docs", " project goal"))))
    return " ".join(parts)


def as_pairs(ranked):
    return [(s.document.path, s.score) for s in ranked]


@st.composite
def scenarios(draw: st.DrawFn):
    vocabulary = draw(vocabularies)
    paths = [f"/m/{i}.md" for i in range(draw(st.integers(0, 12)))]
    docs = {p: draw(documents(p, vocabulary)) for p in paths}
    # Then changes: upserts (new or replacing) and removals.
    changes = []
    for _ in range(draw(st.integers(0, 8))):
        path = f"/m/{draw(st.integers(0, 14))}.md"
        if draw(st.booleans()):
            changes.append((path, draw(documents(path, vocabulary))))
        else:
            changes.append((path, None))
    return vocabulary, docs, changes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_incremental_index_ranks_exactly_like_the_scan(scenario, data):
    vocabulary, docs, changes = scenario
    # Small thresholds put even short posting lists behind kept bitmaps.
    index = DocumentIndex(
        dense_postings=data.draw(st.sampled_from((1, 2, 3, 512))), tiebreak=input_order_key
    )
    for doc in docs.values():
        index.add(doc)
    for path, doc in changes:
        index.remove(path)
        docs.pop(path, None)
        if doc is not None:
            index.add(doc)
            docs[path] = doc
    snapshot = CorpusView.of(docs.values())
    assert index.by_recency() == snapshot.by_recency
    excluded = data.draw(st.sets(st.sampled_from(sorted(docs) or ["/none"])))

    def keep(doc):
        return doc.path not in excluded

    def check(tokens):
        expected = rank_scan(CorpusView.of(docs.values()).documents, tokens, keep)
        for limit in (None, 1, 2, 5):
            got = index.rank(tokens, keep, limit)
            want = expected if limit is None else expected[:limit]
            assert as_pairs(got) == as_pairs(want), (tokens, limit)

    for _ in range(3):
        tokens = query_tokens(data.draw(queries(list(docs.values()), vocabulary)))
        check(tokens)
        if data.draw(st.booleans()):  # a saved and reloaded index answers the same
            parts = pickle.loads(pickle.dumps(list(index.parts())))
            index = DocumentIndex.from_parts(parts, input_order_key)
            index.relink(docs)
            check(tokens)
        if data.draw(st.booleans()):  # a change, then the same query again
            path = data.draw(st.sampled_from([*docs, "/m/99.md"]))
            doc = data.draw(st.none() | documents(path, vocabulary))
            index.remove(path)
            docs.pop(path, None)
            if doc is not None:
                index.add(doc)
                docs[path] = doc
            check(tokens)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_a_bulk_built_index_answers_like_one_built_by_adds(scenario, data):
    # What a catalog scan builds: every document at once, in input order; the
    # watcher's changes then arrive one by one.
    vocabulary, docs, changes = scenario
    ordered = CorpusView.of(docs.values()).documents
    bulk = DocumentIndex.of(ordered, tiebreak=input_order_key)
    added = DocumentIndex(tiebreak=input_order_key)
    for doc in ordered:
        added.add(doc)
    for path, doc in changes:
        docs.pop(path, None)
        for index in (bulk, added):
            index.remove(path)
            if doc is not None:
                index.add(doc)
        if doc is not None:
            docs[path] = doc
    snapshot = CorpusView.of(docs.values())
    assert bulk.by_recency() == snapshot.by_recency
    assert bulk.stats() == added.stats()
    for _ in range(3):
        tokens = query_tokens(data.draw(queries(list(docs.values()), vocabulary)))
        for token in tokens:
            assert bulk.token_bits(token) == added.token_bits(token), token
        want = rank_scan(snapshot.documents, tokens)
        assert as_pairs(bulk.rank(tokens)) == as_pairs(want), tokens


@settings(max_examples=60, deadline=None)
@given(vocabularies, st.data())
def test_an_ad_hoc_snapshot_breaks_ties_by_its_own_order(vocabulary, data):
    docs = data.draw(st.lists(documents("/x.md", vocabulary), max_size=10))
    # Eval snapshots are in corpus order, whatever the paths say.
    docs = [
        replace(d, path=f"/z/{9 - i}.md", relative_path=f"{9 - i}.md", root_index=0)
        for i, d in enumerate(docs)
    ]
    snapshot = CorpusView(tuple(docs), tuple(docs))
    query = data.draw(queries(docs, vocabulary))
    indexed = build_shortlist(snapshot, query, ranker=index_ranker)
    reference = build_shortlist(snapshot, query, ranker=reference_ranker)
    assert as_pairs(indexed.ranked) == as_pairs(reference.ranked)
    assert indexed.candidates == reference.candidates


@given(st.lists(st.text(alphabet="ab 漢字.-é\u0301", min_size=1, max_size=4), max_size=5))
def test_tokens_of_any_shape_still_match_exactly(tokens):
    # Another tokenizer may hand over tokens the index has no postings for
    # (short, spaced, mixed CJK and Latin): they are scanned for.
    docs = [make_doc("ab 漢字.-é", "a", "b a漢字b"), make_doc("abé\u0301"), make_doc("x")]
    index = DocumentIndex.of(docs)
    assert as_pairs(index.rank(tokens)) == as_pairs(rank_scan(docs, tokens))


def test_a_token_is_found_inside_longer_words_and_across_scripts():
    doc = make_doc("xdeployment漢字", type="user")
    index = DocumentIndex.of([doc])
    for query, score in (("deploy", 4), ("漢字", 4), ("ployme", 4), ("xdeploymentx", 0)):
        ranked = index.rank(query_tokens(query))
        assert [s.score for s in ranked] == ([score] if score else []), query


def test_removal_forgets_every_word_and_pair():
    index = DocumentIndex()
    a = make_doc("deploy staging", "本番環境", "the other rule", path="/a.md")
    b = make_doc("deploy", "", "環境", path="/b.md")
    index.add(a)
    index.add(b)
    assert [s.document for s in index.rank(["deploy"])] == [a, b]
    assert index.remove("/a.md")
    assert not index.remove("/a.md")
    assert [s.document for s in index.rank(["deploy"])] == [b]
    assert index.rank(["staging"]) == []
    assert [s.document for s in index.rank(["環境"])] == [b]
    index.remove_many(["/b.md"])
    assert set(index.stats().values()) == {0}


def test_replacing_a_document_moves_it_in_the_tie_order():
    index = DocumentIndex()
    old = make_doc("deploy", mtime_ms=1, path="/a.md")
    other = make_doc("deploy", mtime_ms=2, path="/b.md")
    index.add(old)
    index.add(other)
    assert [s.document for s in index.rank(["deploy"])] == [other, old]
    index.remove("/a.md")
    new = make_doc("deploy", mtime_ms=3, path="/a.md")
    index.add(new)
    assert [s.document for s in index.rank(["deploy"])] == [new, other]
    assert index.by_recency() == (new, other)


def test_removing_many_documents_at_once():
    docs = [make_doc("deploy", body=f"the note {i}", path=f"/d/{i}.md") for i in range(40)]
    index = DocumentIndex.of(docs)
    assert index.remove_many([d.path for d in docs[:30]] + ["/nope.md"]) == 30
    assert [s.document for s in index.rank(["the"])] == docs[30:]


def test_limit_and_keep_walk_past_rejected_documents():
    # 50 equal matches: the lowest level is walked in recency order.
    docs = [make_doc("deploy", mtime_ms=i % 3, path=f"/d/{i:02}.md") for i in range(50)]
    snapshot = CorpusView.of(docs)
    index = DocumentIndex.of(snapshot.documents)

    def keep(doc):
        return not doc.path.endswith(("1.md", "2.md", "3.md"))

    want = rank_scan(snapshot.documents, ["deploy"], keep)[:7]
    assert as_pairs(index.rank(["deploy"], keep, 7)) == as_pairs(want)


def test_a_recent_candidate_past_the_lexical_top_keeps_its_score():
    # The ranker returns the lexical top 180 only; the manifest's recent part
    # may hold matches beyond them, whose score is still the exact scorer's.
    from memory_recall.server.ranking.shortlist import LEXICAL_CANDIDATES

    docs = [make_doc("deploy", mtime_ms=i, path=f"/d/{i:03}.md") for i in range(200)]
    shortlist = build_shortlist(CorpusView.of(docs), "deploy")
    assert len(shortlist.ranked) == LEXICAL_CANDIDATES
    outside = [d for d in shortlist.candidates if d not in {s.document for s in shortlist.ranked}]
    assert outside and all(shortlist.score_of(d) == 4 for d in outside)
    assert shortlist.score_of(make_doc("unrelated")) == 0
