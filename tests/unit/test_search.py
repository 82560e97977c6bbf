"""memory/search as a service: each mode over a small set of memories, with a network."""

from __future__ import annotations

import pytest
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.graph import MemoryNetwork, NetworkDocument
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.search import (
    MemorySearch,
    SearchError,
    SearchRequest,
    find_memory,
    render_search,
)
from memory_recall.server.roots import Scope


def memory(
    rel: str,
    title: str,
    description: str,
    body: str,
    *,
    type_: str = "project",
    category: str | None = None,
    scope: Scope = Scope.PROJECT,
    mtime: float = 1.0,
    root: str = "/p",
    extra: tuple[tuple[str, str], ...] = (),
) -> MemoryDocument:
    meta = ((("category", category),) if category else ()) + extra
    return MemoryDocument(
        path=f"{root}/{rel}",
        relative_path=rel,
        scope=scope,
        type=type_,  # type: ignore[arg-type]
        title=title,
        description=description,
        body=body,
        mtime_ms=mtime,
        extra=meta,
    )


LONG = "Filler about nothing in particular. " * 60
INVOICE = memory(
    "billing/invoice-module.md",
    "Invoice module",
    "How invoices are built and numbered",
    "Invoices are assembled in billing/invoice.py. Before changing it read "
    "[the testing rules](../conventions/test-rules.md).",
    category="project/architecture",
    mtime=5,
)
TEST_RULES = memory(
    "conventions/test-rules.md",
    "Testing rules",
    "Every change ships with a regression test",
    "Run the golden-file suite with `make golden`; snapshot files are reviewed by hand.",
    type_="feedback",
    category="conventions/testing",
    mtime=4,
)
DEADLOCK = memory(
    "lessons/ledger-deadlock.md",
    "Ledger import deadlock",
    "Two importers on the same ledger deadlock",
    LONG + "The fix for the nightly ledger deadlock is to take the advisory lock first. " + LONG,
    type_="feedback",
    category="lessons/errors",
    mtime=3,
)
OOM = memory(
    "lessons/export-oom.md",
    "Export worker OOMKilled",
    "The export worker needs 2 GiB for the big tenants",
    "Raise the memory limit in deploy/export.yaml; streaming rows did not help.",
    type_="feedback",
    category="lessons/incidents",
    mtime=2,
)
USER = memory(
    "prefs.md",
    "Terse answers",
    "The user wants short answers",
    "No summaries at the end.",
    type_="user",
    category="user/communication",
    scope=Scope.USER,
    root="/u",
    mtime=9,
)
DOCS = (INVOICE, TEST_RULES, DEADLOCK, OOM, USER)


def search(request: SearchRequest, docs=DOCS, ranker: str = "bm25f", network: bool = True):
    view = CorpusView.of(docs)
    net = MemoryNetwork.build(NetworkDocument.of(d) for d in view.documents) if network else None
    return MemorySearch(RANKERS[ranker]).search(view, request, network=net)


def paths(outcome) -> list[str]:
    return [h.doc.relative_path for h in outcome.hits]


@pytest.mark.parametrize("ranker", ["bm25f", "spec"])
def test_shallow_reads_titles_and_descriptions_only(ranker):
    found = search(SearchRequest("shallow", "invoice numbering"), ranker=ranker)
    assert paths(found) == ["billing/invoice-module.md"]
    assert found.hits[0].body is None and found.hits[0].category == "project/architecture"
    # `streaming` is only in a body: shallow does not find it, deep does.
    assert paths(search(SearchRequest("shallow", "streaming"), ranker=ranker)) == []
    assert paths(search(SearchRequest("deep", "streaming"), ranker=ranker)) == [
        "lessons/export-oom.md"
    ]


def test_deep_delivers_the_matching_passage_of_a_long_body():
    found = search(SearchRequest("deep", "advisory lock ledger"))
    hit = next(h for h in found.hits if h.doc is DEADLOCK)
    assert hit.source == "lexical" and hit.score
    assert hit.body is not None and "advisory lock" in hit.body
    assert hit.truncated and len(hit.body) <= 1200


def test_deep_adds_what_the_network_reaches_with_its_path():
    found = search(SearchRequest("deep", "restructure the invoice module"))
    assert paths(found)[0] == "billing/invoice-module.md"
    reached = next(h for h in found.hits if h.doc is TEST_RULES)
    assert reached.source == "network" and reached.score is None
    assert reached.reached is not None and reached.reached.seed == INVOICE.path
    assert "links to" in reached.reached.describe()
    without = search(SearchRequest("deep", "restructure the invoice module"), network=False)
    assert TEST_RULES not in [h.doc for h in without.hits] and not without.network_used


def test_explore_a_subtree_newest_first_with_its_subcategories():
    found = search(SearchRequest("explore", category="lessons"))
    assert paths(found) == ["lessons/ledger-deadlock.md", "lessons/export-oom.md"]
    assert found.subtree is not None and found.subtree.count == 2
    assert {c.slug: c.count for c in found.subtree.children}["lessons/errors"] == 1
    assert all(h.source == "tree" and h.body is None for h in found.hits)
    narrow = search(SearchRequest("explore", category="lessons/incidents"))
    assert paths(narrow) == ["lessons/export-oom.md"]


def test_explore_from_a_memory_goes_through_the_network_then_its_subtree():
    found = search(SearchRequest("explore", path="billing/invoice-module.md"))
    assert found.hits[0].doc is INVOICE and found.hits[0].source == "path"
    assert found.hits[1].doc is TEST_RULES and found.hits[1].source == "network"
    assert found.subtree is not None and found.subtree.slug == "project/architecture"


def test_explore_by_query_ranks_the_subtree_by_it():
    found = search(SearchRequest("explore", "export memory limit", category="lessons"))
    assert paths(found)[0] == "lessons/export-oom.md"
    assert search(SearchRequest("explore", "zzzqqq xxyyzz")).hits == ()


def test_get_by_path_or_relative_path_whole_body():
    by_path = search(SearchRequest("get", path=DEADLOCK.path))
    by_rel = search(SearchRequest("get", path="./lessons/ledger-deadlock.md"))
    assert by_path.hits[0].body == DEADLOCK.body == by_rel.hits[0].body
    assert not by_path.hits[0].truncated
    with pytest.raises(SearchError) as missing:
        search(SearchRequest("get", path="nope.md"))
    assert missing.value.kind == "notFound"


def test_a_relative_path_in_two_roots_is_ambiguous():
    twin = memory("prefs.md", "Other prefs", "", "x", root="/q")
    view = CorpusView.of([USER, twin])
    with pytest.raises(SearchError, match="2 memories"):
        find_memory(view, "prefs.md")
    assert find_memory(view, "/q/prefs.md") is twin


def test_scope_keeps_one_scope():
    assert paths(search(SearchRequest("shallow", "terse answers", scope="project"))) == []
    assert paths(search(SearchRequest("shallow", "terse answers", scope="user"))) == ["prefs.md"]


def test_requests_that_cannot_be_answered_say_what_to_change():
    with pytest.raises(SearchError, match="needs a `query`"):
        search(SearchRequest("deep", "  "))
    with pytest.raises(SearchError, match="needs `path`"):
        search(SearchRequest("get"))
    with pytest.raises(SearchError, match="not on the topic tree"):
        search(SearchRequest("explore", category="gossip"))
    with pytest.raises(SearchError, match="needs `category`"):
        search(SearchRequest("explore"))


def test_limit_and_total():
    found = search(SearchRequest("explore", category="lessons", limit=1))
    assert len(found.hits) == 1 and found.total == 2
    assert "_1 of 2 shown_" in render_search(found)


def test_rendered_for_an_agent():
    text = render_search(search(SearchRequest("deep", "restructure the invoice module")))
    assert text.startswith("## Memory search")
    assert (
        "found through the memory network: billing/invoice-module.md links to "
        "conventions/test-rules.md" in text
    )
    assert "### Testing rules (conventions/test-rules.md)" in text


def test_the_search_bench_prints_its_figures(capsys):
    from memory_recall.server.cli.main import main

    assert main(["dev", "search-bench", "--docs", "120", "--queries", "5"]) == 0
    out = capsys.readouterr().out
    assert "memory/search at 120 memories" in out and "suggestion index built" in out
    for mode in ("shallow", "deep", "explore", "get"):
        assert f"  {mode} " in out
