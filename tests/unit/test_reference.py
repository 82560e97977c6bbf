"""the reference scoring (docs/ranking.md) and ranking, rule by rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.ranking.spec import rank_scan, score_document
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.tokens import query_tokens

from tests.conftest import make_doc


def score(doc, query):
    return score_document(doc, query_tokens(query))


def test_field_weights_title_4_description_3_body_1():
    assert score(make_doc("deploy", type="user"), "deploy") == 4
    assert score(make_doc("x", "deploy", type="user"), "deploy") == 3
    assert score(make_doc("x", "", "deploy", type="user"), "deploy") == 1
    assert score(make_doc("deploy", "deploy", "deploy", type="user"), "deploy") == 8


def test_matching_is_by_substring():
    assert score(make_doc("redeployment", type="user"), "deploy") == 4


def test_matching_is_normalized_on_both_sides():
    assert score(make_doc("ＤＥＰＬＯＹ", type="user"), "Deploy") == 4
    assert score(make_doc("deploy", type="user"), "ＤＥＰＬＯＹ") == 4


def test_cjk_bigrams_match_inside_text():
    doc = make_doc("本番環境へのデプロイ手順", type="user")
    assert score(doc, "デプロイ") == 4 * 3  # デプ, プロ, ロイ each in the title


def test_each_token_counts_once_per_field():
    assert score(make_doc("deploy deploy deploy", type="user"), "deploy") == 4


def test_body_match_past_1200_characters_does_not_count():
    doc = make_doc("x", "", "a" * 1200 + " needle", type="user")
    assert score(doc, "needle") == 0
    doc = make_doc("x", "", "a" * 1190 + " needle", type="user")
    assert score(doc, "needle") == 1


def test_type_boost_only_after_a_lexical_match():
    assert score(make_doc("nothing here", type="project"), "release") == 0
    assert score(make_doc("release steps", type="project"), "release") == 4 + 1


def test_type_boost_counts_keywords_capped_at_two():
    doc = make_doc("deadline", type="project")
    # deadline(title 4) + boost: project, goal, deadline, release → capped at 2
    assert score(doc, "deadline project goal release") == 4 + 2
    assert score(doc, "deadline project") == 4 + 2
    assert score(doc, "deadline") == 4 + 1


def test_type_boost_uses_the_documents_own_type_list():
    doc = make_doc("dashboard", type="project")
    assert score(doc, "dashboard") == 4  # dashboard is a reference keyword
    assert score(make_doc("dashboard", type="reference"), "dashboard") == 5


def test_type_keyword_lists():
    cases = {
        "user": "user preference preferences background role terse",
        "feedback": "feedback rule rules avoid style summary",
        "project": "project goal goals incident deadline release",
        "reference": "reference dashboard ticket docs doc link",
    }
    for doc_type, words in cases.items():
        for word in words.split():
            doc = make_doc("zzz", type=doc_type)
            assert score(doc, f"zzz {word}") == 4 + 1, (doc_type, word)


def rank(docs, query):
    return [s.document for s in rank_scan(docs, query_tokens(query))]


def test_rank_by_score_then_mtime_then_input_order():
    a = make_doc("deploy", mtime_ms=1, type="user")
    b = make_doc("deploy deploy", "deploy", mtime_ms=1, type="user")
    c = make_doc("deploy", mtime_ms=9, type="user")
    d = make_doc("deploy", mtime_ms=1, type="user")
    assert rank([a, b, c, d], "deploy") == [b, c, a, d]
    assert rank([d, b, c, a], "deploy") == [b, c, d, a]


def test_ranking_is_never_by_type():
    # Same score, same mtime: input order decides, whatever the type.
    user = make_doc("editor setup", type="user")
    feedback = make_doc("editor setup", type="feedback")
    project = make_doc("editor setup", type="project")
    assert rank([user, feedback, project], "editor") == [user, feedback, project]
    assert rank([project, feedback, user], "editor") == [project, feedback, user]


def test_user_doc_is_not_pushed_out_of_top_two_by_type():
    user = make_doc("vim keybindings", type="user")
    others = [make_doc("vim keybindings", type=t) for t in ("feedback", "project", "reference")]
    snapshot = CorpusView((user, *others), (user, *others))
    fast = build_shortlist(snapshot, "vim keybindings").fast
    assert fast[0].document is user


def test_zero_score_documents_are_never_returned():
    docs = [make_doc("alpha"), make_doc("beta")]
    assert rank(docs, "alpha") == [docs[0]]


def test_query_without_tokens_returns_nothing():
    docs = [make_doc("is it ok 猫")]
    assert rank(docs, "is it ok") == []
    assert rank(docs, "猫") == []
    assert rank(docs, "") == []


@given(st.permutations(range(6)))
def test_equal_docs_rank_only_by_input_order(order):
    docs = [make_doc("same title", type=t) for t in ("user", "project", "feedback") * 2]
    permuted = [docs[i] for i in order]
    assert rank(permuted, "same title") == permuted
