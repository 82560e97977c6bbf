"""The demo's stand-in model picks like a good model would, or stays silent."""

from __future__ import annotations

from memory_recall.protocol.messages import SelectCandidate, SelectParams
from memory_recall.server.cli.demo import stand_in_selection

MANIFEST = [
    SelectCandidate(
        path="deploy-freeze.md",
        type="project",
        mtime_ms=1.0,
        description="No deploys on Friday afternoon; the release train leaves Thursday",
    ),
    SelectCandidate(
        path="release/einvoicing-deadline.md",
        type="project",
        mtime_ms=1.0,
        description="The EU e-invoicing launch is on the 30th of the month",
    ),
    SelectCandidate(
        path="incidents/pg-pool.md",
        type="project",
        mtime_ms=1.0,
        description="Postgres pool exhaustion: the API ran out of connections",
    ),
    SelectCandidate(
        path="incidents/disk-full.md",
        type="project",
        mtime_ms=1.0,
        description="Инцидент: закончилось место на диске на сервере сборки",
    ),
]


def _select(query: str, limit: int = 5) -> list[str]:
    params = SelectParams(query=query, candidates=MANIFEST, limit=limit, recent_tools=[])
    return stand_in_selection(params)


def test_it_picks_the_memory_that_answers_not_every_one_sharing_a_word() -> None:
    assert _select("Can I deploy the release on Friday afternoon?") == ["deploy-freeze.md"]


def test_it_reads_other_scripts() -> None:
    assert _select("закончилось место на диске") == ["incidents/disk-full.md"]


def test_it_stays_silent_when_nothing_matches() -> None:
    assert _select("zebra giraffe") == []


def test_it_never_returns_more_than_the_limit_or_paths_outside_the_manifest() -> None:
    chosen = _select("the", limit=1)
    assert len(chosen) <= 1
    assert set(chosen) <= {c.path for c in MANIFEST}
