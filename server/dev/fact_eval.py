"""`memory-recall dev eval-facts`: the write side's judgement measured per tier and language
(docs/writing.md, "Measuring").

Two kinds of labelled sets (fixtures/conflicts/):

- pairs (slots.json, tuned on; slots-blind.json, never tuned on; and the older
  pairs.json / pairs-blind.json): each pair judged as `remember` would, the final
  action compared with the label's (duplicate → unchanged, update → updated,
  independent → created). A loss is an independent pair answered updated or unchanged
  (a fact overwritten or dropped) or a real update answered unchanged (the new fact
  dropped). Updates also check the partial rewrite: `keep` lines byte for byte, no
  `gone` value left in the title, description or body, every `expect` value present;
- update histories (histories.json, histories-blind.json): background facts, then the
  steps, each remembered through the real writer into a fresh root; each question is
  recalled (the lexical refined phase, newer wins applied) and counts as newest-only
  when a delivered memory holds the answer and none holds a stale value, and as flagged
  when the memories holding stale values are all marked as perhaps corrected by a
  delivered newer one (an unsettled lean: both delivered). A memory a recall hid as
  superseded by one that a perfect model calls independent of it (`wronglyHidden`,
  distinct pairs) is a fact taken out of sight; a background fact missing from the root
  afterwards is a loss.

Tiers, each measured on its own: `rules` (the floor); `vectors` (the rules, then the
bundled measuring encoder on the pairs left unsure: Universal Sentence Encoder
multilingual v3 from the `eval-semantic` extra, `make eval-semantic`); `model` (then a
scripted model that answers each unsure pair with its label: what validation lets a
perfect model do) and `liar` (a scripted model that answers the opposite: zero losses
must survive it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.core.writing import categorize
from memory_recall.server.facts.judgement import Judgement, MemoryText, judge
from memory_recall.server.facts.rewrite import rewrite
from memory_recall.server.facts.tiers import (
    ModelTier,
    Question,
    Tier,
    VectorTier,
    settle_all,
)
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.recall.service import RecallRequest, lexical_phases
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.metadata import derive
from memory_recall.server.store.requests import RememberRequest
from memory_recall.server.store.state import StateStore
from memory_recall.server.store.writer import MemoryWriter

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "conflicts"
PAIR_SETS = ("slots", "slots-blind", "pairs", "pairs-blind")
HISTORY_SETS = ("histories", "histories-blind")
TIERS = ("rules", "vectors", "model", "liar")
ACTION = {"duplicate": "unchanged", "update": "updated", "independent": "created"}
# What a lying model answers: whatever would lose a fact if it were believed.
LIE = {"independent": "update", "update": "duplicate", "duplicate": "update"}


def memory_of(raw: dict[str, Any]) -> MemoryText:
    """A labelled memory: as given, or as `remember` would write its text."""
    if "text" in raw:
        derived = derive(raw["text"])
        return MemoryText(derived.title, derived.description, raw["text"], derived.type)
    return MemoryText(
        raw["title"], raw.get("description", ""), raw["body"], raw.get("type", "project")
    )


# -- tiers -------------------------------------------------------------------------------


def vector_tier() -> VectorTier | None:
    """The measuring encoder in-process, or None when the extra is not installed."""
    try:
        from memory_recall.server.dev.embed_server import UseEncoder

        encoder = UseEncoder()
    except ImportError:
        return None

    async def embed(texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(encoder, texts)

    return VectorTier(embed)


class ScriptedReconcile:
    """A scripted model for the `reconcile` task: each pair answered by `truth` (old text,
    new text → verdict), or, when `lies`, with whatever would lose a fact."""

    def __init__(self, truth: Callable[[str, str], str], lies: bool = False) -> None:
        self.truth = truth
        self.lies = lies
        self.asked = 0

    async def __call__(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
        self.asked += 1
        prompt = messages[-1]["content"]
        answers = []
        for block in prompt.split("## pair ")[1:]:
            pair_id, _, rest = block.partition("\n")
            old, _, new = rest.partition("\n\nNEW:\n")
            verdict = self.truth(old.removeprefix("OLD:\n"), new)
            answers.append(
                {"id": pair_id.strip(), "verdict": LIE[verdict] if self.lies else verdict}
            )
        return json.dumps({"pairs": answers})


def _key(text: str) -> str:
    return " ".join(text.split())[:400]


def _shown(memory: MemoryText) -> str:
    return "\n".join(p for p in (memory.title, memory.description, memory.body) if p)


def tiers_for(
    name: str, vectors: VectorTier | None, truth: Callable[[str, str], str]
) -> list[Tier]:
    stack: list[Tier] = []
    if name in ("vectors", "model", "liar") and vectors is not None:
        stack.append(vectors)
    if name in ("model", "liar"):
        stack.append(ModelTier(ScriptedReconcile(truth, lies=name == "liar")))
    return stack


# -- pairs -------------------------------------------------------------------------------


@dataclass
class Tally:
    pairs: int = 0
    right: int = 0
    overwritten: int = 0  # independent pairs answered updated or unchanged
    dropped: int = 0  # real updates answered unchanged
    # Independent pairs created but linked as a possible update or duplicate: nothing is
    # lost, but the prompt marks the new memory as perhaps correcting an unrelated one,
    # and the network delivers that one beside it.
    linked: int = 0
    # Updates and duplicates created with no link: both versions delivered unmarked.
    missed: int = 0
    rewrites: int = 0  # updates with keep/gone/expect checks that were rewritten
    rewrites_ok: int = 0

    @property
    def losses(self) -> int:
        return self.overwritten + self.dropped

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pairs": self.pairs,
            "right": round(self.right / self.pairs, 4) if self.pairs else 1.0,
            "losses": self.losses,
            "overwritten": self.overwritten,
            "dropped": self.dropped,
            "falselyLinked": self.linked,
            "missedUnlinked": self.missed,
        }
        if self.rewrites:
            out["rewritesRight"] = f"{self.rewrites_ok}/{self.rewrites}"
        return out


@dataclass
class PairReport:
    name: str
    tier: str
    all: Tally = field(default_factory=Tally)
    languages: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    classes: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    errors: list[str] = field(default_factory=list)


def _rewrite_ok(pair: dict[str, Any], old: MemoryText, judgement: Judgement) -> bool:
    done = rewrite(old, judgement)
    text = f"{done.title}\n{done.description}\n{done.body}"
    if any(line not in done.body for line in pair.get("keep", ())):
        return False
    if any(_holds(text, value) for value in pair.get("gone", ())):
        return False
    return all(value in done.body for value in pair.get("expect", ()))


async def evaluate_pairs(name: str, tier: str, vectors: VectorTier | None) -> PairReport:
    data = json.loads((FIXTURES / f"{name}.json").read_text("utf-8"))
    report = PairReport(name, tier)
    questions: list[Question] = []
    judged: list[tuple[dict[str, Any], MemoryText, MemoryText, Judgement]] = []
    truth: dict[tuple[str, str], str] = {}
    for n, pair in enumerate(data["pairs"]):
        old, new = memory_of(pair["old"]), memory_of(pair["new"])
        found = judge(new, old)
        judged.append((pair, old, new, found))
        if not found.sure and found.kind != "independent":
            questions.append(Question(f"p{n}", new, old, found))
            truth[(_key(_shown(old)[:1500]), _key(_shown(new)[:1500]))] = pair["verdict"]
    stack = tiers_for(
        tier, vectors, lambda old, new: truth.get((_key(old), _key(new)), "independent")
    )
    settled = await settle_all(stack, questions) if stack else {}
    for n, (pair, old, _new, found) in enumerate(judged):
        final = settled.get(f"p{n}", found)
        action = ACTION[final.kind] if final.sure else "created"
        wanted = ACTION[pair["verdict"]]
        overwritten = wanted == "created" and action != "created"
        dropped = wanted == "updated" and action == "unchanged"
        leans = not final.sure and final.kind != "independent"
        linked = wanted == "created" and leans
        missed = wanted != "created" and action == "created" and not leans
        for tally in (
            report.all,
            report.languages[pair.get("lang", "?")],
            report.classes[pair.get("class", pair["verdict"])],
        ):
            tally.pairs += 1
            tally.right += action == wanted
            tally.overwritten += overwritten
            tally.dropped += dropped
            tally.linked += linked
            tally.missed += missed
            if (
                action == "updated"
                and wanted == "updated"
                and (pair.get("keep") or pair.get("gone") or pair.get("expect"))
            ):
                tally.rewrites += 1
                tally.rewrites_ok += _rewrite_ok(pair, old, final)
        if linked:
            report.errors.append(
                f"{pair['id']:<12} {pair['verdict']:>11} -> linked    ({final.kind}, unsure)"
                f" {final.reason}"
            )
        if action != wanted:
            loss = " LOSS" if overwritten or dropped else ""
            report.errors.append(
                f"{pair['id']:<12} {pair['verdict']:>11} -> {action:<9} ({final.kind},"
                f" {'sure' if final.sure else 'unsure'}) {final.reason}{loss}"
            )
    return report


# -- histories ---------------------------------------------------------------------------


def _holds(text: str, value: str) -> bool:
    """`value` in `text` as a whole word where its script spaces words ("s3://sauv-prod"
    is not in "s3://sauv-prod-eu"; "王磊" is in any Chinese sentence that says it)."""
    left = r"(?<![\p{L}\p{N}_-])" if regex.match(r"[\p{Latin}\p{Cyrillic}\p{N}]", value[:1]) else ""
    right = (
        r"(?![\p{L}\p{N}_-])" if regex.match(r"[\p{Latin}\p{Cyrillic}\p{N}]", value[-1:]) else ""
    )
    return regex.search(left + regex.escape(value) + right, text, regex.IGNORECASE) is not None


@dataclass
class HistoryTally:
    questions: int = 0
    newest_only: int = 0
    # The answer delivered, and every memory holding a stale value marked as perhaps
    # corrected by a delivered newer one (`perhapsCorrects`: an unsettled lean).
    flagged: int = 0
    # Memories a recall hid as superseded by one a perfect model would call independent
    # of it: a fact taken out of the agent's sight on a wrong verdict.
    wrongly_hidden: int = 0
    losses: int = 0  # background facts gone from the root

    def figures(self) -> dict[str, Any]:
        def share(n: int) -> float:
            return round(n / self.questions if self.questions else 1.0, 4)

        return {
            "questions": self.questions,
            "newestOnly": share(self.newest_only),
            "newestOrFlagged": share(self.newest_only + self.flagged),
            "wronglyHidden": self.wrongly_hidden,
            "losses": self.losses,
        }


@dataclass(frozen=True)
class Replayed:
    """One history under one tier: its figures and what went wrong."""

    questions: int
    newest: int
    flagged: int
    wrongly_hidden: int
    losses: int
    errors: list[str]


@dataclass
class HistoryReport:
    name: str
    tier: str
    all: HistoryTally = field(default_factory=HistoryTally)
    languages: dict[str, HistoryTally] = field(default_factory=lambda: defaultdict(HistoryTally))
    errors: list[str] = field(default_factory=list)


def _history_truth(history: dict[str, Any]) -> Callable[[str, str], str]:
    """What a perfect model would answer for two memories of a history: the same slot when
    both hold a value of one question (its answer or a stale value), the same text when
    one holds the other's words."""

    def slot(text: str) -> int | None:
        for n, q in enumerate(history["questions"]):
            if any(_holds(text, v) for v in [*q["answer"], *q["stale"]]):
                return n
        return None

    def truth(old: str, new: str) -> str:
        a, b = slot(old), slot(new)
        if a is not None and a == b:
            values = [v for q in history["questions"] for v in [*q["answer"], *q["stale"]]]
            same = {v for v in values if _holds(old, v)} == {v for v in values if _holds(new, v)}
            return "duplicate" if same else "update"
        return "independent"

    return truth


async def replay(
    history: dict[str, Any], tier: str, vectors: VectorTier | None, work: Path
) -> Replayed:
    """One history written under one tier, then asked its questions."""
    root_dir = work / history["id"] / tier
    root_dir.mkdir(parents=True)
    catalog = MemoryCatalog([MemoryRoot.of(root_dir, "project")])
    catalog.scan()
    state = StateStore(work / history["id"] / f"{tier}.sqlite3")
    writer = MemoryWriter(catalog, state, ranker=RANKERS[DEFAULT_RANKER], categorize=categorize)
    writer.tiers = tiers_for(tier, vectors, _history_truth(history))
    for text in [*history["background"], *history["steps"]]:
        await writer.run_async("remember", RememberRequest(text=text, type="project"))
    errors = []
    on_disk = "\n".join(
        p.read_text("utf-8") for p in root_dir.rglob("*.md") if p.name != "MEMORY.md"
    )
    losses = sum(1 for fact in history["background"] if fact not in on_disk)
    if losses:
        errors.append(f"{history['id']}: a background fact is gone")
    truth = _history_truth(history)
    by_path = {d.path: d for d in catalog.snapshot().documents}
    newest = flagged = 0
    hidden: set[tuple[str, str]] = set()  # (older, newer) pairs hidden on a wrong verdict
    for question in history["questions"]:
        _fast, refined = lexical_phases(
            catalog.snapshot(), RecallRequest("eval", question["query"]), RANKERS[DEFAULT_RANKER]
        )
        delivered = [f"{d.title}\n{d.description}\n{d.body}" for d in refined.docs]
        has_answer = any(all(_holds(t, a) for a in question["answer"]) for t in delivered)
        stale = [v for v in question["stale"] if any(_holds(t, v) for t in delivered)]
        marked = {m.path for d in refined.docs for m in d.perhaps_corrects or ()}
        stale_docs = {
            d.path
            for d, t in zip(refined.docs, delivered, strict=True)
            if any(_holds(t, v) for v in question["stale"])
        }
        for d in refined.docs:
            for mark in d.supersedes or ():
                older = by_path[mark.path]
                pair = (mark.path, d.path)
                if pair not in hidden and truth(older.body, by_path[d.path].body) == "independent":
                    hidden.add(pair)
                    errors.append(f"{history['id']}: {older.body!r} hidden by {d.body!r}")
        if has_answer and not stale:
            newest += 1
        elif has_answer and stale_docs <= marked:
            flagged += 1
        else:
            why = "no answer" if not has_answer else f"stale {', '.join(stale)}"
            errors.append(
                f"{history['id']}: {question['query']} ({why}; {len(delivered)} delivered)"
            )
    state.close()
    questions = len(history["questions"])
    return Replayed(questions, newest, flagged, len(hidden), losses, errors)


async def evaluate_histories(name: str, tier: str, vectors: VectorTier | None) -> HistoryReport:
    data = json.loads((FIXTURES / f"{name}.json").read_text("utf-8"))
    report = HistoryReport(name, tier)
    with tempfile.TemporaryDirectory(prefix="facts-eval-") as work:
        for history in data["histories"]:
            done = await replay(history, tier, vectors, Path(work))
            for tally in (report.all, report.languages[history["lang"]]):
                tally.questions += done.questions
                tally.newest_only += done.newest
                tally.flagged += done.flagged
                tally.wrongly_hidden += done.wrongly_hidden
                tally.losses += done.losses
            report.errors += done.errors
    return report


# -- the command ---------------------------------------------------------------------------


def _line(name: str, figures: dict[str, Any]) -> str:
    return f"  {name:<6} " + "  ".join(f"{k} {v}" for k, v in figures.items())


async def run(tiers: Sequence[str], sets: Sequence[str], show_errors: bool) -> dict[str, Any]:
    vectors = vector_tier() if any(t != "rules" for t in tiers) else None
    if vectors is None and any(t != "rules" for t in tiers):
        print("(vectors: the measuring encoder is not installed — `make eval-semantic`; the"
              " vector tier is left out, the model tiers run on the rules alone)")  # fmt: skip
    out: dict[str, Any] = {}
    for name in sets:
        for tier in tiers:
            if tier == "vectors" and vectors is None:
                continue
            if name in HISTORY_SETS:
                h = await evaluate_histories(name, tier, vectors)
                out.setdefault(name, {})[tier] = {
                    "all": h.all.figures(),
                    "languages": {k: v.figures() for k, v in sorted(h.languages.items())},
                }
                print(f"{name} [{tier}]: {json.dumps(h.all.figures())}")
                for lang, history_tally in sorted(h.languages.items()):
                    print(_line(lang, history_tally.figures()))
                errors = h.errors
            else:
                p = await evaluate_pairs(name, tier, vectors)
                out.setdefault(name, {})[tier] = {
                    "all": p.all.figures(),
                    "languages": {k: v.figures() for k, v in sorted(p.languages.items())},
                    "classes": {k: v.figures() for k, v in sorted(p.classes.items())},
                }
                print(f"{name} [{tier}]: {json.dumps(p.all.figures())}")
                for lang, tally in sorted(p.languages.items()):
                    print(_line(lang, tally.figures()))
                for cls, tally in sorted(p.classes.items()):
                    print(_line(cls[:6], tally.figures()) + f"   ({cls})")
                errors = p.errors
            if show_errors:
                for error in errors:
                    print("    " + error)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-recall dev eval-facts", description=__doc__)
    parser.add_argument("--tiers", default=",".join(TIERS), help=f"comma-separated of {TIERS}")
    parser.add_argument("--sets", default=",".join(PAIR_SETS + HISTORY_SETS))
    parser.add_argument("--errors", action="store_true", help="list every wrong answer")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = parser.parse_args(argv)
    tiers = [t for t in args.tiers.split(",") if t]
    sets = [s for s in args.sets.split(",") if s]
    figures = asyncio.run(run(tiers, sets, args.errors))
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
