"""The consolidation planner (docs/organisation.md): merge duplicates, newer wins, pinned untouched, prune."""

from __future__ import annotations

import os
import shutil

import pytest
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.dev.messy_year import check, generate
from memory_recall.server.organise.consolidate import plan_root
from memory_recall.server.organise.staleness import StalenessChecker
from memory_recall.server.roots import MemoryRoot, Scope

from tests.organise_docs import DAY_MS, memory

NOW = 400 * DAY_MS
# The done-when fixture at a reduced size; MEMORY_RECALL_FULL_LOAD=1 runs all 600.
MESSY_SIZE = 600 if os.environ.get("MEMORY_RECALL_FULL_LOAD") else 120


def plan(docs, capacity=100, **kw):
    return plan_root(docs, root="/ws/.memory", capacity=capacity, now_ms=NOW, **kw)


def test_duplicates_merge_into_the_newest_keeping_every_distinct_line():
    old = memory("Lint command", "Lint the code with `ruff check .` before pushing.\n"
                 "CI runs the same check on every pull request.", days=100)  # fmt: skip
    new = memory("Lint command", "Before pushing, lint the code with `ruff check .`.", days=300)
    p = plan([old, new])
    (rewrite,) = p.rewrites
    assert rewrite.path == new.path and rewrite.merged_from == (old.path,)
    assert rewrite.body is not None and rewrite.body.startswith(new.body)
    assert "CI runs the same check on every pull request." in rewrite.body
    assert [(a.path, a.cause, a.into) for a in p.archives] == [(old.path, "merged", new.path)]
    assert p.after == 1


def test_a_changed_fact_newer_wins_and_records_supersedes():
    old = memory("TypeScript version", "The frontend compiles with TypeScript 5.2.", days=10)
    new = memory("TypeScript version", "The frontend compiles with TypeScript 5.4.", days=200)
    p = plan([new, old])
    assert [(a.path, a.cause, a.into) for a in p.archives] == [(old.path, "superseded", new.path)]
    (rewrite,) = p.rewrites
    assert rewrite.path == new.path and rewrite.supersedes == (old.relative_path,)
    assert rewrite.body is None  # only its front matter changes


def test_a_newer_note_that_leaves_out_a_value_archives_nothing():
    old = memory("Test database", "The test database is at db-test-2.internal, port 5433.",
                 days=10)  # fmt: skip
    new = memory("Test database", "The test database port changed to 6432.", days=200)
    p = plan([new, old])
    assert not p.archives  # archiving the older would take the host out of recall
    (notice,) = [n for n in p.notices if n.kind == "possible"]
    assert notice.path == old.path and "leaves out db-test-2.internal" in notice.reason


@pytest.mark.parametrize(
    ("old_body", "new_body"),
    [
        ("Backups run at least once a day.", "Backups run at most once a day."),
        ("Sam is the tech lead.", "Sam was the tech lead."),
    ],
)
def test_a_note_that_perhaps_corrects_one_of_its_title_is_reported_not_merged(old_body, new_body):
    # No value changed, a word swapped: merged as a rewording, the two lines stood side by
    # side in one note, unmarked.
    old = memory("Backups", old_body, days=10)
    new = memory("Backups", new_body, days=200)
    p = plan([new, old])
    assert not p.archives and not p.rewrites
    (notice,) = [n for n in p.notices if n.kind == "possible"]
    assert notice.path == old.path


def test_a_newer_note_of_one_statement_of_several_archives_nothing():
    old = memory("Staging", "The staging cache is redis-stg-2.\n"
                 "The staging database is db-stg-7.internal.", days=10)  # fmt: skip
    new = memory("Staging", "The staging cache is now redis-stg-4.", days=200)
    p = plan([new, old])
    assert not p.archives  # archiving the older would take the database out of recall
    (notice,) = [n for n in p.notices if n.kind == "possible"]
    assert notice.path == old.path and "leaves out a statement of the older" in notice.reason


def test_a_newer_note_that_leaves_out_a_plain_statement_archives_nothing():
    # A habit said in plain words, no value in it: archived with the older, it was gone.
    old = memory("Staging", "The staging cache is redis-stg-2.\n"
                 "The staging cache is flushed after every deploy.", days=10)  # fmt: skip
    new = memory("Staging", "The staging cache is now redis-stg-4.", days=200)
    p = plan([new, old])
    assert not p.archives
    (notice,) = [n for n in p.notices if n.kind == "possible"]
    assert notice.path == old.path and "leaves out a statement of the older" in notice.reason


def test_a_link_the_writer_made_unsure_is_reported_never_acted_on():
    """`maybeSupersedes` is a lean of the rules: taking the older fact out of recall needs
    a settled verdict, or a model's (`supersedes`)."""
    owned = memory("Alice owns the billing service", "Alice owns the billing service.",
                   days=10, name="owned.md")  # fmt: skip
    owner = memory("Bob took over billing service ownership from Alice",
                   "Bob took over billing service ownership from Alice.", days=20,
                   front={"maybeSupersedes": "[owned.md]"})  # fmt: skip
    p = plan([owned, owner])
    assert not p.archives and not p.rewrites
    assert [n.path for n in p.notices if n.kind == "possible"] == [owned.path]
    confirmed = memory("Bob took over billing service ownership from Alice",
                       "Bob took over billing service ownership from Alice.", days=20,
                       front={"supersedes": "[owned.md]"})  # fmt: skip
    assert [a.path for a in plan([owned, confirmed]).archived("superseded")] == [owned.path]


def test_a_pair_the_writer_linked_is_judged_though_no_rare_word_pairs_them():
    """The writer's links are candidates of their own: in a small folder, or in Japanese,
    two memories may share no rare word at all and still be a correction the writer
    linked unsure. Consolidation reports it, as for any lean."""
    older = memory("決済サービスの担当は田中さん",
                   "決済サービスの担当は田中さん。Stripe の webhook を変更する前に必ず相談すること。"
                   "障害のときは #payments-oncall チャンネルで呼び出す。",
                   days=10, name="tanaka.md")  # fmt: skip
    newer = memory("決済サービスの担当は佐藤さんに変わった", "決済サービスの担当は佐藤さんに変わった。",
                   days=20, front={"maybeSupersedes": "[tanaka.md]"})  # fmt: skip
    others = [
        memory("ステージングのDBは db-stg-2.internal のポート 5433 で動いている",
               "ステージングのDBは db-stg-2.internal のポート 5433 で動いている。", days=5),
        memory("テストは make test で実行する",
               "テストは make test で実行する。pytest を直接実行しないこと。", days=6),
    ]  # fmt: skip
    p = plan([older, newer, *others])
    assert not p.archives and not p.rewrites
    assert [n.path for n in p.notices if n.kind == "possible"] == [older.path]


def test_newer_by_front_matter_not_by_mtime():
    """A checkout gives every file a fresh mtime; `updated` says which is newer."""
    old = memory("Node version", "The API runs on Node 18.", days=300,
                 front={"updated": "1970-01-05"})  # fmt: skip
    new = memory("Node version", "The API runs on Node 22.", days=1,
                 front={"updated": "1970-03-01"})  # fmt: skip
    assert [a.path for a in plan([old, new]).archived("superseded")] == [old.path]


def test_facts_of_one_shape_about_different_things_are_left_alone():
    a = memory("Stapelgröße von Lager", "Der Dienst Lager verarbeitet 200 Datensätze pro Stapel.")
    b = memory("Stapelgröße von Suche", "Der Dienst Suche verarbeitet 500 Datensätze pro Stapel.",
               days=5)  # fmt: skip
    p = plan([a, b])
    assert p.empty
    assert p.gather.set_aside == 1


def test_pinned_and_team_memories_are_only_reported():
    pinned = memory("Deploy freeze", "No deploys on Friday after 15:00.", days=1,
                    front={"pinned": "true"})  # fmt: skip
    copy = memory("Deploy freeze", "No deploys on Friday after 15:00.", days=300)
    changed = memory("Deploy freeze", "No deploys on Friday after 16:00.", days=350)
    p = plan([pinned, copy, changed])
    assert pinned.path not in p.touched
    assert any(n.path == pinned.path and n.kind == "protected" for n in p.notices)
    team = [
        memory("Port", "The API listens on 8080.", days=1, scope=Scope.PROJECT),
        memory("Port", "The API listens on 8081.", days=9),
    ]
    p = plan(team, team=True, capacity=10)
    assert p.empty and {n.kind for n in p.notices} == {"protected"}
    assert plan(team, team=True, capacity=1).empty  # not even for capacity


def test_a_duplicate_a_pinned_note_already_holds_is_archived_as_covered():
    pinned = memory("Deploy freeze", "No deploys on Friday after 15:00.", days=1,
                    front={"pinned": "true"})  # fmt: skip
    copy = memory("Deploy freeze", "- No deploys on Friday after 15:00", days=300)
    p = plan([pinned, copy])
    assert [(a.path, a.cause, a.into) for a in p.archives] == [(copy.path, "covered", pinned.path)]


def test_capacity_prunes_the_lowest_retention_and_never_the_protected():
    topics = [
        "billing",
        "search",
        "checkout",
        "inventory",
        "reporting",
        "gateway",
        "catalog",
        "shipping",
        "pricing",
        "media",
        "exports",
        "identity",
    ]
    docs = [memory(f"The {t} service", f"Everything about {t} lives in its own repository.",
                   days=i * 10, name=f"f{i:02d}.md") for i, t in enumerate(topics)]  # fmt: skip
    docs.append(memory("Old pinned", "Pinned long ago.", days=0, front={"pinned": "true"}))
    p = plan(docs, capacity=5)
    pruned = {a.path for a in p.archived("capacity")}
    assert len(pruned) == 8 and p.after == 5
    assert docs[-1].path not in pruned
    assert pruned == {d.path for d in docs[:8]}  # the oldest


def test_stale_memories_are_reported_and_go_first():
    a = memory("Refund flow", "See src/app/refund.ts for the refund flow.", days=390)
    b = memory("Payment flow", "The payment flow is described in the wiki.", days=380)
    p = plan([a, b], capacity=1, stale={a.path: "cites src/app/refund.ts, which no longer exists"})
    assert [n.path for n in p.notices if n.kind == "stale"] == [a.path]
    assert [x.path for x in p.archived("capacity")] == [a.path]


def test_the_plan_does_not_depend_on_input_order():
    docs = [memory("Lint", "Lint with ruff before pushing.", days=d, name=f"l{d}.md")
            for d in (5, 50, 9, 70)]  # fmt: skip
    forward, backward = plan(docs), plan(list(reversed(docs)))
    assert (forward.rewrites, forward.archives) == (backward.rewrites, backward.archives)
    assert forward.rewrites[0].path.endswith("l70.md")


@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    base = tmp_path_factory.mktemp("messy")
    year = generate(base / "year", memories=MESSY_SIZE)
    catalog = MemoryCatalog([MemoryRoot.of(year.root, "project")])
    catalog.scan()
    docs = catalog.snapshot().documents
    stale = {d.path: s.reason for d, s in StalenessChecker(year.workspace).check_all(docs)}
    return year, docs, stale


def test_the_messy_year_plan_matches_its_labels(messy):
    year, docs, stale = messy
    assert len(docs) == MESSY_SIZE
    p = plan_root(docs, root=str(year.root), capacity=year.labels["capacity"], stale=stale)
    agreement = check(p, year.labels, year.root)
    assert agreement.perfect, "\n".join(agreement.lines())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_other_messy_years_never_lose_a_protected_memory_or_act_wrongly(tmp_path, seed):
    """Across seeds: every action is right; only duplicate recall varies (the conflict
    rules leave some reworded CJK duplicates as independent)."""
    year = generate(tmp_path / "year", memories=MESSY_SIZE, seed=seed)
    catalog = MemoryCatalog([MemoryRoot.of(year.root, "project")])
    catalog.scan()
    docs = catalog.snapshot().documents
    stale = {d.path: s.reason for d, s in StalenessChecker(year.workspace).check_all(docs)}
    p = plan_root(docs, root=str(year.root), capacity=year.labels["capacity"], stale=stale)
    a = check(p, year.labels, year.root)
    assert not a.wrong_actions and not a.protected_pruned and not a.false_stale
    assert a.corrections_resolved == a.corrections and a.stale_flagged == a.stale
    assert a.pinned_untouched == a.pinned and a.after <= a.capacity
    assert a.clusters_merged >= 0.7 * a.clusters
    shutil.rmtree(tmp_path / "year")
