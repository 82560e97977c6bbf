"""What kind of value a question asks for, and whether a memory holds one
(server/ranking/confidence/values.py; docs/ranking.md, "A value the question asks for")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memory_recall.server.ranking.confidence.values import (
    CONTACT,
    NUMBER,
    TIME,
    asked,
    holds,
)
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import RecallQuery
from memory_recall.server.ranking.view import CorpusView

from tests.conftest import make_doc


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("how many partitions does the orders topic have", {NUMBER}),
        ("which Grafana version are we running", {NUMBER}),
        ("Сколько лет Дмитрию Орлову?", {NUMBER}),
        ("¿Cuántos camiones tiene la flota?", {NUMBER}),
        ("Wie viele Pods laufen in Produktion?", {NUMBER}),
        ("面试分几轮", {NUMBER}),
        ("交通費はいくらだった？", {NUMBER}),
        ("ıspanaklı börek kaç dakika pişirilir?", {NUMBER}),
        ("when is the release freeze", {TIME}),
        ("林薇的生日是哪天？", {TIME}),
        ("渡辺さんの入社日はいつ？", {TIME}),
        ("Wann hat Jonas Geburtstag?", {TIME}),
        ("what's Anna's phone number", {CONTACT}),
        ("what's Kwame's email address", {CONTACT}),
        ("Quel est le numéro de téléphone de Camille ?", {CONTACT}),
        ("ما هو رقم هاتف عمر حداد؟", {CONTACT}),
    ],
)
def test_a_question_that_asks_for_a_value_says_which_kind(question, kinds):
    assert asked(question) == kinds


@pytest.mark.parametrize(
    "question",
    [
        "how do we deploy the zebra service",
        "port the billing client to Rust",  # "port" the verb
        "how do we send email notifications",  # e-mail the topic
        "ModuleNotFoundError when running pytest",  # "when" the conjunction
        "en cuanto a la base de datos, ¿qué motor usamos?",  # "as for"
        "quantum-safe key exchange in the gateway",
        "几乎所有服务都用 Postgres 吗",  # 几乎: "almost"
        "いつも使うブランチ名は？",  # いつも: "always"
    ],
)
def test_words_with_another_sense_ask_for_nothing(question):
    assert asked(question) == frozenset()


def test_a_number_the_question_gives_is_not_an_answer():
    question = "how much disk does the Postgres 16 instance have"
    assert not holds(NUMBER, "Database: now Postgres 16, on Cloud SQL.", question)
    assert holds(NUMBER, "Postgres 16 with 500 GB of disk.", question)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (NUMBER, "The worker runs three replicas."),
        (NUMBER, "面试分三轮：技术笔试、系统设计和团队面谈。"),
        (NUMBER, "Mỗi nhân viên có mười hai ngày nghỉ phép mỗi năm."),
        (TIME, "Aralık ayında tüm araçlara kış lastiği takılır."),
        (TIME, "Deploys happen on Tuesdays after the review."),
        (TIME, "데이터베이스는 매일 새벽 세 시에 백업됩니다."),
        (CONTACT, "Reach her on +49 30 1234 5678 after six."),
        (CONTACT, "Mail kwame.mensah@example.org for the deck."),
    ],
)
def test_a_value_is_found_in_its_forms(kind, text):
    assert holds(kind, text)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (NUMBER, "Il worker gira con tre repliche."),
        (NUMBER, "De worker draait met drie replica's."),
        (NUMBER, "Ο worker τρέχει με τρία αντίγραφα."),
        (TIME, "Przegląd tras odbywa się w lipcu."),
        (TIME, "Il rilascio è sempre di giovedì."),
    ],
)
def test_number_and_time_words_of_more_languages_are_values(kind, text):
    assert holds(kind, text)


@pytest.mark.parametrize(
    "text",
    [
        "Anna est une amie de Marc.",  # an article, not a number
        "Carmen es una profesora muy paciente.",
        "Jan is een collega van Marcus.",
        "Usa o binário em /usr/bin por padrão.",
    ],
)
def test_an_article_or_a_word_that_merely_contains_a_number_word_is_no_number(text):
    assert not holds(NUMBER, text) and not holds(TIME, text)


def test_a_contact_needs_a_whole_number_or_an_address():
    assert not holds(CONTACT, "Anna is my sister; she lives in Leipzig since 2019.")
    assert not holds(CONTACT, "Write to the #billing channel, not by e-mail.")
    assert not holds(CONTACT, "Session 2024-03-02: Anna called; next visit 14.06.2025.")


@pytest.mark.parametrize(
    "text",
    [
        # An identifier, a date before a time, an address, code: digits enough, no phone.
        "Postmortem INC-2026-021: Rotterdam called Sam's phone directly.",
        "Reviewed by Marcus on 2026-04-17 07:40 UTC.",
        "The relay listens on 10.20.30.140, port 8443.",
        "`buildNumber` = `YYMMDDNN` (e.g. `26040201`).",
        "Ticket #4411-2290 is closed; see /runs/2026/0417/12.",
        "The freeze ran 2026-04-13 - 2026-04-15 and 14.06.2025 - 16.06.2025.",
    ],
)
def test_numbers_of_other_things_are_no_phone(text):
    assert not holds(CONTACT, text)


@pytest.mark.parametrize(
    "text",
    [
        "Marcus: +31 20 794 1234 (mobile), call after 09:00.",
        "Her number is (030) 555-0123-4.",
        "Phone 0612345678, texts only.",
        "Call 555-123-4567 for the on-call desk.",
        "Дежурный: +7 916 555-12-34.",
        "Camille : 06.12.34.56.78 ou +33 6 12 34 56 78.",
    ],
)
def test_a_phone_number_as_people_write_it_is_one(text):
    assert holds(CONTACT, text)


@given(st.text())
def test_any_text_is_read_without_error(text):
    kinds = asked(text)
    assert kinds <= {NUMBER, TIME, CONTACT}
    for kind in (NUMBER, TIME, CONTACT):
        holds(kind, text, text)


DOCS = [
    make_doc(
        "Sister Anna",
        "Anna, my older sister",
        "Anna lives in Leipzig and teaches chemistry at a school there.",
        path="/m/anna.md",
    ),
    make_doc(
        "Dentist",
        "Dr. Okafor's practice",
        "The dentist is Dr. Okafor; her phone number is 030 555 01 234.",
        path="/m/dentist.md",
    ),
]


def evidence_of(question: str, path: str):
    spec = RANKERS["bm25f"]
    query = RecallQuery.build(
        CorpusView.of(DOCS), question, ranker=spec.rank, tokenizer=spec.tokenize
    )
    found = [s for s in query.top(2) if s.document.path == path]
    assert found, f"{path} is not among the best for {question!r}"
    return query.evidence(found).docs[0]


def test_the_fast_phase_sees_a_memory_that_lacks_the_value_asked_for():
    lacking = evidence_of("what's Anna's phone number", "/m/anna.md")
    assert lacking.contactless == 1.0 and lacking.valueless == 0.0
    assert evidence_of("what's Anna's phone number", "/m/dentist.md").contactless == 0.0
    unasked = evidence_of("where does Anna live", "/m/anna.md")
    assert unasked.contactless == unasked.valueless == 0.0
    no_date = evidence_of("when is Anna's birthday", "/m/anna.md")
    assert no_date.valueless == 1.0 and no_date.contactless == 0.0
