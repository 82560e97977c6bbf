"""The `bm25f` ranker (the default): its tokens, its order, its silence.

Its figures on the eval corpora are held by the baseline (test_eval_baseline.py)."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_recall.server.dev.evaluation import EvalCorpus, evaluate, load_corpus
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f import (
    QUERY_STOPWORDS,
    Bm25Ranker,
    folding,
    light_stem,
    without_clitic,
)
from memory_recall.server.ranking.bm25f.folding import (
    cannot_hold,
    caseless_ascii,
    exact_form,
    kept_exact_form,
)
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.bm25f.query import compound_parts, function_words
from memory_recall.server.ranking.bm25f.tokens import ACRONYM_MARK, recall_tokens
from memory_recall.server.ranking.index import WORD
from memory_recall.server.ranking.postings import slots_of
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.roots import Scope
from memory_recall.server.tokens import normalize, query_tokens

EVAL = Path(__file__).parents[2] / "fixtures" / "eval"
CORPORA = (
    "corpus", "coding", "history", "sessions", "monorepo", "longmem", "polyglot", "worldwide",
)  # fmt: skip


def memory(
    name: str,
    title: str,
    body: str = "",
    *,
    type_: str = "project",
    mtime: float = 1,
    desc: str = "",
) -> MemoryDocument:
    return MemoryDocument(
        path=f"/m/{name}.md",
        relative_path=f"{name}.md",
        scope=Scope.PROJECT,
        type=type_,  # type: ignore[arg-type]
        title=title,
        description=desc,
        body=body,
        mtime_ms=mtime,
    )


def recall(docs: list[MemoryDocument], query: str) -> list[str]:
    spec = RANKERS["bm25f"]
    shortlist = build_shortlist(
        CorpusView.of(docs), query, ranker=spec.rank, tokenizer=spec.tokenize
    )
    return [s.document.relative_path.removesuffix(".md") for s in shortlist.fallback]


FILLER = [
    memory(f"filler-{i}", f"Note {i} about the team", f"What the team said about topic {i}.")
    for i in range(12)
]


# -- tokens ------------------------------------------------------------------


def test_two_letter_acronyms_are_tokens_unless_common_words():
    mark = ACRONYM_MARK
    assert f"{mark}gp" in recall_tokens("who's my GP now")
    assert f"{mark}ui" in recall_tokens("kafka ui url")  # typed in lowercase: still asked for
    assert f"{mark}it" in recall_tokens("IT band exercises")  # in capitals: an acronym
    assert not [t for t in recall_tokens("is it on or in it?") if t.startswith(mark)]
    assert not [t for t in recall_tokens("누가 했어 v2") if t.startswith(mark)]


def test_an_acronym_matches_only_where_it_is_written_as_one():
    docs = [
        *FILLER,
        memory("gp", "Doctor", "My GP is Dr. Byrne at the Phibsborough practice."),
        memory("build", "Build notes", "The build is quick; guide in the wiki."),
        memory("kafka", "Kafka tooling links", desc="Kafka UI and lag dashboards"),
    ]
    assert recall(docs, "who's my gp now") == ["gp"]
    assert recall(docs, "kafka ui url")[0] == "kafka"
    assert "build" not in recall(docs, "ui guide")[:1]  # "ui" inside "build", "guide"


def test_a_two_letter_name_leading_a_hyphenated_one_is_found():
    docs = [
        *FILLER,
        memory("stg", "Staging", "Staging runs on db-stg-7.internal port 6432."),
        memory("py", "Entry point", "The CLI starts in server/main.py and dispatcher-ui."),
        memory("region", "Region", "Everything is deployed to eu-west-1."),
    ]
    assert recall(docs, "which db host?")[:1] == ["stg"]
    assert recall(docs, "EU region")[:1] == ["region"]
    # A later piece of a compound is not a word of its own: `py`, `ui`.
    assert "py" not in recall(docs, "py ui")


def test_identifiers_split_into_parts_and_the_whole_stays():
    assert {"getusername", "get", "user", "name"} <= set(recall_tokens("getUserName"))
    assert {"httpserver", "http", "server"} <= set(recall_tokens("HTTPServer"))
    tokens = recall_tokens("snake_case_name and shop-admin in server/ranking/index.py")
    assert {"snake", "case", "name", "snake_case_name"} <= set(tokens)
    assert {"shop", "admin", "shop-admin"} <= set(tokens)
    assert {"server", "ranking", "index", "server/ranking/index.py"} <= set(tokens)


_PIECES = ["billing", "api", "v2", "refund", "ts", "用户", "ação", "x", "log_in", "ΑΠΙ"]
_GLUE = ["-", "_", "/", ".", ":"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), min_size=2, max_size=4),
    st.lists(st.sampled_from(_GLUE), min_size=3, max_size=3),
    st.sampled_from(["", " ", "pre", "x-", "see ", "api_"]),
    st.sampled_from(["", " ", "s", "-v3", ".tsx", "api"]),
)
def test_a_text_that_holds_a_compound_holds_each_part_where_the_ranker_looks(
    pieces, glue, before, after
):
    # The ranker checks a compound's text only in memories whose words hold each part
    # where the compound puts it (compound_parts); a text holding the compound must
    # always qualify, whatever stands around it.
    joined = pieces[0] + "".join(g + p for g, p in zip(glue, pieces[1:], strict=False))
    token = exact_form(joined)
    text = exact_form(before + token + after)
    assert token in text
    words = WORD.findall(text)
    for part in compound_parts(token):
        assert any(part.fits(word) for word in words), (token, text, part)


def test_a_compound_is_checked_only_where_its_parts_stand_as_it_puts_them():
    docs = [
        memory("a", "Billing notes", "The billing-api returns 500 on refunds."),
        memory("b", "Other", "billing is slow; the api is fine."),  # both parts, apart
        memory("c", "Prefix", "prebilling-apis are a different service."),  # inside longer words
        memory("d", "Reversed", "The api-billing bridge."),
    ]
    index = Bm25Index.of(docs)
    found = Bm25Ranker()._find_compound(index, "billing-api")
    assert found is not None
    assert [index.document(slot).path for slot in slots_of(found.anywhere)] == [
        "/m/a.md",
        "/m/c.md",
    ]
    (billing, api) = compound_parts("billing-api")
    assert (billing.fits("prebilling"), billing.fits("billings"), api.fits("apis")) == (
        True, False, True,
    )  # fmt: skip


def test_the_normal_forms_kept_for_compound_checks_are_the_exact_forms_and_bounded():
    texts = ["Ｆｕｌｌｗｉｄｔｈ，ｔｅｘｔ", "数据库，迁移。", "plain ascii", "İstanbul’da ①"] * 3
    assert [kept_exact_form(t) for t in texts] == [exact_form(t) for t in texts]
    big = "，" * (folding.KEPT_FORM_CHARS // 16)
    for n in range(20):  # far more than the budget holds: the oldest leave
        kept_exact_form(big + str(n))
    assert folding._kept_chars <= folding.KEPT_FORM_CHARS
    assert sum(len(t) + len(f) for t, f in folding._kept.items()) == folding._kept_chars


_HOLDERS = [
    *"aIik_-/.KSs ", "İ", "ı", "K", "ｋ", "Ｉ", "ﬁ", "ſ", "ė", "Ì", "\u0307", "é", "数",
    # Compatibility characters `cannot_hold` writes as NFKC does, and what they meet.
    "，", "\u00a0", "…", "＿", "．", "\u3000", "②", "²", "ｶ", "ﾞ", "\u0301", "\u0338", "＝",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(_HOLDERS), max_size=24), st.data())
def test_a_text_said_not_to_hold_an_ascii_token_does_not_hold_it_in_its_exact_form(
    text: str, data: st.DataObject
) -> None:
    form = exact_form(text)
    token = data.draw(
        st.one_of(
            st.text(alphabet=st.sampled_from(list("aik_-/.s")), min_size=1, max_size=4),
            st.integers(0, max(len(form) - 1, 0)).map(lambda i: form[i : i + 3]),
        )
    )
    pattern = caseless_ascii(token)
    if pattern is None or not token:
        return
    if cannot_hold(text, pattern):
        assert token not in form


def test_a_turkish_letter_written_decomposed_is_cased_as_turkish() -> None:
    # "I" + a combining dot above is İ once NFKC composes it, and Turkish casing makes it
    # "i": the text as written holds no Turkish letter, its exact form holds "ik".
    text = "I\u0307K"
    assert "ik" in exact_form(text)
    assert not cannot_hold(text, caseless_ascii("ik"))
    # Every tailored letter composes from a mark the check looks for.
    for letter in folding._TURKIC_LETTERS + folding._LITHUANIAN_LETTERS:
        marks = unicodedata.normalize("NFD", letter)[1:]
        assert all(mark in folding._COMPOSING_TAILORED for mark in marks), letter


def test_every_character_says_which_ascii_its_exact_form_may_hold():
    # `cannot_hold` trusts `_ascii_of` for the characters of a text that is not its own
    # NFKC: a character with no decomposition and no other lowercase is its own exact form.
    for code in range(0x80, sys.maxunicode + 1):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF or not (
            unicodedata.decomposition(char) or char.lower() != char
        ):
            continue
        held = {c for c in exact_form(char) if c.isascii()}
        assert held <= folding._ascii_of(char), (hex(code), exact_form(char))


def test_a_body_with_fullwidth_punctuation_is_told_apart_without_its_nfkc():
    body = "部署前先跑 smoke test，然后在 release 分支上打标签：v2。" * 20
    assert not unicodedata.is_normalized("NFKC", body)
    assert cannot_hold(body, caseless_ascii("client_job"))  # no character gives "_" or "j"
    # "，" gives "," and "：" gives ":": a token holding one is checked in the exact form
    assert not cannot_hold(body, caseless_ascii("release:v2"))
    assert "release:v2" not in exact_form(body)  # (it is not there: the check says so)
    assert not cannot_hold(body, caseless_ascii("smoke test"))  # written as such


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.one_of(st.sampled_from(_HOLDERS), st.characters()), max_size=24))
def test_nfkc_by_its_short_way_is_nfkc(text: str) -> None:
    assert folding.nfkc(text) == unicodedata.normalize("NFKC", text)


def test_a_chinese_text_with_fullwidth_punctuation_takes_nfkc_s_short_way():
    chinese = "部署由 client 负责，job 每周二执行（周末不）：负责人是张三。"
    assert not unicodedata.is_normalized("NFKC", chinese)
    assert folding.nfkc(chinese) == unicodedata.normalize("NFKC", chinese)
    rewritten = chinese.replace("，", ",").replace("（", "(").replace("）", ")").replace("：", ":")
    assert folding.nfkc(chinese) == rewritten  # each rewritten where it stands, nothing else
    # Still not its own NFKC once rewritten (kana and a halfwidth sound mark): the long way.
    assert folding.nfkc("ｶﾞ，") == "ガ,"


def test_dates_written_out_add_their_iso_form():
    assert recall_tokens("what was I up to in May 2025?")[-1] == "2025-05"
    assert recall_tokens("what happened on 6 April 2025")[-2:] == ["2025-04", "2025-04-06"]
    assert "2025-04-06" in recall_tokens("le 6 avril 2025")
    assert "2025-05-06" in recall_tokens("2025年5月6日に何があった")
    assert not any("-" in t for t in recall_tokens("may I deploy on friday, 2025 is over"))


def test_a_month_asked_about_finds_the_memories_dated_in_it():
    sessions = [
        memory(f"s{day}", f"Session 2025-{month:02d}-{day:02d}", "Notes of the day.")
        for month, day in ((4, 12), (5, 3), (5, 9), (6, 1), (11, 5))
    ]
    assert set(recall([*FILLER, *sessions], "what did I do in May 2025?")[:2]) == {"s3", "s9"}


def test_spec_tokens_are_unchanged():
    assert query_tokens("getUserName") == ["getusername"]
    assert recall_tokens("deploy freeze") == query_tokens("deploy freeze")
    assert recall_tokens("部署手順") == query_tokens("部署手順")


def test_thai_runs_yield_code_point_trigrams():
    tokens = recall_tokens("ฐานข้อมูล")
    assert tokens[0] == "ฐานข้อมูล"  # the exact token, kept
    assert {"ฐาน", "านข", "ข้อ", "มูล"} <= set(tokens)


def test_a_thai_query_finds_a_thai_memory_without_spaces():
    docs = [
        *FILLER,
        memory("backup", "การสำรองข้อมูล", "ระบบสำรองข้อมูลฐานข้อมูลทุกคืนเวลาตีสอง"),
        memory("deploy", "การ deploy", "ต้องได้รับการอนุมัติก่อน deploy"),
    ]
    assert recall(docs, "สำรองข้อมูลทุกคืนไหม")[0] == "backup"


def test_thai_function_words_do_not_outweigh_the_names_beside_them():
    # Thai is a minority here, so "ตอนนี้" (now), "คืออะไร" (what is) and
    # "ไม่ได้แล้ว" (no longer) look rare: they must not outrank "WMS Overview".
    thai_notes = [
        memory(f"th-{i}", f"บันทึกคลัง {i}", f"ตอนนี้ทีม {i} ยังไม่ได้ตัดสินใจว่าคืออะไร แล้วต้องทำอะไรต่อ")
        for i in range(2)
    ]
    docs = [
        *FILLER,
        *thai_notes,
        memory("dash", "Grafana dashboard", "The WMS Overview board: warehouse metrics per site."),
    ]
    query = "ลิงก์แดชบอร์ด WMS Overview ตอนนี้คืออะไร ของเก่าเปิดไม่ได้แล้ว"
    assert recall(docs, query)[0] == "dash"


def test_function_words_are_listed_as_queries_are_normalized():
    # A listed word a query can never produce would be left in silently.
    assert {word for word in QUERY_STOPWORDS if normalize(word) != word} == set()
    assert set(recall_tokens("ทำไมถึงทำไม่ได้")) & QUERY_STOPWORDS  # NFKC splits its sara am


def test_a_tool_named_like_a_function_word_is_searched_for():
    # Polish "jest" ("is") was a question word: "do we still use jest" searched for
    # "still use", and a new note about Jest found no earlier one to link to.
    docs = [*FILLER, memory("jest", "Test runner", "We use Jest for the unit tests.")]
    assert recall(docs, "do we still use jest")[0] == "jest"
    # ... while in a Polish question it is the "is" it was listed for.
    assert "jest" not in recall(docs, "jaka jest prowizja adyena")


def test_a_function_word_of_another_language_is_a_word_in_an_english_question():
    assert function_words(recall_tokens("do we still use jest")).said == {"jest"}
    assert function_words(recall_tokens("where does Sinéad's son live")).said == {"son"}
    # A question of that language, or with no English to go by: a function word still.
    assert not function_words(recall_tokens("jaka jest prowizja adyena")).said
    assert not function_words(recall_tokens("cuál es el puerto y son varios")).said
    assert not function_words(recall_tokens("jest")).said
    # English words in another language's question, quoted from a message, leave its
    # own function words alone.
    hindi = "crash: One of these should be specified — कैसे ठीक करें?"
    assert not function_words(recall_tokens(hindi)).said


def test_a_hebrew_or_arabic_word_is_found_without_its_clitic():
    docs = [
        *FILLER,
        memory("pentest", "בדיקת חדירות שנתית", "RedOak בודקים את auth-service."),
        memory("backup", "גיבוי שרתים", "גיבוי לילי של Postgres."),
        memory("server", "الخادم الجديد", "ننقل الخادم إلى GKE."),
    ]
    # "the penetration (test)" and "and the server": no memory writes them whole.
    assert recall(docs, "מתי החדירות")[0] == "pentest"
    assert recall(docs, "متى والخادم")[0] == "server"
    assert without_clitic("החדירות") == "חדירות"
    assert without_clitic("والخادم") == "خادم"
    assert without_clitic("deploy") is None


def test_light_stem():
    assert light_stem("deployments") == "deployment"
    assert light_stem("queries") == "quer"
    assert light_stem("api") == "api"
    assert light_stem("πιστοποιητικού") == "πιστοποιητικ"
    assert light_stem("部署") == "部署"


# -- ranking -----------------------------------------------------------------


def test_rare_words_outweigh_common_ones():
    docs = [
        *FILLER,
        memory("pool", "Postgres pool", "The connection pool was exhausted."),
    ]
    assert recall(docs, "what did the team say about the connection pool")[0] == "pool"


def test_silent_when_only_common_words_match():
    docs = [*FILLER, memory("pool", "Postgres pool", "The connection pool was exhausted.")]
    assert recall(docs, "what did I say about the weather") == []
    assert recall(docs, "what did the team say about the weather") == []
    assert recall(docs, "postgres pool") == ["pool"]


def test_a_memory_about_a_rare_name_answers_a_question_in_another_language():
    atlas = memory("atlas", "Atlas Reisen: Vertrag", "Der Vertrag läuft bis März 2027.")
    mention = memory("log", "Wochennotiz", "Kurz mit Atlas Reisen telefoniert, alles gut.")
    query = "kiedy kończy się umowa z Atlas i kto negocjuje nowe warunki?"
    # Polish, about a German memory: only the name matches, a small share of the question.
    assert recall([*FILLER, atlas], query) == ["atlas"]
    # A name met only in passing, in a body, does not answer it.
    assert recall([*FILLER, mention], query) == []


def test_a_word_found_only_inside_longer_words_does_not_answer():
    docs = [*FILLER, memory("club", "Running club", "Training in the Bürgerpark on Wednesdays.")]
    assert recall(docs, "where did I park") == []
    assert recall(docs, "running club training") == ["club"]


def test_recency_breaks_ties_then_input_order():
    same = "Deploy freeze on Fridays"
    docs = [memory("old", same, mtime=1_000), memory("new", same, mtime=2_000)]
    assert recall([*FILLER, *docs], "deploy freeze")[:2] == ["new", "old"]
    docs = [memory("first", same), memory("second", same)]
    assert recall([*FILLER, *docs], "deploy freeze")[:2] == ["first", "second"]


def test_a_newer_memory_wins_a_near_tie():
    docs = [
        *FILLER,
        memory("mysql", "Database: MySQL", "The orders database is MySQL.", mtime=1_000),
        memory(
            "postgres",
            "Database: Postgres now",
            "The orders database moved from MySQL to Postgres.",
            mtime=2_000,
        ),
    ]
    assert recall(docs, "which database for orders")[:2] == ["postgres", "mysql"]


def test_every_match_without_a_limit_and_a_model_pick_scored_on_the_same_scale():
    docs = [memory(f"d{i:03}", f"Deploy note {i}", "How we deploy.", mtime=i) for i in range(200)]
    snapshot = CorpusView.of(docs)
    spec = RANKERS["bm25f"]
    tokens = spec.tokenize("deploy note")
    everything = spec.rank(snapshot, tokens, lambda _doc: True)
    assert len(everything) == 200  # not just the exactly scored few of a limited call
    score = {s.document.path: s.score for s in everything}

    shortlist = build_shortlist(snapshot, "deploy note", ranker=spec.rank, tokenizer=spec.tokenize)
    in_top = {s.document.path for s in shortlist.ranked}
    outside = [doc for doc in shortlist.candidates if doc.path not in in_top]
    # A recent memory the model picks from past the lexical top 180 gets the
    # ranker's score, not the reference scorer's (4 + 4 here): the phase's scores share a scale.
    assert outside and all(shortlist.score_of(doc) == score[doc.path] for doc in outside)
    assert shortlist.score_of(memory("other", "Unrelated")) == 0


def test_never_ranked_by_type():
    body = "Review every pull request before merging."
    for types in (("user", "feedback"), ("feedback", "user")):
        docs = [
            memory("a", "Code review", body, type_=types[0]),
            memory("b", "Code review", body, type_=types[1]),
        ]
        # "feedback" and "rule" are type keywords of docs/ranking.md; here they weigh nothing.
        assert recall([*FILLER, *docs], "code review feedback rule")[:2] == ["a", "b"]


def test_ranks_through_the_index_without_scanning(monkeypatch):
    docs = [*FILLER, memory("cfg", "Settings", "See `server/ranking/index.py` and getUserName.")]
    index = Bm25Index.of(docs)
    looked_up: list[str] = []
    original = Bm25Index.words_containing

    def spy(self: Bm25Index, token: str) -> list[str]:
        looked_up.append(token)
        return original(self, token)

    monkeypatch.setattr(Bm25Index, "words_containing", spy)
    ranked = Bm25Ranker().rank(index, recall_tokens("server/ranking/index.py getUserName"))
    assert ranked[0].document.relative_path == "cfg.md"
    # Shapes the vocabulary cannot hold (a path, a snake_case whole) are never looked up in it.
    assert all(ch.isalnum() for token in looked_up for ch in token)


def test_a_snapshot_the_catalog_moved_on_from_gets_the_same_answers(corpora):
    corpus = corpora["coding"]
    live = corpus.snapshot
    index = Bm25Index.of(live.documents)
    stale = CorpusView(live.documents, live.by_recency, live_index=index, live_index_version=-1)
    assert stale.index(Bm25Index) is None
    spec = RANKERS["bm25f"]
    for case in corpus.cases:
        tokens = spec.tokenize(case.query)
        assert spec.rank(stale, tokens, lambda _doc: True) == spec.rank(
            live, tokens, lambda _doc: True
        ), case.query


@pytest.fixture(scope="module")
def corpora() -> dict[str, EvalCorpus]:
    return {name: load_corpus(EVAL / f"{name}.json") for name in CORPORA}


@pytest.mark.parametrize("unit", ["x", "aB", "a-", "getUserName", "ก", "1", "漢字", "6 may "])
def test_a_huge_query_costs_linear_time(unit):
    """A 32k-letter query (the protocol's longest) once took 20 s to tokenize:
    two identifier patterns backtracked quadratically. Compared by ratio, never
    by absolute time: eight times the text must cost far less than 64 times."""
    import time

    def cost(n: int) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            recall(FILLER, (unit * n)[:n])
            best = min(best, time.perf_counter() - start)
        return best

    assert cost(32_768) < 24 * cost(4_096)


def test_every_word_list_is_a_data_file_that_says_where_it_comes_from():
    from importlib import resources

    data = resources.files("memory_recall.server.ranking.bm25f").joinpath("data")
    files = sorted(f.name for f in data.iterdir() if f.name.endswith(".txt"))
    assert files == [
        "clitics.txt", "months.txt", "stopwords.txt", "stopwords_thai.txt", "two_letter_words.txt"
    ]  # fmt: skip
    for name in files:
        text = data.joinpath(name).read_text(encoding="utf-8")
        header = [line for line in text.splitlines() if line.startswith("#")]
        assert header and text.startswith("#"), name
        assert "by hand" in " ".join(header), f"{name} says where its words come from"
        assert [line for line in text.splitlines() if line and not line.startswith("#")], name


def test_the_spec_tokens_module_holds_spec_tokens_only():
    import memory_recall.server.tokens as spec_tokens

    public = {name for name in vars(spec_tokens) if not name.startswith("_")}
    assert not public & {"recall_tokens", "acronym_tokens", "date_tokens", "ACRONYM_MARK"}


def test_whole_bodies_beat_the_window_and_plain_bm25_on_long_memories():
    """Issue 14's bar: on long memories (evidence mostly past character 1,200), bm25f with
    whole bodies finds more than its window-only self and a plain whole-body BM25."""
    corpus = load_corpus(EVAL / "longform.json")
    recall = {
        name: evaluate(corpus, RANKERS[name]).recall_at5
        for name in ("bm25f", "bm25f-window", "bm25")
    }
    assert recall["bm25f"] > recall["bm25"] > recall["bm25f-window"], recall
