"""Gathering pairs to judge: near-duplicates found without comparing everything."""

from __future__ import annotations

from memory_recall.server.dev.organise_bench import near_duplicates
from memory_recall.server.organise.pairs import Vocabulary, candidate_pairs, contains, overlap


def test_words_are_runs_of_three_and_cjk_pairs_in_any_mix():
    vocabulary = Vocabulary()
    ids = vocabulary.words("abc漢字テスト and Résumé 한국어 x1 ab")
    words = {w for w, i in vocabulary._ids.items() if contains(ids, i)}
    assert words == {"abc", "漢字", "字テ", "テス", "スト", "and", "résumé", "한국", "국어"}
    assert list(ids) == sorted(ids)
    assert vocabulary.words("AND abc") == vocabulary.words("abc and")


def test_overlap_is_jaccard():
    v = Vocabulary()
    a, b = v.words("alpha beta gamma"), v.words("beta gamma delta")
    assert overlap(a, b) == 2 / 4
    assert overlap(a, v.words("")) == 0.0


def test_every_near_duplicate_is_a_candidate_and_few_other_pairs_are():
    docs = near_duplicates(600)
    v = Vocabulary()
    words = [v.words(f"{d.title}\n{d.description}\n{d.body}") for d in docs]
    titles = [d.title for d in docs]
    pairs = set(candidate_pairs(words, titles, len(v)))
    index = {d.path: i for i, d in enumerate(docs)}
    copies = [d for d in docs if d.path.endswith("-again.md")]
    assert len(copies) == 60
    for copy in copies:
        i, j = sorted((index[copy.path.replace("-again.md", ".md")], index[copy.path]))
        assert (i, j) in pairs
    assert len(pairs) < 3 * len(copies)  # not every pair: 179,700 exist
