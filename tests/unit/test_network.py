"""The memory network: links read as an author means them, rare keywords, the
network kept up to date equal to one built from scratch, activation with its
path, and the rules that let the network's finds join a recall."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_recall.server.documents import path_list
from memory_recall.server.network.activation import ActivationParams, spread
from memory_recall.server.network.graph import MemoryNetwork, NetworkDocument, NetworkParams
from memory_recall.server.network.join import JoinParams, join_candidates, join_fast
from memory_recall.server.network.keywords import keyword_candidates
from memory_recall.server.network.links import (
    body_links,
    front_matter_links,
    path_key,
)


def doc(
    rel: str,
    title: str,
    body: str = "",
    *,
    root: int = 0,
    related: tuple[str, ...] = (),
    supersedes: tuple[str, ...] = (),
    description: str = "",
) -> NetworkDocument:
    return NetworkDocument(
        f"/r{root}/{rel}", rel, root, title, description, body, related, supersedes
    )


# -- links -------------------------------------------------------------------


def test_markdown_links_resolve_relative_to_the_linking_file():
    links = list(
        body_links(
            "billing/invoices.md",
            "Read [the rules](../conventions/tests.md), [this](sibling.md#part) and "
            "[root](/people/priya.md 'Priya'); not [a page](https://x.org/a.md), "
            "[the index](MEMORY.md), [outside](../../etc/x.md) or `[code](code.md)`.\n"
            "[ref]: refs/ref.md\n",
        )
    )
    assert [link.keys[0] for link in links] == [
        path_key("conventions/tests.md"),
        path_key("billing/sibling.md"),
        path_key("people/priya.md"),
        path_key("billing/refs/ref.md"),
    ]
    assert {link.kind for link in links} == {"link"}


def test_wiki_links_with_alias_and_heading_and_code_left_out():
    links = list(
        body_links(
            "a.md",
            "See [[Test rules|the rules]], [[Currency rounding#Lines]], [[notes/deep note]].\n"
            "```\n[[Not a link]]\n```\n",
        )
    )
    assert [link.kind for link in links] == ["wikilink"] * 3
    assert links[0].keys == ("title:test rules",)
    assert links[1].keys == ("title:currency rounding",)
    assert links[2].keys == (path_key("notes/deep note.md"), "title:notes/deep note")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[a.md, 'b c.md']", ("a.md", "b c.md")),
        ("a.md, b.md", ("a.md", "b.md")),
        (["x/y.md", " z.md "], ("x/y.md", "z.md")),
        ("", ()),
        (None, ()),
        ("[]", ()),
    ],
)
def test_front_matter_lists(value, expected):
    assert path_list(value) == expected


def test_front_matter_links_are_root_relative_first():
    (link,) = front_matter_links("team/a.md", ["b.md"], [])
    assert link.kind == "related"
    assert link.keys == (path_key("b.md"), path_key("team/b.md"))


# -- keywords ----------------------------------------------------------------


def test_identifiers_and_names_are_keywords_plain_words_and_numbers_are_not():
    found = keyword_candidates(
        "Postmortem by Priya Raman",
        "job `manifest_sync_v2` and ticket OPS-4127",
        "Set RL_BURST_FACTOR=3 in services/invoicing/totals.ts, fleet.yaml, ZD421, "
        "OpenStreetMap, `deploy-prod`; not `payouts`, 2025-03-11, 10.17, v9.5.37, 11pm, 300dpi, "
        "The Team, e-mail, 部署, Ирина Соколова.",
    )
    keys = {k.removeprefix("kw:") for k in found}
    assert {
        "priya raman", "manifest_sync_v2", "ops-4127", "rl_burst_factor",
        "services/invoicing/totals.ts", "fleet.yaml", "zd421", "openstreetmap",
        "deploy-prod", "ирина соколова",
    } <= keys  # fmt: skip
    assert not {
        "payouts", "2025-03-11", "10.17", "v9.5.37", "11pm", "300dpi", "the team", "e-mail", "部署",
    } & keys  # fmt: skip


def test_a_link_destination_is_the_link_not_a_shared_keyword():
    network = MemoryNetwork.build(
        [
            doc("a.md", "A", "see [the runbook](ops/run_book_v2.md)"),
            doc("b.md", "B", "also [that](ops/run_book_v2.md)"),
            doc("ops/run_book_v2.md", "Runbook"),
        ]
    )
    assert all(n.kind != "keyword" for n in network.neighbours("/r0/a.md"))


# -- the network -------------------------------------------------------------


def small_network() -> MemoryNetwork:
    return MemoryNetwork.build(
        [
            doc(
                "billing/invoices.md",
                "Invoice module",
                "Read [rules](../conv/tests.md). [[Rounding]]",
            ),
            doc("conv/tests.md", "Test rules", "Property tests for arithmetic."),
            doc("conv/rounding.md", "Rounding", "Half-even per line."),
            doc("infra/old.md", "Jenkins deploys", "Run deploy-prod."),
            doc("infra/new.md", "Argo CD", "Merge to env/live.", supersedes=("infra/old.md",)),
            doc(
                "inc/outage.md",
                "Export outage",
                "Job manifest_sync_v2 hung. Written by Priya Raman.",
            ),
            doc("run/sync.md", "Sync runbook", "Restart manifest_sync_v2 with --resume."),
            doc("people/priya.md", "Priya Raman", "Leads the data platform."),
            doc("misc/x.md", "Unrelated", "Nothing here."),
        ]
    )


def steps(network: MemoryNetwork, rel: str) -> set[tuple[str, str, str]]:
    return {
        (n.path.split("/", 2)[2], n.kind, n.direction) for n in network.neighbours(f"/r0/{rel}")
    }


def test_edges_of_every_kind_in_both_directions():
    network = small_network()
    assert steps(network, "billing/invoices.md") == {
        ("conv/tests.md", "link", "forward"),
        ("conv/rounding.md", "wikilink", "forward"),
    }
    assert ("billing/invoices.md", "link", "backward") in steps(network, "conv/tests.md")
    assert steps(network, "infra/old.md") == {("infra/new.md", "supersedes", "backward")}
    outage = steps(network, "inc/outage.md")
    assert ("run/sync.md", "keyword", "forward") in outage
    assert ("people/priya.md", "mention", "forward") in outage
    assert ("inc/outage.md", "mention", "backward") in steps(network, "people/priya.md")
    assert steps(network, "misc/x.md") == set()


def test_superseded_leads_strongly_to_the_new_memory_and_weakly_back():
    network = small_network()
    (to_new,) = network.neighbours("/r0/infra/old.md")
    (to_old,) = network.neighbours("/r0/infra/new.md")
    assert to_new.weight > to_old.weight


def test_a_keyword_held_by_too_many_memories_is_no_edge():
    docs = [doc(f"d{i}.md", f"Doc {i}", "uses shared_helper_v2") for i in range(12)]
    network = MemoryNetwork.build(docs)
    assert network.rare_limit() == 2
    assert list(network.neighbours("/r0/d0.md")) == []


def test_links_stay_in_their_root_titles_prefer_their_root():
    network = MemoryNetwork.build(
        [
            doc("a.md", "A", "[b](b.md) [[Shared]]", root=0),
            doc("b.md", "B", root=1),
            doc("s.md", "Shared", root=1),
            doc("s2.md", "Shared", root=0),
        ]
    )
    assert {n.path for n in network.neighbours("/r0/a.md")} == {"/r0/s2.md"}


def canonical(network: MemoryNetwork) -> dict[str, list[tuple]]:
    out = {}
    for entry_path in sorted(network._entries):
        out[entry_path] = sorted(
            (n.path, n.kind, n.direction, n.keyword, round(n.weight, 9))
            for n in network.neighbours(entry_path)
        )
    return out


_TITLES = ["Alpha", "Beta notes", "Gamma", "Priya Raman", "支付回调", "Delta"]
_BODIES = [
    "see [x](m{a}.md)",
    "see [[{t}]]",
    "job sync_job_{k} failed",
    "ask {t} about it",
    "nothing",
    "see [up](../m{a}.md)",
]


@st.composite
def memory(draw: st.DrawFn) -> NetworkDocument:
    n = draw(st.integers(0, 7))
    folder = draw(st.sampled_from(["", "sub/"]))
    parts = [
        draw(st.sampled_from(_BODIES)).format(
            a=draw(st.integers(0, 7)), t=draw(st.sampled_from(_TITLES)), k=draw(st.integers(0, 2))
        )
        for _ in range(draw(st.integers(0, 3)))
    ]
    related = tuple(f"m{i}.md" for i in draw(st.lists(st.integers(0, 7), max_size=2)))
    supersedes = tuple(f"sub/m{i}.md" for i in draw(st.lists(st.integers(0, 7), max_size=1)))
    return doc(
        f"{folder}m{n}.md",
        draw(st.sampled_from(_TITLES)),
        " ".join(parts),
        related=related,
        supersedes=supersedes,
    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(memory(), max_size=8),
    st.lists(st.one_of(memory(), st.integers(0, 7)), max_size=10),
)
def test_updated_network_equals_one_built_from_scratch(initial, changes):
    live = {d.path: d for d in initial}
    network = MemoryNetwork.build(live.values())
    for change in changes:
        _apply(network, live, change)
        assert canonical(network) == canonical(MemoryNetwork.build(live.values()))
        for index in (network._by_key, network._by_key_any, network._postings):
            # one holder kept as its path, a set only from two on, nothing empty
            assert all(isinstance(h, str) or len(h) >= 2 for h in index.values())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(memory(), max_size=8),
    st.lists(st.one_of(memory(), st.integers(0, 7)), max_size=10),
    st.lists(st.booleans(), min_size=10, max_size=10),
    st.sampled_from([NetworkParams(), NetworkParams(max_keyword_df=2)]),
)
def test_titles_looked_for_later_leave_the_network_as_built_from_scratch(
    initial, changes, settles, params
):
    """The daemon's updates leave a new title's search of earlier bodies for later
    (`mention_budget_s`), and stop it once the title is mentioned too often to be rare
    (`max_keyword_df=2`: three mentioners are enough): whatever changes come before it is
    finished, the network it leaves is the one built from scratch."""
    live = {d.path: d for d in initial}
    network = MemoryNetwork.build(live.values(), params)
    network.mention_budget_s = 0.0  # nothing looked for during an update
    for change, settle in zip(changes, settles, strict=False):
        _apply(network, live, change)
        for _ in range(len(live) + 1):  # ask for steps before and while it looks
            for path in live:
                network.neighbours(path)
            if settle or network.settle_mentions(0.0):
                break
            _scan_one(network)
    assert network.settle_mentions()
    fresh = MemoryNetwork.build(live.values(), params)
    assert canonical(network) == canonical(fresh)
    assert network.edge_count() == fresh.edge_count()


def _apply(
    network: MemoryNetwork, live: dict[str, NetworkDocument], change: NetworkDocument | int
) -> None:
    """One change to `network` and to the memories it should hold: an upsert, or the
    removal of the `change`-th live memory."""
    if isinstance(change, int):
        path = sorted(live)[change % len(live)] if live else "/r0/none.md"
        live.pop(path, None)
        network.remove(path)
    else:
        live[change.path] = change
        network.upsert(change)


def _scan_one(network: MemoryNetwork) -> None:
    """One body of the oldest title's search (a deadline past after the first)."""
    if network._scans:
        title, scan = next(iter(network._scans.items()))
        if network._scan_title(title, scan, deadline=-1.0):
            network._scans.pop(title)


def test_a_title_that_appears_is_found_in_earlier_bodies_only_once_looked_for():
    network = MemoryNetwork.build(
        [doc("a.md", "Alpha", "ask Priya Raman about it"), doc("b.md", "Beta", "nothing")]
    )
    network.mention_budget_s = 0.0
    network.upsert(doc("p.md", "Priya Raman", "the payments lead"))
    assert network.mentions_pending == 1
    assert not [n for n in network.neighbours("/r0/p.md") if n.kind == "mention"]
    assert network.settle_mentions()
    assert network.mentions_pending == 0
    assert [n.path for n in network.neighbours("/r0/p.md") if n.kind == "mention"] == ["/r0/a.md"]


def test_a_title_mentioned_too_often_is_looked_for_again_when_its_mentioners_leave():
    params = NetworkParams(max_keyword_df=2)  # a title is rare with at most 2 mentioners
    bodies = [doc(f"a{i}.md", f"Note {i}", "ask Priya Raman about it") for i in range(5)]
    network = MemoryNetwork.build(bodies, params)
    network.mention_budget_s = 0.0
    network.upsert(doc("p.md", "Priya Raman", "the payments lead"))
    assert network.settle_mentions()
    assert len(network._mentioned_by["priya raman"]) == 3  # enough: not rare, no edge
    assert not [n for n in network.neighbours("/r0/p.md") if n.kind == "mention"]
    network.remove("/r0/a0.md")
    network.upsert(doc("a1.md", "Note 1", "nothing now"))  # two of the three gone
    assert network.settle_mentions()
    fresh = MemoryNetwork.build(
        [
            *bodies[2:],
            doc("a1.md", "Note 1", "nothing now"),
            doc("p.md", "Priya Raman", "the payments lead"),
        ],
        params,
    )
    assert canonical(network) == canonical(fresh)
    assert sorted(network._mentioned_by["priya raman"]) == ["/r0/a2.md", "/r0/a3.md", "/r0/a4.md"]


def test_co_use_edges_are_symmetric_and_saturate():
    network = small_network()
    network.set_co_use(
        {("/r0/misc/x.md", "/r0/conv/tests.md"): 1, ("/r0/misc/x.md", "/r0/conv/rounding.md"): 9}
    )
    weights = {n.path: n.weight for n in network.neighbours("/r0/misc/x.md")}
    assert weights["/r0/conv/rounding.md"] == pytest.approx(network.params.co_use)
    assert weights["/r0/conv/tests.md"] < weights["/r0/conv/rounding.md"]
    assert any(n.path == "/r0/misc/x.md" for n in network.neighbours("/r0/conv/tests.md"))
    network.remove("/r0/misc/x.md")
    assert all(n.kind != "coUse" for n in network.neighbours("/r0/conv/tests.md"))


# -- activation ---------------------------------------------------------------


def test_activation_reaches_linked_memories_with_their_path_and_two_hops_at_most():
    network = MemoryNetwork.build(
        [
            doc("a.md", "A", "[b](b.md)"),
            doc("b.md", "B", "[c](c.md)"),
            doc("c.md", "C", "[d](d.md)"),
            doc("d.md", "D"),
        ]
    )
    reached = {r.path: r for r in spread(network, [("/r0/a.md", 10.0)])}
    assert set(reached) == {"/r0/b.md", "/r0/c.md"}
    assert reached["/r0/b.md"].activation > reached["/r0/c.md"].activation
    assert [h.target for h in reached["/r0/c.md"].hops] == ["/r0/b.md", "/r0/c.md"]
    assert reached["/r0/c.md"].seed == "/r0/a.md"
    assert reached["/r0/c.md"].describe() == "/r0/a.md links to /r0/b.md, which links to /r0/c.md"


def test_weak_seeds_do_not_spread_and_seeds_are_never_returned():
    network = small_network()
    reached = spread(
        network,
        [("/r0/billing/invoices.md", 10.0), ("/r0/conv/tests.md", 9.0), ("/r0/infra/old.md", 1.0)],
    )
    paths = {r.path for r in reached}
    assert "/r0/conv/tests.md" not in paths  # a seed
    assert "/r0/conv/rounding.md" in paths
    assert "/r0/infra/new.md" not in paths  # its seed scored a tenth of the best
    assert spread(network, []) == []
    assert spread(network, [("/r0/billing/invoices.md", 1.0)], ActivationParams(max_hops=0)) == []


def test_a_hub_passes_less_to_each_of_its_links():
    hub_links = " ".join(f"[x{i}](x{i}.md)" for i in range(9))
    network = MemoryNetwork.build(
        [doc("hub.md", "Hub", hub_links), doc("one.md", "One", "[x0](x0.md)")]
        + [doc(f"x{i}.md", f"X{i}") for i in range(9)]
    )
    from_hub = {r.path: r.activation for r in spread(network, [("/r0/hub.md", 1.0)])}
    from_one = {r.path: r.activation for r in spread(network, [("/r0/one.md", 1.0)])}
    assert from_hub["/r0/x0.md"] < from_one["/r0/x0.md"]


# -- joining a recall ---------------------------------------------------------


def test_network_finds_join_candidates_below_the_fast_ones():
    network = small_network()
    lexical = [("/r0/billing/invoices.md", 10.0), ("/r0/misc/x.md", 9.0), ("/r0/infra/old.md", 1.0)]
    reached = spread(network, lexical)
    joined = join_candidates(lexical, reached)
    assert [j.path for j in joined[:2]] == ["/r0/billing/invoices.md", "/r0/misc/x.md"]
    network_found = [j for j in joined if j.reached is not None]
    assert {j.path for j in network_found} >= {"/r0/conv/tests.md", "/r0/conv/rounding.md"}
    assert all(j.reached.hops for j in network_found)
    assert joined.index(network_found[0]) < joined.index(
        next(j for j in joined if j.path.endswith("old.md"))
    )
    assert join_candidates([], reached) == []


def test_fast_rules_are_conservative():
    network = small_network()
    alone = [("/r0/billing/invoices.md", 10.0)]
    reached = spread(network, alone)
    paths, added = join_fast(alone, reached, JoinParams(fast_rule="free-slot"))
    assert len(paths) == 2 and added is not None and added.hops[0].kind in {"link", "wikilink"}
    assert join_fast(alone, reached, JoinParams(fast_rule="never")) == (
        ["/r0/billing/invoices.md"],
        None,
    )
    full = [("/r0/billing/invoices.md", 10.0), ("/r0/misc/x.md", 9.0)]
    reached = spread(network, full)
    assert join_fast(full, reached, JoinParams(fast_rule="free-slot"))[1] is None
    assert join_fast(full, reached, JoinParams(fast_rule="weak-second"))[1] is None
    weak = [("/r0/billing/invoices.md", 10.0), ("/r0/misc/x.md", 2.0)]
    paths, added = join_fast(weak, spread(network, weak), JoinParams(fast_rule="weak-second"))
    assert paths[0] == "/r0/billing/invoices.md" and added is not None and paths[1] == added.path


def test_the_superseding_memory_follows_a_superseded_one_into_the_fast_result():
    network = small_network()
    fast = [("/r0/infra/old.md", 10.0), ("/r0/misc/x.md", 9.0)]
    paths, added = join_fast(fast, spread(network, fast), JoinParams(fast_rule="superseded"))
    assert paths == ["/r0/infra/old.md", "/r0/infra/new.md"]
    assert added is not None and added.hops[0].describe() == "is superseded by"
    # The other way round (from the new memory to the outdated one) never joins.
    fast = [("/r0/infra/new.md", 10.0)]
    assert join_fast(fast, spread(network, fast), JoinParams(fast_rule="superseded"))[1] is None
    # Never in the place of the memory it corrects: second in the fast result, the older
    # may hold the answer (a lean, or one line of a long memory corrected).
    fast = [("/r0/misc/x.md", 10.0), ("/r0/infra/old.md", 9.0)]
    rule = JoinParams(fast_rule="superseded")
    assert join_fast(fast, spread(network, fast), rule)[0] == ["/r0/misc/x.md", "/r0/infra/old.md"]
