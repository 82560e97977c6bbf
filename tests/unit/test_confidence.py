"""The fast phase's confidence (docs/ranking.md, "Confidence and silence"): the gate's
rules, the shipped calibration's provenance, the evidence a ranking gives, the blind
split, and what the fast phase delivers on the wire."""

from __future__ import annotations

import json

from memory_recall.protocol.limits import REFINED_LIMIT
from memory_recall.server.dev.calibration import DATA_PATH, Sample, fit_logistic, silence_frontier
from memory_recall.server.dev.evaluation import BLIND_SHARE, split_of
from memory_recall.server.ranking.confidence.calibration import (
    Calibration,
    Model,
    choose,
    default_calibration,
)
from memory_recall.server.ranking.confidence.evidence import DocEvidence, QueryEvidence
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import SENTENCE_CONFIDENCE, RecallQuery
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.service import RecallRequest, lexical_phases

from tests.conftest import beyond_small_folders, make_doc

FLAT = Model(0.0, {})


def gate(t1: float, t2: float, doubted: float = 0.0) -> Calibration:
    return Calibration(FLAT, FLAT, t1, t2, doubted)


def test_the_gate_delivers_none_one_or_two_by_confidence():
    g = gate(0.4, 0.5)
    assert g.gate([]) == 0
    assert g.gate([0.3, 0.9]) == 0  # the second never goes without the first
    assert g.gate([0.9, 0.2]) == 1
    assert g.gate([0.9, 0.6]) == 2
    assert g.gate([0.9]) == 1


def test_a_doubted_first_brings_the_second_with_it():
    g = gate(0.2, 0.8, doubted=0.5)
    assert g.gate([0.3, 0.1]) == 2  # the answer is as likely the second
    assert g.gate([0.6, 0.1]) == 1


def test_a_logistic_fit_learns_a_separable_figure():
    rows = [{"x": x / 10} for x in range(-20, 21)]
    labels = [r["x"] > 0 for r in rows]
    model = fit_logistic(rows, labels)
    assert model.probability({"x": 1.5}) > 0.8 > 0.2 > model.probability({"x": -1.5})


def test_the_shipped_calibration_says_where_it_came_from():
    data = json.loads(DATA_PATH.read_text("utf-8"))
    assert "tuning split" in data["about"] and "blind" in data["about"]
    assert {"tune", "blind", "frontier"} <= set(data["figures"])
    calibration = default_calibration()
    assert 0 <= calibration.first_threshold <= 1 and calibration.first.weights


def test_the_blind_split_is_stable_and_about_a_third():
    ids = [f"case-{i}" for i in range(2000)]
    blind = [i for i in ids if split_of("corpus", i) == "blind"]
    assert abs(len(blind) / len(ids) - BLIND_SHARE) < 0.03
    assert blind == [i for i in ids if split_of("corpus", i) == "blind"]


DOCS = [
    make_doc(
        "Deploy freeze",
        "no deploys on fridays",
        "Release train leaves Tuesday.",
        path="/m/freeze.md",
    ),
    make_doc(
        "Postgres pool", "connection pool exhausted", "Raise pool size to 40.", path="/m/pool.md"
    ),
    *(make_doc(f"note {i}", f"topic {i}", f"word{i} " * 5, path=f"/m/n{i}.md") for i in range(8)),
]


def test_the_ranking_gives_evidence_on_its_best_memories():
    spec = RANKERS["bm25f"]
    query = RecallQuery.build(
        CorpusView.of(DOCS), "deploy freeze fridays", ranker=spec.rank, tokenizer=spec.tokenize
    )
    top = query.top(2)
    evidence = query.ranking.evidence(top)
    first = evidence.docs[0]
    assert top[0].document.path == "/m/freeze.md"
    assert first.coverage > 0.9 and first.summary > 0.9 and first.terms == evidence.content_terms
    assert 0 < first.focus <= 1 and first.proximity > 0.9 and evidence.lack == 0


def test_a_question_nothing_answers_gets_no_fast_phase_and_a_clear_one_gets_a_confidence():
    spec = RANKERS["bm25f"]
    snapshot = CorpusView.of(DOCS)
    fast, _ = lexical_phases(snapshot, RecallRequest(1, "deploy freeze on fridays"), spec)
    assert fast is not None and fast.docs[0].path == "/m/freeze.md"
    assert all(0 < d.confidence <= 1 for d in fast.docs)
    silent, refined = lexical_phases(snapshot, RecallRequest(2, "zyxqv plorbix"), spec)
    assert silent is None and not refined.docs


def test_the_spec_ranker_keeps_its_top_two_without_a_confidence():
    spec = RANKERS["spec"]
    fast, _ = lexical_phases(CorpusView.of(DOCS), RecallRequest(1, "deploy pool"), spec)
    assert fast is not None and len(fast.docs) == 2
    assert all(d.confidence is None for d in fast.docs)


def test_choose_without_evidence_passes_the_top_through():
    top = ["a", "b"]
    assert choose(top, None) == (["a", "b"], [None, None])
    evidence = QueryEvidence(
        2, 0.0, 2, 10, (3000, 100), (DocEvidence(3000, 1.0, 1.0, 2), DocEvidence(100, 0.1, 0.0, 1))
    )
    chosen, confidences = choose(top, lambda _top: evidence, gate(0.5, 0.99))
    assert chosen == ["a"] and confidences == [0.5]  # a flat model: 0.5 each


ZEBRA = beyond_small_folders(
    [
        make_doc(title, description, f"{description.capitalize()}.", path=f"/z/{name}.md")
        for name, title, description in (
            ("freeze", "Zebra deploy freeze", "zebra deploys freeze on Fridays"),
            ("pipeline", "Zebra deploy pipeline", "the zebra deploy runs through the pipeline"),
            ("owners", "Zebra service owners", "who owns the zebra service deploys"),
            ("rollback", "Zebra rollback", "how to roll back a zebra deploy"),
            ("canary", "Zebra canary hosts", "zebra deploys hit the canary hosts first"),
            ("dashboards", "Zebra dashboards", "where the zebra service graphs are"),
        )
    ]
)


def zebra_query(text: str) -> RecallQuery:
    spec = RANKERS["bm25f"]
    return RecallQuery.build(CorpusView.of(ZEBRA), text, ranker=spec.rank, tokenizer=spec.tokenize)


def test_a_question_with_instructions_around_it_is_answered_by_its_question():
    # The real agents' tier prompt: "look", "files", "answer" are in no memory and "first"
    # matches the canary note by chance, so the whole prompt leaves the gate silent.
    query = zebra_query("How do we deploy the zebra service? Look at the files first, then answer.")
    assert query._chosen()[0] == []
    fast, confidence = query.fast()
    alone, _ = zebra_query("How do we deploy the zebra service?").fast()
    assert [s.document.path for s in fast] == [s.document.path for s in alone] != []
    assert max(confidence.values()) >= SENTENCE_CONFIDENCE
    whole_top = {s.document.path for s in query.top(REFINED_LIMIT)}
    assert {s.document.path for s in fast} <= whole_top  # the whole prompt agrees


def test_a_memory_only_two_sentences_together_match_is_not_sent_unasked():
    docs = [
        make_doc(title, description, body, path=path)
        for title, description, body, path in (
            ("Zebra service owners", "who owns the zebra service",
             "Priya owns the zebra service.", "/owners.md"),
            ("Zebra service runbook", "restarting the zebra service",
             "Restart the zebra service with make restart.", "/runbook.md"),
            ("Zebra service alerts", "zebra service pages on-call",
             "The zebra service pages on-call.", "/alerts.md"),
            ("Diff review", "every diff gets two reviewers", "Every diff gets two reviewers.",
             "/review.md"),
            ("Diff size", "keep each diff under 400 lines", "Keep each diff small.", "/size.md"),
            ("Diff tool", "show the diff with delta", "Show the diff with delta.", "/tool.md"),
            ("Zebra diff owners", "who owns zebra diff checks",
             "The zebra diff checks are owned by the build team.", "/chimera.md"),
        )
    ]  # fmt: skip
    docs += [
        make_doc(f"note {i}", f"topic {i}", f"word{i} " * 5, path=f"/n{i}.md") for i in range(6)
    ]
    spec = RANKERS["bm25f"]

    def query(text: str) -> RecallQuery:
        return RecallQuery.build(
            CorpusView.of(docs), text, ranker=spec.rank, tokenizer=spec.tokenize
        )

    two = query("Who owns the zebra service? Show me the diff.")
    assert [s.document.path for s in two._chosen()[0]] == ["/owners.md", "/chimera.md"]
    fast, confidence = two.fast()
    assert [s.document.path for s in fast] == ["/owners.md"] and list(confidence) == ["/owners.md"]
    # The same words as one sentence: nothing to tell them apart, both are sent.
    one = query("who owns the zebra service show me the diff")
    assert [s.document.path for s in one.fast()[0]] == ["/owners.md", "/chimera.md"]


def test_sentences_are_asked_only_when_there_are_several_and_may_stay_silent():
    assert zebra_query("zyxqv plorbix zebra")._sentence_queries == ([], False)
    assert zebra_query("Zyxqv plorbix? Blorft quux, then answer.").fast() == ([], {})
    many = zebra_query(" ".join(f"Sentence word{i}." for i in range(10)))
    assert [q.text for q in many._sentence_queries[0]] == [
        "Sentence word0.", "Sentence word1.", "Sentence word8.", "Sentence word9.",
    ]  # fmt: skip


PEOPLE = [
    make_doc(
        "Marcus Lindqvist",
        "platform lead",
        "Marcus runs the platform team from Malmö.",
        path="/m/marcus.md",
    ),
    make_doc(
        "Billing API",
        "owner and port",
        "The billing API listens on port 8443.",
        path="/m/billing.md",
    ),
    make_doc("Phone numbers", "who to call", "Call the front desk: 555 0100.", path="/m/desk.md"),
    make_doc("陈静", "QA", "陈静负责 E2E 测试。", path="/m/chen.md"),
    *(make_doc(f"note {i}", f"topic {i}", f"word{i} " * 5, path=f"/m/n{i}.md") for i in range(8)),
]


def evidence_for(question: str, path: str) -> QueryEvidence:
    """The ranking's evidence about the memory at `path` for `question`."""
    spec = RANKERS["bm25f"]
    query = RecallQuery.build(
        CorpusView.of(PEOPLE), question, ranker=spec.rank, tokenizer=spec.tokenize
    )
    found = [s for s in query.top(5) if s.document.path == path]
    assert found, f"{path} is not among the best for {question!r}"
    return query.ranking.evidence(found)


def test_a_memory_about_the_subject_alone_holds_none_of_the_rest_of_the_question():
    subject_only = evidence_for("Marcus phone number", "/m/marcus.md").docs[0]
    assert subject_only.summary > 0 and subject_only.rest == 0.0
    assert subject_only.unheld == 2 / 3  # "phone" and "number" are not in it
    answered = evidence_for("which city does Marcus run the platform team from", "/m/marcus.md")
    assert answered.docs[0].rest > 0.5 and answered.docs[0].unheld < subject_only.unheld


def test_words_no_memory_holds_count_in_every_script():
    asked = evidence_for("陈静的手机号是多少", "/m/chen.md")
    assert asked.unfound > 0 and asked.lack == 0  # 手机, 机号: in no memory, not in `lack`
    assert evidence_for("billing API port", "/m/billing.md").unfound == 0


def test_more_muting_allowed_never_buys_less_silence():
    def sample(i: int, answerable: bool, coverage: float) -> Sample:
        doc = DocEvidence(1000, coverage, coverage, 1)
        q = QueryEvidence(2, 0.0, 1, 10, (1000,), (doc,))
        return Sample("c", str(i), answerable, q, (answerable,), "tune")

    # Coverage separates them only in part: silence costs answerable questions.
    samples = [sample(i, True, 0.2 + i / 50) for i in range(40)]
    samples += [sample(100 + i, False, i / 40) for i in range(30)]
    fitted = Calibration(Model(-2.0, {"coverage": 5.0}), FLAT, 0.0, 1.0)
    rows = silence_frontier(samples, fitted)
    assert [r["mutedMax"] for r in rows] == [0.03, 0.05, 0.10, 0.20]
    silences = [r["tune"]["fastSilence"] for r in rows]
    assert silences == sorted(silences) and silences[-1] > silences[0]
    assert all(r["tune"]["muted"] <= r["mutedMax"] for r in rows)
