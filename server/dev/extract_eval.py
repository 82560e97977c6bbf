"""`memory-recall dev eval-extract`: the extraction pipeline against labelled sessions.

Each case of the corpus (fixtures/extract/corpus.json) is a coding session,
the memories its root already holds, the memories a good extractor should
leave, and the secrets that must never leave the process. The harness runs
the real pipeline (assemble → model → strict parse) against any
OpenAI-compatible model, then writes each item exactly as `memory/extract`
does (server/core/extracting.py: the quality gate with origin `extract`,
conflict detection against the root's memories and the items written before
it, the atomic journaled write) into a fresh root holding the case's
memories, and scores what was written:

- a label is found when the ranker (`default`, BM25F with silence), asked
  the label's title and description, ranks a written memory first among
  those not matched yet; a label naming an `existing` memory is found when
  that memory was updated (or, for `unchanged` labels, left as it was or
  updated);
- precision = written memories that found a label / memories written
  (created + updated), recall = labels found / labels;
- duplicates created = new files for a fact the root already held (a label
  with `existing`); two items of one answer saying the same thing meet in the
  conflict rules (the second is decided against the first);
- secrets leaked = labelled secrets (and anything the detector finds) in what
  was sent to the model or written: must be 0.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.extract.parse import ExtractedItem
from memory_recall.server.extract.pipeline import ExtractionInput, run_extraction
from memory_recall.server.extract.transcript import ExistingMemory, Turn, clean
from memory_recall.server.models.complete import Completer
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.roots import Scope
from memory_recall.server.store.secrets import find_secrets

MATCH_RANKER = "default"
DEFAULT_DEADLINE_S = 30.0  # the daemon's model ceiling (docs/recall.md)


@dataclass
class Decided:
    """One item as the store would treat it."""

    item: ExtractedItem
    action: str  # created | updated | unchanged | skipped
    path: str
    reason: str


@dataclass
class CaseResult:
    id: str
    language: str
    category: str
    labels: int
    found: int = 0
    written: int = 0
    written_matched: int = 0
    duplicates: int = 0
    leaks: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    failure: str | None = None
    model_ms: float | None = None
    decided: list[Decided] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "labels": self.labels,
            "found": self.found,
            "written": self.written,
            "writtenMatched": self.written_matched,
            "duplicates": self.duplicates,
            "leaks": self.leaks,
            "skipped": self.skipped,
            "failure": self.failure,
            "modelMs": self.model_ms,
            "actions": [f"{d.action} {d.path} ({d.reason})" for d in self.decided],
        }


@dataclass
class ExtractEvalReport:
    model: str
    cases: list[CaseResult]
    elapsed_s: float

    def _sum(self, name: str) -> int:
        return sum(getattr(c, name) for c in self.cases)

    @property
    def precision(self) -> float:
        written = self._sum("written")
        return self._sum("written_matched") / written if written else 1.0

    @property
    def recall(self) -> float:
        labels = self._sum("labels")
        return self._sum("found") / labels if labels else 1.0

    def as_json(self) -> dict[str, Any]:
        by_language: dict[str, list[CaseResult]] = defaultdict(list)
        for case in self.cases:
            by_language[case.language].append(case)
        silent = [c for c in self.cases if c.labels == 0]
        skipped: dict[str, int] = defaultdict(int)
        for case in self.cases:
            for reason, count in case.skipped.items():
                skipped[reason] += count
        return {
            "model": self.model,
            "cases": len(self.cases),
            "languages": sorted(by_language),
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "labels": self._sum("labels"),
            "found": self._sum("found"),
            "written": self._sum("written"),
            "duplicatesCreated": self._sum("duplicates"),
            "secretsLeaked": self._sum("leaks"),
            "nothingWrittenWhereNothingExpected": (
                f"{sum(c.written == 0 for c in silent)}/{len(silent)}"
            ),
            "skipped": dict(sorted(skipped.items())),
            "modelFailures": sum(c.failure is not None for c in self.cases),
            "elapsedS": round(self.elapsed_s, 1),
            "perCase": [c.as_json() for c in self.cases],
        }


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text("utf-8"))
    cases: list[dict[str, Any]] = data["cases"]
    return cases


def routes(cases: Sequence[dict[str, Any]]) -> dict[str, str]:
    """The scripted model's routing: a case's first user words → its prepared answer.

    The words are taken as the model sees them: redacted.
    """
    table = {}
    for case in cases:
        first = next(t["content"] for t in case["transcript"] if t["role"] == "user")
        table[clean(first.strip())[0][:60]] = json.dumps(case["scripted"], ensure_ascii=False)
    return table


def _document(path: str, title: str, description: str, body: str, type_: str) -> MemoryDocument:
    return MemoryDocument(
        path=path,
        relative_path=path,
        scope=Scope.PROJECT,
        type=type_,  # type: ignore[arg-type]
        title=title,
        description=description,
        body=body,
        mtime_ms=1.0,
    )


def score_case(case: dict[str, Any], decided: list[Decided], sent: str) -> CaseResult:
    result = CaseResult(case["id"], case["language"], case["category"], len(case["expected"]))
    written = [d for d in decided if d.action in {"created", "updated"}]
    result.written = len(written)
    docs = {
        d.path: _document(d.path, d.item.title, d.item.description, d.item.body, d.item.type)
        for d in written
    }
    spec = RANKERS[MATCH_RANKER]
    matched: set[str] = set()
    for label in case["expected"]:
        existing = label.get("existing")
        if existing:
            actions = {d.action for d in decided if d.path == existing}
            wanted = {"updated"} if label["action"] == "updated" else {"updated", "unchanged"}
            if actions & wanted:
                result.found += 1
                if existing in docs:
                    matched.add(existing)
        remaining = [doc for path, doc in docs.items() if path not in matched]
        if not remaining:
            continue
        query = f"{label['title']}\n{label['description']}"
        shortlist = build_shortlist(
            CorpusView.of(remaining), query, ranker=spec.rank, tokenizer=spec.tokenize
        )
        if not shortlist.ranked:
            continue
        top = shortlist.ranked[0].document.path
        created = next(d for d in written if d.path == top).action == "created"
        if existing and created:
            result.duplicates += 1  # a new file for a fact the root already held
            matched.add(top)
        elif not existing:
            result.found += 1
            matched.add(top)
    result.written_matched = len(matched & set(docs))
    texts = [sent] + [f"{d.item.title}\n{d.item.description}\n{d.item.body}" for d in written]
    result.leaks = sum(text.count(secret) for secret in case.get("secrets", []) for text in texts)
    result.leaks += sum(len(find_secrets(text)) for text in texts[1:])
    return result


async def write_items(
    items: Sequence[ExtractedItem], case: dict[str, Any], workspace: Path
) -> list[Decided]:
    """The items through the daemon's own write path, into a fresh root holding the case's
    memories: gate, conflicts, atomic journaled writes (server/core/extracting.py)."""
    from memory_recall.protocol.messages import ExtractParams
    from memory_recall.server.catalog.catalog import MemoryCatalog
    from memory_recall.server.core.extracting import ExtractionService
    from memory_recall.server.core.writing import WriteSide, result_wire
    from memory_recall.server.ranking.registry import DEFAULT_RANKER
    from memory_recall.server.roots import MemoryRoot
    from memory_recall.server.store.state import StateStore

    root = workspace / "memory"
    for memory in case["existing"]:
        path = root / memory["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\nname: {memory['title']}\ndescription: {memory['description']}\n"
            f"type: {memory['type']}\n---\n{memory['body']}\n",
            encoding="utf-8",
        )
    root.mkdir(parents=True, exist_ok=True)
    catalog = MemoryCatalog([MemoryRoot.of(str(root), "project")])
    catalog.scan()
    state = StateStore(workspace / "state.sqlite3")
    side = WriteSide(catalog, RANKERS[DEFAULT_RANKER], state=state)
    docs = {d.relative_path: d for d in catalog.snapshot().documents}
    params = ExtractParams(trigger="sessionEnd", scope="project")
    decided: list[Decided] = []
    for item in items:
        kind, request = ExtractionService._write_request(item, params, docs, True)
        if kind == "skip":
            decided.append(Decided(item, "skipped", "", request.reason))  # type: ignore[attr-defined]
            continue
        result = result_wire(await side.writer.run_async(kind, request))
        for skip in result.skipped:
            decided.append(Decided(item, "skipped", "", skip.reason))
        for operation in result.operations:
            relative = Path(operation.path).relative_to(root).as_posix()
            written = _read_written(root / relative) if operation.action != "unchanged" else None
            decided.append(
                Decided(written or item, operation.action, relative, operation.reason or "")
            )
    return decided


def _read_written(path: Path) -> ExtractedItem | None:
    """What the writer put on disk, read back as an item (title, description, body, type)."""
    from memory_recall.server.documents import split_front_matter

    if not path.is_file():
        return None
    parsed = split_front_matter(path.read_text("utf-8"))
    fields = parsed.fields
    return ExtractedItem(
        title=fields.get("name", ""),
        description=fields.get("description", ""),
        type=fields.get("type", "project"),
        category=fields.get("category", ""),
        body=parsed.body.strip(),
        updates=None,
        why="",
    )


async def run_case(case: dict[str, Any], completer: Completer, deadline_s: float) -> CaseResult:
    existing = [
        ExistingMemory(e["path"], e["type"], e["title"], e["description"]) for e in case["existing"]
    ]
    request = ExtractionInput(
        trigger="sessionEnd",
        transcript=[Turn(t["role"], t["content"]) for t in case["transcript"]],
    )
    outcome = await run_extraction(request, existing, completer, deadline_s)
    with tempfile.TemporaryDirectory(prefix="eval-extract-") as workspace:
        decided = await write_items(outcome.items, case, Path(workspace))
    sent = json.dumps(outcome.messages, ensure_ascii=False)
    result = score_case(case, decided, sent)
    result.failure = outcome.failure
    result.model_ms = outcome.model_ms
    result.decided = decided
    skipped: dict[str, int] = defaultdict(int)
    for skip in outcome.skipped:
        skipped[skip.reason] += 1
    for d in decided:
        if d.action == "skipped":
            skipped[d.reason] += 1
    result.skipped = dict(skipped)
    return result


async def evaluate(
    cases: Sequence[dict[str, Any]], completer: Completer, model: str, deadline_s: float
) -> ExtractEvalReport:
    started = time.perf_counter()
    results = [await run_case(case, completer, deadline_s) for case in cases]
    return ExtractEvalReport(model, results, time.perf_counter() - started)


def format_report(report: ExtractEvalReport) -> str:
    data = report.as_json()
    lines = [
        f"{'case':28} {'lang':4} {'found':>7} {'written':>8} {'dup':>4} {'leak':>4}"
        "  skipped / failure"
    ]
    for case in report.cases:
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(case.skipped.items()))
        note = case.failure or skipped
        lines.append(
            f"{case.id:28} {case.language:4} {case.found:>3}/{case.labels:<3} "
            f"{case.written_matched:>3}/{case.written:<4} {case.duplicates:>4} {case.leaks:>4}"
            f"  {note}"
        )
    lines += [
        "",
        f"model: {data['model']}; {data['cases']} sessions in {len(data['languages'])} languages "
        f"({', '.join(data['languages'])}); {data['elapsedS']} s",
        f"precision {data['precision']:.1%}  recall {data['recall']:.1%}  "
        f"({data['found']}/{data['labels']} labels found, {data['written']} memories written)",
        f"duplicates created {data['duplicatesCreated']}  secrets leaked {data['secretsLeaked']}  "
        f"nothing written where nothing was expected {data['nothingWrittenWhereNothingExpected']}  "
        f"model failures {data['modelFailures']}",
        "skipped by reason: "
        + (", ".join(f"{k} {v}" for k, v in data["skipped"].items()) or "none"),
    ]
    return "\n".join(lines)


def run(
    corpus: str,
    *,
    model_url: str | None,
    model: str | None,
    api_key_env: str | None,
    deadline_s: float,
    as_json: bool,
) -> int:
    from memory_recall.server.dev.scripted_model import ScriptedModel
    from memory_recall.server.models.complete import HttpCompleter

    cases = load_cases(corpus)
    scripted = None
    if model_url is None:
        scripted = ScriptedModel(routes=routes(cases)).start()
        model_url, model = scripted.url, "scripted (the corpus's prepared answers)"
    try:
        completer = HttpCompleter(model_url, model, api_key_env)
        report = asyncio.run(evaluate(cases, completer, model or "default", deadline_s))
    finally:
        if scripted is not None:
            scripted.stop()
    print(
        json.dumps(report.as_json(), indent=2, ensure_ascii=False)
        if as_json
        else format_report(report)
    )
    return 0
