"""A statement is scanned for negation, change and value phrases only when it holds what
one of them opens with (facts/lexicon.py, `Openings`): the same terms as scanning every
statement, in every script and casing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import regex
from memory_recall.server.facts import lexicon, terms
from memory_recall.server.facts.statements import split_statements

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# Every case-insensitive letter pair the phrase patterns (simple case folding) can take
# for each other is found among the cased characters.
_CASED = [
    c
    for c in map(chr, range(sys.maxunicode + 1))
    if not 0xD800 <= ord(c) < 0xE000 and (c.lower() != c or c.upper() != c or c.casefold() != c)
]
_RUN_CHAR = regex.compile(r"[\p{L}\p{N}]")


def test_letters_the_patterns_take_for_each_other_fold_alike() -> None:
    every = "".join(_CASED)
    for c in _CASED:
        for match in regex.finditer(regex.escape(c), every, flags=regex.IGNORECASE):
            assert lexicon.fold(match.group()) == lexicon.fold(c), (c, match.group())


def test_only_the_ypogegrammeni_folds_a_non_letter_into_a_letter() -> None:
    # A text holding it is always scanned (`_runs` gives None).
    joining = [
        c
        for c in map(chr, range(sys.maxunicode + 1))
        if not 0xD800 <= ord(c) < 0xE000
        and not _RUN_CHAR.match(c)
        and any(_RUN_CHAR.match(x) for x in lexicon.fold(c))
    ]
    assert joining == [lexicon.FOLDS_TO_A_LETTER]
    assert lexicon.text_runs("ᾳͅ no longer") is None


def _always_scanned(monkeypatch: pytest.MonkeyPatch, texts: list[str]) -> list[terms.Terms]:
    with monkeypatch.context() as m:
        m.setattr(lexicon.Openings, "may_match", lambda self, runs, chars: True)
        terms.read_terms.cache_clear()
        out = [terms.read_terms(t, c) for t in texts for c in (True, False)]
    terms.read_terms.cache_clear()
    return out


def _statements(value: object, into: set[str]) -> None:
    if isinstance(value, str):
        into.update(s.text for s in split_statements(value))
    elif isinstance(value, dict):
        for v in value.values():
            _statements(v, into)
    elif isinstance(value, list):
        for v in value:
            _statements(v, into)


WRITTEN = [
    # Casing the patterns fold: Turkish capitals, Greek, Cyrillic, French elisions.
    "ARTIK KULLANMIYORUZ, İPTAL EDİLDİ.",
    "Artık Redis kullanmıyoruz; bundan sonra Valkey.",
    "ΔΕΝ χρησιμοποιούμε ΠΛΈΟΝ το Jenkins.",
    "Больше НЕ используем Jenkins, теперь GitHub Actions.",
    "On N'UTILISE PLUS Jenkins — c'est GitHub Actions désormais.",
    # English with the punctuation editors type: a statement outside ASCII.
    "We no longer deploy on Fridays — releases go out on Tuesdays.",
    "The cache TTL is now 10 minutes (it was 5) — see “runbook”.",
    "Don’t use `requests` anymore; use httpx.",
    # Unspaced scripts, and phrases of theirs beside Latin ones.
    "不再使用 Jenkins，现在改用 GitHub Actions。",
    "もう Jenkins は使わない。今は GitHub Actions に移行しました。",
    "더 이상 Jenkins를 쓰지 않습니다. 이제 GitHub Actions로 바꿨어요.",
    "部署每天 10:00 进行，缓存保留 3 天。",
]


def test_the_same_terms_as_scanning_every_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    texts: set[str] = set(WRITTEN)
    for path in sorted((FIXTURES / "conflicts").glob("*.json")):
        _statements(json.loads(path.read_text(encoding="utf-8")), texts)
    ordered = sorted(texts)
    assert len(ordered) > 2000  # the labelled pairs of every language
    terms.read_terms.cache_clear()
    prefiltered = [terms.read_terms(t, c) for t in ordered for c in (True, False)]
    assert prefiltered == _always_scanned(monkeypatch, ordered)


def test_a_statement_outside_ascii_is_scanned_only_for_what_it_may_hold() -> None:
    lex = lexicon.lexicon()
    plain = "Le déploiement se fait après la revue."
    assert not lex.openings["negation", ""].may_match(lexicon.text_runs(plain), frozenset(plain))
    negated = "Le déploiement ne se fait pas le vendredi."
    assert lex.openings["negation", ""].may_match(lexicon.text_runs(negated), frozenset(negated))
    assert terms.read_terms("We no longer deploy on Fridays — ever.").negated
