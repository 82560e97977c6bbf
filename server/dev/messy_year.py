"""The "messy year" fixture: a memory root after a year of unattended writing, with labels.

`generate(directory)` writes a workspace (`<dir>/workspace`, with the source
files its memories cite) and its project memory root (`<dir>/workspace/.memory`)
holding, at full size, 600 memories for a capacity of 300:

- duplicate clusters: the same fact written two or three times over the year in
  other words, one older copy carrying a detail the newest lacks;
- corrected facts: an old memory and a newer one that changes its number (some
  old facts written twice), each with the question a user would ask;
- stale memories: citing a file deleted since, or a line past the end of a file,
  or past their `expires` date;
- pinned notes, old and never touched (the first to go if pinning were ignored),
  some with an unpinned copy saying nothing more;
- standing rules with `always: true`, and the rest plain, distinct facts;
- in seven languages (the templates of `messy_templates.py`).

and `labels.json` beside the workspace saying what a consolidation must find.
`check(plan, labels)` compares a consolidation plan with them. Dates are
relative to `today`, so the fixture ages correctly whenever it is made.
Deterministic for a seed; `memories` scales every part (the tests use 120).

One job past 500 lines: the generator and the checker share one notion of each
label (which memory is a duplicate, a correction, stale, protected), so they
change together; the phrasings it writes from live apart, in `messy_templates.py`.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from memory_recall.server.dev.messy_templates import ENTITIES, STANDING_RULES, TEMPLATES, Template
from memory_recall.server.organise.consolidate import ConsolidationPlan

FULL_SIZE = 600
FULL_CAPACITY = 300
CITED_FILE_LINES = 20  # every cited file has this many lines; `path:line` past it is stale
INDEX_LINES = 200  # MEMORY.md as the daemon keeps it: its default cap

# Parts of the full-size fixture (scaled with `memories`); the rest are plain facts.
PARTS = {
    "corrections": 40,  # an old fact and the newer one that changes it
    "corrections_twice": 10,  # the old fact written twice, then changed
    "clusters_of_two": 30,
    "clusters_of_three": 10,
    "pinned": 20,
    "pinned_copies": 4,  # of the pinned: an unpinned copy, nothing more in it
    "missing_file": 24,
    "line_past_end": 4,
    "expired": 6,
    "expires_later": 2,
    "always": 5,
}


@dataclass
class _Memory:
    rel: str
    title: str
    description: str
    type: str
    body: str
    created: date
    extra_front: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        front = {
            "name": self.title,
            "description": self.description,
            "type": self.type,
            "created": self.created.isoformat(),
            **self.extra_front,
        }
        lines = ["---", *(f"{k}: {v}" for k, v in front.items()), "---", self.body, ""]
        return "\n".join(lines)


@dataclass(frozen=True)
class MessyYear:
    workspace: Path
    root: Path
    labels: dict[str, Any]
    labels_path: Path


def _scaled(count: int, memories: int) -> int:
    return max(1, round(count * memories / FULL_SIZE))


class _Writer:
    """Builds the memories of the fixture, subject by subject."""

    def __init__(self, rng: random.Random, today: date) -> None:
        self.rng = rng
        self.today = today
        subjects = [(t, e) for t in TEMPLATES for e in ENTITIES]
        rng.shuffle(subjects)
        self.subjects = subjects
        self.memories: list[_Memory] = []
        self.files: dict[str, dict[str, Any]] = {}
        self.cited: set[str] = set()  # workspace files to create
        self.counter = 0

    def subject(self) -> tuple[Template, str]:
        if not self.subjects:
            raise ValueError("the fixture ran out of distinct subjects; ask for fewer memories")
        return self.subjects.pop()

    def days_ago(self, low: int, high: int) -> date:
        return self.today - timedelta(days=self.rng.randint(low, high))

    def add(
        self,
        template: Template,
        entity: str,
        *,
        kind: str,
        value: str,
        variant: int,
        created: date,
        cite: str | None = "exists",
        extra_line: bool = False,
        marker: str = "",
        front: dict[str, str] | None = None,
        line: int | None = None,
    ) -> _Memory:
        name = ENTITIES[entity][template.lang]
        title = template.title.format(N=name)
        title = title[0].upper() + title[1:]
        fact = marker + template.bodies[variant % len(template.bodies)].format(N=name, v=value)
        lines = [fact]
        if extra_line:
            lines.append(template.extra)
        path = template.cite.format(s=entity)
        if cite is not None:
            lines.append(f"→ `{path}{'' if line is None else f':{line}'}`")
            if cite == "exists":
                self.cited.add(path)
        self.counter += 1
        rel = f"{entity}/{template.key}-{template.lang}-{self.counter:03d}.md"
        memory = _Memory(
            rel,
            title,
            template.description.format(N=name),
            template.type,
            "\n".join(lines),
            created,
            dict(front or {}),
        )
        self.memories.append(memory)
        self.files[rel] = {
            "kind": kind,
            "subject": f"{template.key}/{template.lang}/{entity}",
            "lang": template.lang,
            "fact": fact.removeprefix(marker),
        }
        return memory


def generate(
    directory: str | os.PathLike[str],
    *,
    memories: int = FULL_SIZE,
    capacity: int | None = None,
    seed: int = 17,
    today: date | None = None,
) -> MessyYear:
    """Write the fixture under `directory` (which must be empty or absent)."""
    base = Path(directory)
    if base.exists() and any(base.iterdir()):
        raise ValueError(f"{base} is not empty")
    today = today or datetime.now(timezone.utc).date()
    capacity = capacity if capacity is not None else round(memories * FULL_CAPACITY / FULL_SIZE)
    rng = random.Random(seed)
    w = _Writer(rng, today)
    part = {name: _scaled(count, memories) for name, count in PARTS.items()}
    labels: dict[str, Any] = {
        "about": __doc__.split("\n\n")[0] if __doc__ else "",
        "today": today.isoformat(),
        "capacity": capacity,
        "clusters": [],
        "corrections": [],
        "pinned": [],
        "coveredByPinned": [],
        "stale": {},
        "always": [],
    }

    def pick_values(t: Template) -> tuple[str, str]:
        old, new = rng.sample(t.values, 2)
        return old, new

    for twice in (False, True):
        for _ in range(part["corrections_twice" if twice else "corrections"]):
            t, e = w.subject()
            old_value, new_value = pick_values(t)
            variant = rng.randrange(2)
            olds = [
                w.add(
                    t,
                    e,
                    kind="superseded",
                    value=old_value,
                    variant=variant,
                    created=w.days_ago(200, 360),
                )
            ]
            if twice:  # the old fact written again in other words before it changed
                olds.append(
                    w.add(
                        t,
                        e,
                        kind="superseded",
                        value=old_value,
                        variant=1 - variant,
                        created=olds[0].created + timedelta(days=rng.randint(10, 60)),
                    )
                )
            newer = w.add(
                t,
                e,
                kind="newer",
                value=new_value,
                variant=rng.randrange(2),
                created=w.days_ago(5, 60),
            )
            name = ENTITIES[e][t.lang]
            labels["corrections"].append(
                {
                    "superseded": [m.rel for m in olds],
                    "newer": newer.rel,
                    "question": t.question.format(N=name),
                    "oldFact": w.files[olds[0].rel]["fact"],
                    "newFact": w.files[newer.rel]["fact"],
                    "oldValue": old_value,
                    "newValue": new_value,
                }
            )

    for size, count in ((2, part["clusters_of_two"]), (3, part["clusters_of_three"])):
        for _ in range(count):
            t, e = w.subject()
            value = rng.choice(t.values)
            start = w.days_ago(120, 330)
            dates = sorted(start + timedelta(days=rng.randint(10, 110)) for _ in range(size - 1))
            copies = [
                w.add(t, e, kind="duplicate", value=value, variant=0, created=start,
                      extra_line=True)
            ]  # fmt: skip
            if size == 3:
                copies.append(
                    w.add(t, e, kind="duplicate", value=value, variant=0, created=dates[0],
                          marker="- ")
                )  # fmt: skip
            copies.append(w.add(t, e, kind="duplicate", value=value, variant=1, created=dates[-1]))
            labels["clusters"].append(
                {
                    "members": [m.rel for m in copies],
                    "newest": copies[-1].rel,
                    "keptLines": [t.extra],
                }
            )

    for i in range(part["pinned"]):
        t, e = w.subject()
        value = rng.choice(t.values)
        variant = rng.randrange(2)
        pinned = w.add(
            t,
            e,
            kind="pinned",
            value=value,
            variant=variant,
            created=w.days_ago(300, 365),
            front={"pinned": "true"},
        )
        labels["pinned"].append(pinned.rel)
        if i < part["pinned_copies"]:
            copy = w.add(
                t, e, kind="pinned-copy", value=value, variant=variant, created=w.days_ago(20, 90)
            )
            labels["coveredByPinned"].append({"copy": copy.rel, "pinned": pinned.rel})

    for kind, count in (
        ("missing", part["missing_file"]),
        ("line", part["line_past_end"]),
        ("expired", part["expired"]),
        ("expires-later", part["expires_later"]),
    ):
        for _ in range(count):
            t, e = w.subject()
            front = {}
            if kind == "expired":
                front["expires"] = (today - timedelta(days=rng.randint(10, 60))).isoformat()
            elif kind == "expires-later":
                front["expires"] = (today + timedelta(days=rng.randint(30, 90))).isoformat()
            memory = w.add(
                t,
                e,
                kind="stale" if kind != "expires-later" else "plain",
                value=rng.choice(t.values),
                variant=rng.randrange(2),
                created=w.days_ago(60, 200),
                cite="deleted" if kind == "missing" else "exists",
                line=CITED_FILE_LINES + rng.randint(5, 200) if kind == "line" else None,
                front=front,
            )
            if kind != "expires-later":
                labels["stale"][memory.rel] = kind

    for lang, title, description, body in STANDING_RULES[: part["always"]]:
        w.counter += 1
        rel = f"rules/{lang}-{w.counter:03d}.md"
        memory = _Memory(
            rel, title, description, "feedback", body, w.days_ago(100, 300), {"always": "true"}
        )
        w.memories.append(memory)
        w.files[rel] = {"kind": "always", "subject": f"rule/{lang}", "lang": lang, "fact": body}
        labels["always"].append(rel)

    while len(w.memories) < memories:
        t, e = w.subject()
        cite = "exists" if rng.random() < 0.6 else None
        line = rng.randint(1, CITED_FILE_LINES) if cite and rng.random() < 0.2 else None
        w.add(
            t,
            e,
            kind="plain",
            value=rng.choice(t.values),
            variant=rng.randrange(2),
            created=w.days_ago(0, 365),
            cite=cite,
            line=line,
        )

    workspace = base / "workspace"
    root = workspace / ".memory"
    root.mkdir(parents=True)
    for path in sorted(w.cited):
        target = workspace / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f"# line {n}\n" for n in range(1, CITED_FILE_LINES + 1)))
    for folder in ("src", "config", "deploy", "docs", ".github"):
        (workspace / folder).mkdir(exist_ok=True)
    for memory in w.memories:
        target = root / memory.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(memory.text(), encoding="utf-8")
        moment = datetime(*memory.created.timetuple()[:3], 12, tzinfo=timezone.utc).timestamp()
        os.utime(target, (moment, moment))
    # The index a daemon kept over the year: the user's heading, then the newest memories
    # within the default cap (200 lines).
    newest = sorted(w.memories, key=lambda m: (m.created, m.rel), reverse=True)
    index_lines = ["# Project memory", ""] + [
        f"- [{m.title}]({m.rel}) — {m.description}" for m in newest[: INDEX_LINES - 2]
    ]
    (root / "MEMORY.md").write_text("\n".join(index_lines) + "\n", encoding="utf-8")
    labels["memories"] = len(w.memories)
    labels["files"] = w.files
    labels_path = base / "labels.json"
    labels_path.write_text(json.dumps(labels, ensure_ascii=False, indent=2), encoding="utf-8")
    return MessyYear(workspace, root, labels, labels_path)


# -- Checking a plan against the labels ------------------------------------------------------


@dataclass
class Agreement:
    """How a consolidation plan compares with the fixture's labels."""

    clusters: int = 0
    clusters_merged: int = 0  # into the newest, every other copy archived as merged
    lines_kept: int = 0  # clusters whose merged body keeps the older copy's detail
    corrections: int = 0
    corrections_resolved: int = 0  # every old fact archived as superseded by the newer
    pinned: int = 0
    pinned_untouched: int = 0
    covered: int = 0
    covered_archived: int = 0
    stale: int = 0
    stale_flagged: int = 0
    false_stale: list[str] = field(default_factory=list)
    wrong_actions: list[str] = field(default_factory=list)  # merges/supersessions not labelled
    protected_pruned: list[str] = field(default_factory=list)
    after: int = 0
    capacity: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def perfect(self) -> bool:
        return (
            self.clusters_merged == self.clusters
            and self.lines_kept == self.clusters
            and self.corrections_resolved == self.corrections
            and self.pinned_untouched == self.pinned
            and self.covered_archived == self.covered
            and self.stale_flagged == self.stale
            and not self.false_stale
            and not self.wrong_actions
            and not self.protected_pruned
            and self.after <= self.capacity
        )

    def lines(self) -> list[str]:
        rows = [
            ("duplicate clusters merged into the newest", self.clusters_merged, self.clusters),
            ("… keeping the older copy's extra line", self.lines_kept, self.clusters),
            ("corrected facts: old archived, newer kept", self.corrections_resolved,
             self.corrections),
            ("pinned notes untouched", self.pinned_untouched, self.pinned),
            ("unpinned copies of pinned notes archived", self.covered_archived, self.covered),
            ("stale memories flagged", self.stale_flagged, self.stale),
        ]  # fmt: skip
        out = [f"  {label:<46}{got:>5} / {want}" for label, got, want in rows]
        out.append(f"  {'stale flags on fresh memories':<46}{len(self.false_stale):>5}")
        out.append(
            f"  {'merges or supersessions not in the labels':<46}{len(self.wrong_actions):>5}"
        )
        out.append(f"  {'protected memories pruned':<46}{len(self.protected_pruned):>5}")
        out.append(f"  {'memories after / capacity':<46}{self.after:>5} / {self.capacity}")
        out.extend(f"  ! {p}" for p in self.problems[:20])
        return out


def check(plan: ConsolidationPlan, labels: dict[str, Any], root: Path) -> Agreement:
    """Compare `plan` (of the fixture's root) with `labels`."""

    def rel(path: str) -> str:
        return os.path.relpath(path, root)

    archived = {rel(a.path): a for a in plan.archives}
    rewritten = {rel(r.path): r for r in plan.rewrites}
    flagged = {rel(n.path) for n in plan.notices if n.kind == "stale"}
    a = Agreement(capacity=labels["capacity"], after=plan.after)
    expected_archive: dict[str, tuple[str, str]] = {}  # rel → (cause, into)

    for cluster in labels["clusters"]:
        a.clusters += 1
        newest, others = (
            cluster["newest"],
            [m for m in cluster["members"] if m != cluster["newest"]],
        )
        for m in others:
            expected_archive[m] = ("merged", newest)
        rewrite = rewritten.get(newest)
        merged = rewrite is not None and {rel(p) for p in rewrite.merged_from} == set(others)
        merged = merged and all(
            m in archived
            and archived[m].cause == "merged"
            and rel(archived[m].into or "") == newest
            for m in others
        )
        if merged:
            a.clusters_merged += 1
        else:
            a.problems.append(f"cluster {newest}: not merged as labelled")
        if (
            rewrite is not None
            and rewrite.body
            and all(line in rewrite.body for line in cluster["keptLines"])
        ):
            a.lines_kept += 1
    for correction in labels["corrections"]:
        a.corrections += 1
        newer = correction["newer"]
        ok = newer not in archived or archived[newer].cause == "capacity"
        for old in correction["superseded"]:
            expected_archive[old] = ("superseded", newer)
            got = archived.get(old)
            ok = (
                ok
                and got is not None
                and got.cause == "superseded"
                and rel(got.into or "") == newer
            )
        if ok:
            a.corrections_resolved += 1
        else:
            a.problems.append(f"correction {newer}: not resolved newer-wins")
    touched = set(archived) | set(rewritten)
    for pinned in labels["pinned"] + labels["always"]:
        a.pinned += 1
        if pinned in touched:
            a.problems.append(f"protected {pinned} touched")
            if pinned in archived and archived[pinned].cause == "capacity":
                a.protected_pruned.append(pinned)
        else:
            a.pinned_untouched += 1
    for item in labels["coveredByPinned"]:
        a.covered += 1
        expected_archive[item["copy"]] = ("covered", item["pinned"])
        got = archived.get(item["copy"])
        if got is not None and got.cause == "covered":
            a.covered_archived += 1
    for path in labels["stale"]:
        a.stale += 1
        if path in flagged:
            a.stale_flagged += 1
        else:
            a.problems.append(f"stale {path} not flagged")
    a.false_stale = sorted(flagged - set(labels["stale"]))
    for path, action in sorted(archived.items()):
        if action.cause == "capacity":
            continue
        want = expected_archive.get(path)
        if want is None or want[0] != action.cause:
            a.wrong_actions.append(f"{path}: {action.cause} ({action.reason})")
    return a
