"""bm25f matches how people type (docs/ranking.md, "Normalisation"): the exact form with
its language's casing, the folded form beside it, exact spellings first, and what a
summary too broad to be one weighs."""

from __future__ import annotations

import pytest
from memory_recall.server.ranking.bm25f.folding import (
    FOLD_MARK,
    exact_form,
    fold,
    fold_text,
    with_folded,
)
from memory_recall.server.ranking.bm25f.terms import document_terms, whole_body
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.view import CorpusView

from tests.conftest import make_doc


@pytest.mark.parametrize(
    ("written", "folded"),
    [
        ("ação", "acao"),
        ("straße", "strasse"),
        ("ελλάδα", "ελλαδα"),
        ("ёлка", "елка"),
        ("đường", "duong"),
        ("łódź", "lodz"),
        ("sœur", "soeur"),
        ("kış", "kis"),
        ("i̇stanbul", "istanbul"),  # İ lowercased outside Turkish text: i + combining dot
        ("資料庫", "资料库"),  # Traditional → Simplified (OpenCC's table)
        ("شُكْرًا", "شكرا"),  # Arabic vowel points
        ("שָׁלוֹם", "שלום"),  # Hebrew points
        ("が", "が"),  # kana keep their voicing mark
        ("한국어", "한국어"),  # Hangul keeps its syllables
        ("deploy", "deploy"),
    ],
)
def test_the_folded_form_drops_what_a_keyboard_makes_optional(written, folded):
    assert fold(written) == folded
    assert fold_text(f"{written} x") == f"{folded} x"


def test_the_exact_form_cases_turkish_and_lithuanian_text_by_their_rules():
    assert exact_form("KIŞ LASTİKLERİ") == "kış lastikleri"  # Turkish: I → ı, İ → i
    assert exact_form("ISTANBUL") == "istanbul"  # no Turkish letter: the usual casing
    assert exact_form("Ì ėjimas") == "i̇̀ ėjimas"  # Lithuanian: the dot stays under an accent
    assert exact_form("Ｋａｆｋａ") == "kafka"  # width: NFKC


def test_folded_terms_are_marked_beside_the_exact_ones():
    terms = with_folded({"ação": 2, "deploy": 1, "\x01ci": 1})
    assert terms == {"ação": 2, "deploy": 1, "\x01ci": 1, FOLD_MARK + "acao": 2}


def ranked(docs, query):
    spec = RANKERS["bm25f"]
    return [
        s.document.path
        for s in spec.rank(CorpusView.of(docs), spec.tokenize(query), lambda d: True)
    ]


def test_a_query_typed_without_accents_finds_the_accented_memory_and_the_exact_one_first():
    accented = make_doc("Implantação em produção", "às terças", path="/m/accented.md")
    plain = make_doc("implantacao em producao", "copied from a terminal", path="/m/plain.md")
    others = [make_doc(f"note {i}", f"topic {i}", path=f"/m/n{i}.md") for i in range(6)]
    assert ranked([accented, *others], "implantacao producao") == ["/m/accented.md"]
    assert ranked([accented, plain, *others], "implantacao producao")[0] == "/m/plain.md"
    assert ranked([accented, plain, *others], "implantação produção")[0] == "/m/accented.md"


@pytest.mark.parametrize(
    ("memory", "query"),
    [
        (("Kış lastikleri", "şirket araçları"), "KIŞ LASTİKLERİ"),
        (("İstanbul ofisi", "giriş kartları"), "ISTANBUL OFISI"),
        (("資料庫連線逾時", "連線池耗盡"), "资料库连线逾时"),
        (("缓存失效策略", "过期时间"), "緩存失效策略"),
        (("Văn phòng Hà Nội", "tầng tám"), "van phong ha noi"),
        (("Straße der Pariser Kommune", "Büro"), "STRASSE"),
    ],
)
def test_casing_script_and_accents_do_not_hide_a_memory(memory, query):
    target = make_doc(*memory, path="/m/target.md")
    others = [make_doc(f"note {i}", f"topic {i}", path=f"/m/n{i}.md") for i in range(6)]
    assert ranked([target, *others], query)[:1] == ["/m/target.md"]


def test_a_summary_too_broad_to_be_one_is_weighed_as_body_text():
    words = " ".join(f"keyword{i}" for i in range(40))
    stuffed = make_doc("Notes", words, path="/m/stuffed.md")
    (_title, description, body), length = document_terms(stuffed, whole_body)
    assert "keyword7" not in description and body["keyword7"] == 1
    assert length == len(stuffed.body) + len(words.lower())
    honest = make_doc("Release train", "keyword7 ships on tuesdays", path="/m/honest.md")
    assert "keyword7" in document_terms(honest, whole_body).fields[1]
    others = [make_doc(f"note {i}", f"topic {i}", path=f"/m/n{i}.md") for i in range(6)]
    assert ranked([stuffed, honest, *others], "keyword7 tuesdays")[0] == "/m/honest.md"
