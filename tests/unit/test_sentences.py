"""Where a sentence ends (server.sentences), in the scripts users write in."""

from __future__ import annotations

from memory_recall.server.sentences import split_sentences


def test_a_stop_followed_by_a_space_ends_a_sentence():
    assert split_sentences("How do we deploy? Look first, then answer.") == [
        "How do we deploy?",
        "Look first, then answer.",
    ]


def test_versions_urls_and_abbreviations_do_not_end_one():
    text = "Use Python 3.11 from python.org, e.g. the pyenv build. Done"
    assert split_sentences(text) == [
        "Use Python 3.11 from python.org, e.g. the pyenv build.",
        "Done",
    ]


def test_cjk_stops_end_a_sentence_without_a_space():
    assert split_sentences("部署怎么做？先看代码。再回答") == [
        "部署怎么做？",
        "先看代码。",
        "再回答",
    ]
    assert split_sentences("デプロイは？まず確認して。") == ["デプロイは？", "まず確認して。"]


def test_arabic_and_devanagari_stops_and_line_ends():
    assert split_sentences("كيف أحله؟ شكرا") == ["كيف أحله؟", "شكرا"]
    assert split_sentences("प्रमाणपत्र क्यों समाप्त हुआ। बताओ") == [
        "प्रमाणपत्र क्यों समाप्त हुआ।",
        "बताओ",
    ]
    assert split_sentences("error: lock held\n\n  how do I fix it  ") == [
        "error: lock held",
        "how do I fix it",
    ]


def test_nothing_but_space_has_no_sentence():
    assert split_sentences("") == [] and split_sentences(" \n\n ") == []
