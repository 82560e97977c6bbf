"""The corpora of issue 18 hold what they claim: multi-hop questions whose answer
shares no content word with them but is linked to a memory that does, and
suggestion events with their expected memories.

These check the fixtures, not the network: they were written before it existed.
"""

from __future__ import annotations

import itertools
import json
import posixpath
import re
from dataclasses import replace
from pathlib import Path

import pytest
from memory_recall.server.dev.evaluation import load_corpus, query_script
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f import DEFAULT_PARAMS, Bm25Ranker
from memory_recall.server.ranking.bm25f.tokens import recall_tokens
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.roots import Scope

FIXTURES = Path(__file__).parents[2] / "fixtures"
MULTIHOP = FIXTURES / "eval" / "multihop.json"
SUGGESTIONS = FIXTURES / "suggestions" / "suggestions.json"
LINK_KINDS = ("markdown", "wikilink", "related", "supersedes", "identifier", "twohop")
# Every query token the default ranker would score (function words are not),
# stemmed as it stems, matched as it matches (substrings); no silence.
_PROBE = Bm25Ranker(replace(DEFAULT_PARAMS, min_coverage=0.0, rare_share=0.0))
_MD_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")
_WIKI_LINK = re.compile(r"\[\[([^\]]+)\]\]")


@pytest.fixture(scope="module")
def raw() -> dict:
    return json.loads(MULTIHOP.read_text(encoding="utf-8"))


def _doc(d: dict) -> MemoryDocument:
    return MemoryDocument(
        path=d["id"],
        relative_path=d["id"],
        scope=Scope.PROJECT,
        type=d["type"],
        title=d["title"],
        description=d["description"],
        body=d["body"],
        mtime_ms=d.get("mtimeMs", 1),
    )


def _shared_tokens(query: str, d: dict) -> list[str]:
    view = CorpusView.of([_doc(d)])
    return [t for t in recall_tokens(query) if _PROBE(view, [t], lambda _d: True)]


def _linked(a: dict, b: dict, kind: str, shared: str | None, titles: dict[str, str]) -> bool:
    if kind == "markdown":
        base = posixpath.dirname(a["id"])
        return any(
            posixpath.normpath(posixpath.join(base, target)) == b["id"]
            for target in _MD_LINK.findall(a["body"])
        )
    if kind == "wikilink":
        return any(titles.get(title) == b["id"] for title in _WIKI_LINK.findall(a["body"]))
    if kind == "related":
        return b["id"] in a.get("related", []) or a["id"] in b.get("related", [])
    if kind == "supersedes":
        return a["id"] in b.get("supersedes", [])
    if kind == "identifier":
        assert shared, "an identifier case names its shared identifier"
        return all(
            shared.lower() in f"{x['title']} {x['description']} {x['body']}".lower() for x in (a, b)
        )
    return any(_linked(a, b, k, None, titles) for k in LINK_KINDS[:4])


def test_multihop_corpus_loads_and_is_large(raw):
    corpus = load_corpus(MULTIHOP)  # the docs/development.md loader ignores the added keys
    assert len(corpus.cases) >= 150
    categories = {c.category for c in corpus.cases}
    assert {f"multihop-{k}" for k in LINK_KINDS} | {"lexical", "abstention"} <= categories
    multihop = [c for c in corpus.cases if c.category.startswith("multihop-")]
    assert len(multihop) >= 90
    # At least four languages: Latin-script ones told apart by the corpus's id prefixes,
    # the others by their script.
    languages = {c["id"].split("-")[0] for c in raw["cases"]}
    assert len(languages) >= 4
    assert {"cjk", "japanese"} & {query_script(c.query) for c in corpus.cases}
    assert any(not c.answerable for c in corpus.cases)


def test_every_multihop_answer_shares_no_content_word_but_its_source_does(raw):
    docs = {d["id"]: d for d in raw["docs"]}
    titles = {d["title"]: d["id"] for d in raw["docs"]}
    problems = []
    for case in raw["cases"]:
        if not case["category"].startswith("multihop-"):
            assert "via" not in case, case["id"]
            continue
        kind = case["category"].removeprefix("multihop-")
        via = case["via"]
        assert via and len(case["relevantIds"]) == 1, case["id"]
        assert len(via) == (2 if kind == "twohop" else 1), case["id"]
        for hidden in [*case["relevantIds"], *via[1:]]:
            if shared := _shared_tokens(case["query"], docs[hidden]):
                problems.append(f"{case['id']}: {hidden} shares {shared}")
        if not _shared_tokens(case["query"], docs[via[0]]):
            problems.append(f"{case['id']}: {via[0]} shares nothing with the question")
        path = [*via, *case["relevantIds"]]
        for a, b in itertools.pairwise(path):
            if not _linked(docs[a], docs[b], kind, case.get("shared"), titles):
                problems.append(f"{case['id']}: {a} is not linked to {b} by {kind}")
    assert not problems, "\n".join(problems)


def test_front_matter_links_name_memories_and_supersedes_go_back_in_time(raw):
    docs = {d["id"]: d for d in raw["docs"]}
    for d in raw["docs"]:
        for key in ("related", "supersedes"):
            for target in d.get(key, []):
                assert target in docs and target != d["id"], (d["id"], key, target)
        for old in d.get("supersedes", []):
            assert docs[old]["mtimeMs"] < d["mtimeMs"], (d["id"], old)


def test_suggestion_fixtures_cover_every_event_kind():
    data = json.loads(SUGGESTIONS.read_text(encoding="utf-8"))
    ids = {d["id"] for d in data["docs"]}
    events = data["events"]
    assert len(events) >= 40
    assert {e["event"] for e in events} == {"edit", "error", "toolResult", "command"}
    with_suggestion = [e for e in events if e["expectedIds"]]
    assert len(with_suggestion) >= 40
    assert len(events) - len(with_suggestion) >= 15, "events that must bring nothing"
    for e in events:
        assert set(e["expectedIds"]) <= ids, e["id"]
        assert e.get("text") is not None or e.get("path"), e["id"]
    kinds = {e["event"] for e in events if not e["expectedIds"]}
    assert kinds == {"edit", "error", "toolResult", "command"}
