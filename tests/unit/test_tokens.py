"""docs/ranking.md tokenizer, rule by rule, plus properties over arbitrary Unicode."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st
from memory_recall.protocol.limits import MAX_QUERY_TOKENS
from memory_recall.server.tokens import cap_tokens, normalize, query_tokens


def test_normalize_is_nfkc_then_lowercase():
    assert normalize("ＤＥＰＬＯＹ") == "deploy"
    assert normalize("Ⅻ") == "xii"
    assert normalize("ﾃｽﾄ") == "テスト"


def test_non_cjk_run_needs_three_characters():
    assert query_tokens("is it ok") == []
    assert query_tokens("the cat") == ["the", "cat"]


def test_run_starts_with_letter_or_number_and_may_continue_with_marks():
    # U+0301 (combining acute) cannot start a run but can continue one.
    assert query_tokens("\u0301ab") == []
    text = "re\u0301sume\u0301"  # kept decomposed only where NFKC has no precomposed form
    assert query_tokens(text) == [normalize(text)]
    assert query_tokens("x\u0304\u0304") == [normalize("x\u0304\u0304")]


def test_cjk_run_yields_code_point_bigrams():
    assert query_tokens("部署手順") == ["部署", "署手", "手順"]


def test_lone_cjk_character_yields_nothing():
    assert query_tokens("猫") == []
    assert query_tokens("猫 is ok") == []


def test_cjk_and_latin_are_separate_runs():
    # The tokenizer's rule: `abc漢字` is two runs — one Latin token and one CJK bigram.
    assert query_tokens("abc漢字") == ["abc", "漢字"]


def test_hiragana_katakana_hangul_are_cjk():
    assert query_tokens("ひらがな") == ["ひら", "らが", "がな"]
    assert query_tokens("한국어") == ["한국", "국어"]


def test_katakana_is_matched_by_script_extensions():
    # ー (U+30FC) has Script=Common but Script_Extensions includes Katakana,
    # so it stays inside the run: `サーバー` is one run.
    assert query_tokens("サーバー") == ["サー", "ーバ", "バー"]


def test_halfwidth_katakana_normalizes_to_fullwidth_bigrams():
    assert query_tokens("ﾃｽﾄ") == ["テス", "スト"]


def test_other_scripts_are_whole_tokens():
    assert query_tokens("Развёртывание релиза") == ["развёртывание", "релиза"]
    assert query_tokens("Ανάπτυξη") == ["ανάπτυξη"]
    assert query_tokens("النشر") == ["النشر"]
    assert query_tokens("déjà été") == ["déjà", "été"]


def test_tokens_are_distinct_in_first_seen_order():
    assert query_tokens("Deploy deploy DEPLOY release") == ["deploy", "release"]


def test_query_keeps_at_most_64_tokens_head_and_tail():
    words = [f"w{i:03d}" for i in range(100)]
    tokens = query_tokens(" ".join(words))
    assert len(tokens) == MAX_QUERY_TOKENS
    assert tokens[:32] == words[:32]
    assert tokens[32:] == words[-32:]
    assert "w050" not in tokens  # the middle of a 100-token query is lost


def test_repeated_token_in_tail_moves_to_its_end():
    head = [f"h{i:02d}x" for i in range(32)]
    tail = [f"t{i:02d}x" for i in range(32)]
    # t00x is seen again at the end: it moves to the tail's end and survives
    # the arrival of one more token, which evicts t01x instead.
    tokens = cap_tokens([*head, *tail, "t00x", "newx"])
    assert tokens[:32] == head
    assert tokens[32:] == [*tail[2:], "t00x", "newx"]


def test_repeated_head_token_does_not_move():
    head = [f"h{i:02d}x" for i in range(32)]
    assert cap_tokens([*head, "h00x", "tail"]) == [*head, "tail"]


def test_token_evicted_from_tail_can_return():
    head = [f"h{i:02d}x" for i in range(32)]
    tail = [f"t{i:02d}x" for i in range(33)]  # t00x falls out of the window
    tokens = cap_tokens([*head, *tail, "t00x"])
    assert tokens[32:] == [*tail[2:], "t00x"]


@settings(max_examples=300)
@given(st.text())
def test_tokenizer_never_raises_and_caps(text):
    tokens = query_tokens(text)
    assert len(tokens) <= MAX_QUERY_TOKENS
    assert len(set(tokens)) == len(tokens)


@settings(max_examples=200)
@given(st.lists(st.from_regex(r"[a-z]{3,8}", fullmatch=True), min_size=1, max_size=200))
def test_first_and_last_distinct_tokens_survive(words):
    tokens = query_tokens(" ".join(words))
    distinct = list(dict.fromkeys(words))
    assert tokens[0] == distinct[0]
    assert tokens[-1] == words[-1] or words[-1] in tokens[:32]
    assert len(tokens) == min(len(distinct), MAX_QUERY_TOKENS)


@settings(max_examples=300)
@given(st.text())
def test_nfkc_equivalent_inputs_give_identical_tokens(text):
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        assert query_tokens(unicodedata.normalize(form, text)) == query_tokens(text)
