"""Conflict verdicts where numbers sit inside unspaced text (found by the messy-year fixture)."""

from __future__ import annotations

import pytest
from memory_recall.server.store.conflicts import MemoryText, judge


def memory(title: str, body: str) -> MemoryText:
    return MemoryText(title, "", body, "project")


@pytest.mark.parametrize(
    ("title", "old", "new"),
    [
        ("物流服务的超时时间", "调用物流服务在20秒后超时。\n→ `src/shipping/a.ts`",
         "物流服务的调用超过20秒就会超时。\n→ `src/shipping/a.ts`"),
        ("検索サービスのタイムアウト", "検索サービスへの呼び出しは10秒でタイムアウトします。",
         "検索サービスの呼び出しは10秒を過ぎるとタイムアウトになります。"),
    ],
)  # fmt: skip
def test_a_restated_clause_with_a_number_is_a_duplicate(title, old, new):
    """The whole clause is one run of letters; a number in it does not make it a name."""
    assert judge(memory(title, new), memory(title, old)).kind == "duplicate"


@pytest.mark.parametrize(
    ("title", "old", "new"),
    [
        ("物流服务的超时时间", "调用物流服务在20秒后超时。", "调用物流服务在30秒后超时。"),
        ("検索サービスのバッチサイズ", "検索サービスは一回のバッチで100件を処理します。",
         "検索サービスは一回のバッチで500件を処理します。"),
    ],
)  # fmt: skip
def test_a_changed_number_right_after_a_cjk_letter_is_an_update(title, old, new):
    assert judge(memory(title, new), memory(title, old)).kind == "update"
