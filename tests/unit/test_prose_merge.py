"""The model rewords consolidation's merges, and the rules keep it honest (docs/organisation.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from memory_recall.server.models.complete import CompletionError, CompletionRequest
from memory_recall.server.organise.dream import Dreamer
from memory_recall.server.organise.prose import ProseMerger, anchors, check_answer
from memory_recall.server.store.files import ARCHIVE_DIR

from tests.unit.test_dream import World, files


def test_anchors_are_what_an_agent_would_copy():
    text = (
        "Run `make test` before pushing; see docs/setup.md and https://ci.example.com/job/7.\n"
        "Set RETRY_LIMIT to 3 with --retries, the helper is loadConfig in config_loader.py."
    )
    found = anchors(text)
    for span in [
        "`make test`",
        "docs/setup.md",
        "https://ci.example.com/job/7",
        "RETRY_LIMIT",
        "3",
        "--retries",
        "loadConfig",
        "config_loader.py",
    ]:
        assert span in found, span
    assert "before" not in found and "pushing" not in found  # plain words may be reworded


def test_anchors_in_other_scripts_keep_their_numbers_and_code():
    found = anchors("部署前运行 `npm ci`，端口是 8443。Порт 8443, файл src/main.rs")
    assert {"`npm ci`", "8443", "src/main.rs"} <= found


GLUED = "Use pnpm, not npm.\n\nRun `pnpm install --frozen-lockfile` in CI (Node 20)."
BODIES = ["Use pnpm, not npm.", "Run `pnpm install --frozen-lockfile` in CI (Node 20)."]


def answer(body: str) -> str:
    return json.dumps({"body": body})


def test_an_answer_that_keeps_every_anchor_is_taken():
    body = check_answer(
        answer("Use pnpm (not npm): CI runs `pnpm install --frozen-lockfile` on Node 20."),
        BODIES,
        GLUED,
    )
    assert body.startswith("Use pnpm") and body.endswith("\n")


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (answer("Use pnpm in CI on Node 20."), "drops '`pnpm install --frozen-lockfile`'"),
        (answer("Use pnpm: `pnpm install --frozen-lockfile`, Node 18."), "drops '20'"),
        ("Sure! Here is the merged note.", "not JSON"),
        (json.dumps({"text": "x"}), "expected"),
        (answer("   "), "expected"),
        (answer("---\ntitle: x\n---\n" + GLUED), "front matter"),
        (answer(GLUED + "\n" + "padding " * 200), "longer than the notes"),
        (
            answer(GLUED + "\nAWS key AKIAIOSFODNN7EXAMPLF for the deploy."),
            "credential",
        ),
    ],
)
def test_an_answer_that_breaks_a_rule_is_refused_with_the_reason(reply, why):
    with pytest.raises(CompletionError, match=why):
        check_answer(reply, BODIES, GLUED)


class ScriptedModel:
    """A completer answering each consolidate request with `reply(notes)`."""

    kind = "scripted"

    def __init__(self, reply, delay_s: float = 0.0) -> None:
        self.reply = reply
        self.delay_s = delay_s
        self.requests: list[CompletionRequest] = []

    async def complete(self, request: CompletionRequest) -> str:
        self.requests.append(request)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        notes = json.loads(request.messages[-1]["content"].split("\n", 1)[1])
        return self.reply(notes)


def reworded(notes) -> str:
    """A faithful model: one paragraph holding every line of every note."""
    lines = []
    for note in notes:
        for line in note["body"].splitlines():
            if line.strip() and line.strip() not in lines:
                lines.append(line.strip())
    return answer("In short: " + " ".join(lines))


def careless(notes) -> str:
    return answer(notes[0]["body"].split("\n")[0])  # keeps only the newest note's first line


def dream(world: World, model: ScriptedModel, deadline_s: float = 5.0):
    dreamer = Dreamer(world.writer, world.organiser, prose=ProseMerger(model, deadline_s))
    return asyncio.run(dreamer.run_async(0))


def test_a_faithful_model_writes_the_merged_text_and_one_undo_restores_everything(
    tmp_path: Path,
):
    world = World(tmp_path, memories=60)
    root = world.year.root
    before = files(root)
    model = ScriptedModel(reworded)
    run = dream(world, model)
    merges = [r for r in run.plan.rewrites if r.merged_from]
    assert merges and model.requests
    assert all(r.task == "consolidate" for r in model.requests)
    by_model = [r for r in merges if r.merged_by == "model"]
    assert by_model, [r.merge_note for r in merges]
    for rewrite in by_model:
        text = Path(rewrite.path).read_text("utf-8")
        assert "In short: " in text
        assert text.startswith("---\n")  # the front matter is kept
    world.writer.undo(run.operation)
    assert files(root) == before
    assert not (root / ARCHIVE_DIR).exists()


def test_a_careless_model_is_overruled_by_the_rules_and_says_why(tmp_path: Path):
    world = World(tmp_path, memories=60)
    plain = world.organiser.plan_for(0, world.dreamer._docs(0))
    run = dream(world, ScriptedModel(careless))
    merges = [r for r in run.plan.rewrites if r.merged_from]
    dropping = [r for r in merges if "drops" in r.merge_note]
    assert dropping
    expected = {r.path: r.body for r in plain.rewrites}
    for rewrite in dropping:
        assert rewrite.merged_by == "rules"
        assert rewrite.body == expected[rewrite.path]  # the line-keeping merge, unchanged


def test_a_model_past_its_deadline_leaves_the_rules_merge(tmp_path: Path):
    world = World(tmp_path, memories=60)
    model = ScriptedModel(reworded, delay_s=1.0)
    run = dream(world, model, deadline_s=0.05)
    pruned = {a.path for a in run.plan.archives}
    merges = [r for r in run.plan.rewrites if r.merged_from and r.path not in pruned]
    assert len(merges) >= 2
    assert all(r.merged_by == "rules" and "timed out" in r.merge_note for r in merges)
    assert len(model.requests) == 1  # not asked again after its first timeout
    assert run.operation is not None


def test_a_dry_run_never_asks_the_model(tmp_path: Path):
    world = World(tmp_path, memories=60)
    model = ScriptedModel(reworded)
    dreamer = Dreamer(world.writer, world.organiser, prose=ProseMerger(model, 5.0))
    asyncio.run(dreamer.run_async(0, dry_run=True))
    assert model.requests == []
