"""Synthetic memory trees for the benchmark: realistic in size, shape and languages.

Deterministic for a seed. Documents look like the memories agents write: a
name, a one-line description, one of the four types, and a body that mixes
prose with identifiers (tickets, paths, versions), of realistic length: most
memories are notes of a paragraph or two, a few are long session logs (200 to
20,000 characters, median 1,500), in
English mostly and in German, French, Russian, Greek, Japanese, Chinese and
Korean for the rest. Word frequencies follow a Zipf curve, so common words
("the", "deploy") are in most documents and rare ones in a handful.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from memory_recall.server.documents import MEMORY_TYPES, MemoryDocument, parse_memory
from memory_recall.server.roots import Scope

# Body lengths: log-normal around a median of 1,500 characters (the notes agents
# write), kept between 200 and 20,000 (the longest session logs): σ 0.85 puts the
# mean near 2,100 and one body in a thousand at the cap.
BODY_MEDIAN_CHARS = 1500
BODY_SIGMA = 0.85
BODY_MIN_CHARS, BODY_MAX_CHARS = 200, 20_000
DOCS_PER_DIR = 200
YEAR_S = 365 * 24 * 3600
BASE_MTIME_S = 1_700_000_000  # Nov 2023: mtimes spread over the year after it


def _words(text: str) -> list[str]:
    return text.split()


_ENGLISH = _words(
    """
the of and to in is that for it with as on be this are by not or have from at which but
an they we you can all when there use if one more run so new need make also deploy
deployment staging production release rollback service server database migration schema
query index cache config configuration token secret credential key access user team
project goal deadline incident outage alert dashboard metric log trace ticket review
test tests failing flaky build pipeline branch merge commit docker container cluster
node pod timeout retry latency memory cpu disk queue worker job cron backup restore
endpoint api client request response error warning bug fix patch upgrade version
dependency package module function class method field parameter argument option flag
feature toggle rule style format lint prefer avoid always never should must ask before
after every only editor vim emacs vscode terminal shell script python rust typescript go
java kotlin swift frontend backend mobile web auth login session permission role owner
oncall escalation runbook workaround gotcha known issue summary feedback preference
background terse link docs reference customer billing invoice payment search ranking
recall model prompt agent tool call schema mapping usage weekly monthly quarter sprint
standup meeting notes decision because however instead although until while during
without between through across
"""
)
_GERMAN = _words(
    """
der die das und ist nicht mit für auf bereitstellung datenbank fehler überprüfung
schlüssel größe änderung straße übersicht benutzer einstellung wöchentlich
"""
)
_FRENCH = _words(
    """
le la les et est pas avec pour sur déploiement base données erreur vérification clé
équipe réunion été prêt tâche problème résolu
"""
)
_RUSSIAN = _words(
    """
и в не на что с по для это развертывание база данных ошибка сервер проверка ключ команда
встреча задача решение настройка
"""
)
_GREEK = _words(
    """
και το η να είναι για με ανάπτυξη βάση δεδομένων σφάλμα διακομιστής έλεγχος κλειδί ομάδα
συνάντηση
"""
)
_JAPANESE = _words(
    """
本番環境 デプロイ 手順 データベース 移行 障害 対応 確認 設定 変更
テスト サーバー 監視 通知 担当者 レビュー 失敗 再起動 権限 キャッシュ
性能 改善 会議 決定 締め切り
"""
)
_JA_GLUE = ["の", "を", "に", "は", "が", "で", "と", "、", "。"]
_CHINESE = _words(
    """
部署 数据库 迁移 测试 服务器 配置 问题 解决 监控 告警 发布 回滚 权限
缓存 性能 优化 会议 决定 截止 负责人 流程 文档
"""
)
_ZH_GLUE = ["的", "在", "和", "，", "。", "了"]
# Common characters that long-tail compounds are made of.
_KANJI = (
    "日本語開発者運用管理画面登録削除更新検索結果表示"
    "機能追加修正完了予定期限報告連絡相談共有資料作成"
)
_HANZI = (
    "中文开发者运维管理页面注册删除更新搜索结果显示功能添加修改完成计划期限报告联系讨论共享资料创建"
)
_HANGUL = (
    "가나다라마바사아자차카타파하개발자운영관리화면등록삭제업데이트검색결과표시기능추가수정완료"
)
_KOREAN = _words(
    """
배포 데이터베이스 서버 설정 테스트 장애 대응 확인 변경 모니터링 알림
담당자 리뷰 실패 재시작 권한 캐시 성능 회의 결정 마감
"""
)

_LANGUAGES = ("en", "de", "fr", "ru", "el", "ja", "zh", "ko")
_LANGUAGE_WEIGHTS = (70, 4, 3, 3, 2, 8, 6, 4)


@dataclass(frozen=True)
class SyntheticMemory:
    relative_path: str
    scope: Scope
    type: str
    title: str
    description: str
    body: str
    mtime_s: float

    def text(self) -> str:
        return (
            f"---\nname: {self.title}\ndescription: {self.description}\n"
            f"type: {self.type}\n---\n{self.body}\n"
        )


class _Writer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        # A long tail of made-up words (names, jargon) on top of the common ones.
        syllables = ["ka", "lo", "mi", "ne", "ra", "tu", "vex", "zor", "qui", "bel", "dra", "fen"]
        tail = {
            "".join(self.rng.choice(syllables) for _ in range(self.rng.randint(2, 4)))
            for _ in range(6000)
        }
        self.english = _ENGLISH + sorted(tail)
        # A long tail of CJK compounds too, from common characters.
        self.japanese = _JAPANESE + self._compounds(_KANJI, 1500)
        self.chinese = _CHINESE + self._compounds(_HANZI, 1500)
        self.korean = _KOREAN + self._compounds(_HANGUL, 1500)
        self._cumulative: dict[int, list[float]] = {}

    def _compounds(self, chars: str, count: int) -> list[str]:
        rng = self.rng
        made = {"".join(rng.choice(chars) for _ in range(rng.randint(2, 4))) for _ in range(count)}
        return sorted(made)

    def _zipf(self, words: list[str], k: int) -> list[str]:
        cumulative = self._cumulative.get(id(words))
        if cumulative is None:
            cumulative = list(accumulate(1 / (rank + 1) ** 0.9 for rank in range(len(words))))
            self._cumulative[id(words)] = cumulative
        return self.rng.choices(words, cum_weights=cumulative, k=k)

    def _identifier(self) -> str:
        rng = self.rng
        kind = rng.randrange(5)
        if kind == 0:
            return f"{rng.choice(['OPS', 'INC', 'JIRA', 'BUG'])}-{rng.randint(100, 99999)}"
        if kind == 1:
            return f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"
        if kind == 2:
            return f"{rng.getrandbits(32):08x}"
        if kind == 3:
            parts = self._zipf(self.english, rng.randint(2, 3))
            return "src/" + "/".join(parts) + rng.choice([".py", ".ts", ".go", ".rs"])
        return f"{rng.choice(self.english[:300])}_{rng.choice(self.english[:300])}"

    def sentence(self, language: str) -> str:
        rng = self.rng
        if language in ("ja", "zh"):
            words, glue = (
                (self.japanese, _JA_GLUE) if language == "ja" else (self.chinese, _ZH_GLUE)
            )
            out = []
            for word in self._zipf(words, rng.randint(4, 10)):
                out.append(word)
                if rng.random() < 0.15:  # technical terms stay in Latin script
                    out.append(self.rng.choice(self.english[40:200]))
                out.append(rng.choice(glue))
            return "".join(out).rstrip("、，") + "。"
        vocabulary = {"en": self.english, "de": _GERMAN, "fr": _FRENCH, "ru": _RUSSIAN}.get(
            language, _GREEK if language == "el" else self.korean
        )
        words = self._zipf(vocabulary, rng.randint(6, 16))
        if language != "en":  # memories in other languages still name English things
            words += self._zipf(self.english, rng.randint(1, 4))
            rng.shuffle(words)
        if rng.random() < 0.5:
            words.insert(rng.randrange(len(words) + 1), self._identifier())
        text = " ".join(words)
        return text[0].upper() + text[1:] + rng.choice([".", ".", ".", ":", "!"])

    def memory(self, number: int, scope: Scope) -> SyntheticMemory:
        rng = self.rng
        language = rng.choices(_LANGUAGES, _LANGUAGE_WEIGHTS)[0]
        mem_type = rng.choice(MEMORY_TYPES)
        title = self.sentence(language)[:60].rstrip(".:! 。")
        description = self.sentence(language)[:140]
        body_parts: list[str] = []
        size = 0
        target = body_length(rng)
        while size < target:
            part = self.sentence(language)
            if rng.random() < 0.2:
                part = "- " + part
            body_parts.append(part)
            size += len(part) + 1
        directory = f"topic{number // DOCS_PER_DIR:04}"
        return SyntheticMemory(
            relative_path=f"{directory}/memory-{number:06}.md",
            scope=scope,
            type=mem_type,
            title=title,
            description=description,
            body="\n".join(body_parts),
            mtime_s=BASE_MTIME_S + rng.random() * YEAR_S,
        )


def body_length(rng: random.Random) -> int:
    """A body length drawn from the realistic distribution."""
    drawn = rng.lognormvariate(math.log(BODY_MEDIAN_CHARS), BODY_SIGMA)
    return round(min(BODY_MAX_CHARS, max(BODY_MIN_CHARS, drawn)))


def synthetic_memories(count: int, seed: int = 1) -> Iterator[SyntheticMemory]:
    """`count` memories; one in five is a user memory, the rest project ones."""
    writer = _Writer(seed)
    for number in range(count):
        yield writer.memory(number, Scope.USER if number % 5 == 4 else Scope.PROJECT)


def synthetic_documents(count: int, seed: int = 1) -> list[MemoryDocument]:
    """The same memories as parsed documents, without touching the disk."""
    return [
        parse_memory(
            m.text(),
            path=f"/synthetic/{m.scope.value}/{m.relative_path}",
            relative_path=m.relative_path,
            scope=m.scope,
            mtime_ms=m.mtime_s * 1000,
            root_index=0 if m.scope is Scope.PROJECT else 1,
        )
        for m in synthetic_memories(count, seed)
    ]


def write_tree(root: Path, count: int, seed: int = 1) -> tuple[Path, Path]:
    """Write `count` memories under root/project and root/user; returns those two roots."""
    project, user = root / "project", root / "user"
    for memory in synthetic_memories(count, seed):
        path = (project if memory.scope is Scope.PROJECT else user) / memory.relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(memory.text(), encoding="utf-8")
        os.utime(path, (memory.mtime_s, memory.mtime_s))
    project.mkdir(parents=True, exist_ok=True)
    user.mkdir(parents=True, exist_ok=True)
    return project, user
