"""The topic tree (docs/organisation.md): its categories, the category of one memory, the tree of
many.

One job, kept in one module past the usual size: deciding where on the topic
tree a memory sits — read from its front matter when declared, else inferred by
rules — and counting the tree. The rules' words, signals and weights are data
(`data/category_*.txt`, each saying where it comes from), loaded once.

Inference adds evidence per category: the memory type as a prior on the
top-level category, cue words (many languages) in the title, description and
body, and what the memory cites — paths (test files, CI workflows, ADRs, agent
configuration), URLs (dashboards), commands in backticks, error texts, and a
date beside incident words. The best top-level category wins (its score
includes its subcategories'), then its best subcategory.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal

import regex
from memory_recall.server.ranking.bm25f.tokens import date_tokens
from memory_recall.server.tokens import CJK_CHAR, CJK_CLASS, normalize

# -- The tree ------------------------------------------------------------------


@dataclass(frozen=True)
class Subcategory:
    slug: str  # "lessons/errors"
    label: str  # "Errors and fixes"


@dataclass(frozen=True)
class Category:
    slug: str  # "lessons"
    label: str  # "Lessons learned"
    subcategories: tuple[Subcategory, ...]


def _category(slug: str, label: str, *subs: tuple[str, str]) -> Category:
    return Category(
        slug, label, tuple(Subcategory(f"{slug}/{s}", sub_label) for s, sub_label in subs)
    )


# docs/organisation.md, in its order; slugs are stable (they are written into front matter).
CATEGORIES: tuple[Category, ...] = (
    _category(
        "user",
        "User preferences",
        ("communication", "Communication"),
        ("coding-style", "Coding style"),
        ("tooling", "Tooling"),
        ("workflow", "Workflow"),
    ),
    _category(
        "project",
        "Project information",
        ("overview", "Overview"),
        ("architecture", "Architecture"),
        ("stack", "Stack"),
        ("environments", "Environments"),
        ("people", "People"),
        ("decisions", "Decisions"),
    ),
    _category(
        "conventions",
        "Development conventions",
        ("code", "Code"),
        ("testing", "Testing"),
        ("review", "Review"),
        ("release", "Release"),
        ("security", "Security"),
    ),
    _category(
        "lessons",
        "Lessons learned",
        ("errors", "Errors and fixes"),
        ("incidents", "Incidents"),
        ("pitfalls", "Pitfalls"),
        ("performance", "Performance"),
    ),
    _category(
        "tools",
        "Tools and skills",
        ("commands", "Commands"),
        ("services", "Services"),
        ("links", "Dashboards and links"),
        ("agent-tools", "Agent tools"),
    ),
)
_TOPS = {c.slug: c for c in CATEGORIES}
_SUBS = {s.slug: s for c in CATEGORIES for s in c.subcategories}


@dataclass(frozen=True, order=True)
class CategoryPath:
    """A place on the topic tree: a top-level category, and usually a subcategory.

    Raises ValueError when the place is not on the tree.
    """

    top: str
    sub: str | None = None  # the subcategory's own slug: "errors" in "lessons/errors"

    def __post_init__(self) -> None:
        if self.top not in _TOPS or (self.sub is not None and self.slug not in _SUBS):
            raise ValueError(f"{self.slug!r} is not on the topic tree")

    @property
    def slug(self) -> str:
        return self.top if self.sub is None else f"{self.top}/{self.sub}"

    @property
    def label(self) -> str:
        top = _TOPS[self.top].label
        return top if self.sub is None else f"{top} / {_SUBS[self.slug].label}"

    def __str__(self) -> str:
        return self.slug

    @classmethod
    def of(cls, slug: str) -> CategoryPath:
        top, _, sub = slug.partition("/")
        return cls(top, sub or None)


# -- Declared categories --------------------------------------------------------


def _fold(text: str) -> str:
    """Normalized, and outside CJK without accents: `Préprod` and `preprod` are one word.

    CJK keeps its marks: removing them would change the character (が → か).
    """
    normalized = normalize(text)
    if normalized.isascii():  # most memories: no accent to strip
        return normalized
    return _NON_CJK_RUN.sub(lambda m: _strip_accents(m.group()), normalized)


def _strip_accents(text: str) -> str:
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


_NON_CJK_RUN = regex.compile(f"[^{CJK_CLASS}]+")


def _declared_names() -> dict[str, CategoryPath]:
    """Every spelling `category:` may use: slugs, labels, `top/sub` mixing both."""
    names: dict[str, CategoryPath] = {}
    sub_labels: dict[str, list[CategoryPath]] = defaultdict(list)
    for cat in CATEGORIES:
        for top_name in (cat.slug, cat.label):
            names[_fold(top_name)] = CategoryPath(cat.slug)
        for sub in cat.subcategories:
            path = CategoryPath.of(sub.slug)
            for top_name in (cat.slug, cat.label):
                for sub_name in (path.sub or "", sub.label):
                    names[f"{_fold(top_name)}/{_fold(sub_name)}"] = path
            sub_labels[_fold(sub.label)].append(path)
    # A subcategory's label alone ("Errors and fixes") when no other shares it.
    for label, paths in sub_labels.items():
        if len(paths) == 1:
            names.setdefault(label, paths[0])
    return names


_DECLARED = _declared_names()
_SEPARATOR = regex.compile(r"\s*(?:/|>|›|»|::)\s*")


def parse_category(value: str) -> CategoryPath | None:
    """The place a front-matter `category:` names, or None when it names none.

    Accepts `lessons/errors`, a bare `lessons`, and the human labels
    (`Lessons learned`, `Lessons learned / Errors and fixes`, `Errors and fixes`),
    in any case.
    """
    text = value.strip().strip("\"'").strip()
    key = _SEPARATOR.sub("/", " ".join(_fold(text).split()))
    return _DECLARED.get(key)


# -- The rules' data --------------------------------------------------------------

_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}\p{N}]+)*")
MIN_PREFIX = 3  # shorter prefixes match half the language


@dataclass(frozen=True)
class _Cue:
    text: str  # as written in the data file, for explanations
    slug: str  # "conventions/testing", or a bare top-level "conventions"
    weight: float
    words: tuple[tuple[str, bool], ...]  # (word, is_prefix); empty for a CJK cue
    substring: str = ""  # a CJK cue, looked for as is


@dataclass
class _Rules:
    first_word: dict[str, list[_Cue]] = field(default_factory=lambda: defaultdict(list))
    first_prefix: dict[str, list[_Cue]] = field(default_factory=lambda: defaultdict(list))
    prefix_lengths: tuple[int, ...] = ()  # the lengths of first_prefix's keys, ascending
    # A word's cues (first word or prefix), worked out once per distinct word.
    _by_word: dict[str, tuple[_Cue, ...]] = field(default_factory=dict)
    substrings: list[_Cue] = field(default_factory=list)
    paths: list[tuple[str, str]] = field(default_factory=list)  # (glob, slug)
    # Any of the globs at once: most paths a memory cites match none, and trying 86
    # globs one by one on each was a tenth of placing a memory.
    any_path: re.Pattern[str] = re.compile(r"(?!)")
    hosts: list[tuple[str, str]] = field(default_factory=list)
    programs: dict[str, str] = field(default_factory=dict)
    patterns: list[tuple[regex.Pattern[str], str]] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)

    def weight(self, key: str, default: float = 0.0) -> float:
        return self.weights.get(key, default)

    def cues_starting(self, word: str) -> tuple[_Cue, ...]:
        """The cues whose first word is `word`, or a prefix of it."""
        found = self._by_word.get(word)
        if found is None:
            cues = list(self.first_word.get(word, ()))
            for length in self.prefix_lengths:
                if length > len(word):
                    break
                cues.extend(self.first_prefix.get(word[:length], ()))
            if len(self._by_word) >= _WORD_CACHE_LIMIT:
                self._by_word.clear()
            found = self._by_word[word] = tuple(cues)
        return found


_WORD_CACHE_LIMIT = 200_000  # distinct words whose cues are kept (a few MB)


def _data_lines(name: str) -> Iterator[str]:
    text = (
        resources.files("memory_recall.server.organise")
        .joinpath("data")
        .joinpath(name)
        .read_text("utf-8")
    )
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield line


def _parse_cue(text: str, slug: str, weight: float) -> _Cue:
    folded = _fold(text)
    if CJK_CHAR.search(folded):
        return _Cue(text, slug, weight, (), substring=folded)
    # `deploy*`: a star right after a word makes that word a prefix.
    words = tuple((m[1], m[2] == "*") for m in _CUE_WORD.finditer(folded))
    if not words:
        raise ValueError(f"cue {text!r} has no word")
    if any(prefix and len(word) < MIN_PREFIX for word, prefix in words):
        raise ValueError(f"cue {text!r}: a prefix needs {MIN_PREFIX} letters")
    return _Cue(text, slug, weight, words)


_CUE_WORD = regex.compile(rf"({_WORD.pattern})(\*?)")


_SECTION = regex.compile(r"\[(?:(?P<kind>\w+) )?(?P<slug>[\w/-]+)\]")


@functools.cache
def _rules() -> _Rules:
    rules = _Rules()
    slug = ""
    # The same spelling in two languages (`test*`, `version`) is one cue.
    seen: set[tuple[str, tuple[tuple[str, bool], ...], str]] = set()
    for line in _data_lines("category_cues.txt"):
        if section := _SECTION.fullmatch(line):
            slug = section["slug"]
            CategoryPath.of(slug)  # a typo in the data fails loudly
            continue
        tag, _, cues = line.partition(":")
        _, _, scale = tag.partition(" x")
        for text in filter(None, (c.strip() for c in cues.split(","))):
            cue = _parse_cue(text, slug, float(scale or 1.0))
            if (key := (cue.slug, cue.words, cue.substring)) in seen:
                continue
            seen.add(key)
            if cue.substring:
                rules.substrings.append(cue)
            elif cue.words[0][1]:
                rules.first_prefix[cue.words[0][0]].append(cue)
            else:
                rules.first_word[cue.words[0][0]].append(cue)
    kind = ""
    for line in _data_lines("category_signals.txt"):
        if section := _SECTION.fullmatch(line):
            kind, slug = section["kind"] or "", section["slug"]
            CategoryPath.of(slug)
        elif kind == "paths":
            rules.paths.append((line.lower(), slug))
        elif kind == "hosts":
            rules.hosts.append((line.lower(), slug))
        elif kind == "programs":
            rules.programs[line.lower()] = slug
        elif kind == "patterns":
            rules.patterns.append((regex.compile(line), slug))
        else:
            raise ValueError(f"category_signals.txt: unknown section kind {kind!r}")
    for weight_line in _data_lines("category_weights.txt"):
        name, value = weight_line.split()
        if name.startswith("default."):
            rules.defaults[name.removeprefix("default.")] = CategoryPath.of(value).slug
        else:
            rules.weights[name] = float(value)
    rules.prefix_lengths = tuple(sorted({len(prefix) for prefix in rules.first_prefix}))
    if rules.paths:
        rules.any_path = re.compile("|".join(fnmatch.translate(glob) for glob, _ in rules.paths))
    return rules


# -- Inference ---------------------------------------------------------------------

FIELDS = ("title", "description", "body")
_URL = regex.compile(r"https?://[^\s<>()\"'`\]]+")
# A path with a slash, or a file name with an extension.
_PATH = regex.compile(
    r"(?<![\w@/.~-])(?:[\w.@~+*-]*/[\w.@~+*/-]+|[\w@+-]*\.?[\w@+-]+\.[A-Za-z]\w{0,7})"
)
# The runs of characters a path is made of: `_PATH` matches lie inside them (its
# look-behind sees only run characters), and only runs with a slash or a dot hold one.
_PATH_RUN = regex.compile(r"[\w.@~+*/-]+")
_CODE_SPAN = regex.compile(r"`([^`\n]+)`|^\s*\$ (.+)$", flags=regex.MULTILINE)
_DATES = (
    regex.compile(r"(?<!\d)(?:19|20)\d\d-[01]\d-[0-3]\d(?!\d)"),
    regex.compile(r"(?<!\d)[0-3]?\d[./][01]?\d[./](?:19|20)\d\d(?!\d)"),
    # "3 апреля 2024", "5 juin 2024": a day, a month word, a year, in any language.
    regex.compile(r"(?<!\d)[0-3]?\d\.?\s+\p{L}+\.?\s+(?:19|20)\d\d(?!\d)"),
)
INCIDENTS = "lessons/incidents"


@dataclass(frozen=True)
class _Evidence:
    slug: str
    points: float
    what: str  # "'pytest' in title", "cites tests/test_api.py"


@dataclass(frozen=True)
class CategoryDecision:
    """Where a memory sits on the tree, and why (what `explain` shows)."""

    path: CategoryPath
    # declared: as front matter says; declared-top: its top-level category, the
    # subcategory inferred; inferred: by the rules.
    source: Literal["declared", "declared-top", "inferred"]
    confidence: float  # the winner's share of the evidence, 0..1; 1 when declared
    why: str
    problem: str | None = None  # a declared category that is not on the tree


READ_CHARS = (300, 1000, 4000)  # title, description, body


def infer_category(
    *, type: str, title: str, description: str, body: str, declared: str | None = None
) -> CategoryPath:
    """The memory's place on the topic tree: as declared when valid, else inferred."""
    return explain_category(
        type=type, title=title, description=description, body=body, declared=declared
    ).path


def explain_category(
    *, type: str, title: str, description: str, body: str, declared: str | None = None
) -> CategoryDecision:
    """`infer_category` with its reasons, its confidence and any problem with `declared`.

    The rules read the start of each field (`READ_CHARS`): a hand-written file may hold a
    megabyte `name:` or body, which they would take minutes over, and what a memory is
    about shows in its first lines."""
    title, description, body = (
        text[:limit] for text, limit in zip((title, description, body), READ_CHARS, strict=True)
    )
    problem = None
    declared_path = None
    if declared is not None and declared.strip():
        declared_path = parse_category(declared)
        if declared_path is None:
            problem = f"category {declared.strip()!r} is not on the topic tree; inferred instead"
        elif declared_path.sub is not None:
            return CategoryDecision(declared_path, "declared", 1.0, "declared in front matter")
    rules = _rules()
    evidence = list(
        _evidence(rules, type, {"title": title, "description": description, "body": body})
    )
    sub_scores: dict[str, float] = defaultdict(float)
    top_scores: dict[str, float] = defaultdict(float)
    for item in evidence:
        top_scores[item.slug.partition("/")[0]] += item.points
        if "/" in item.slug:
            sub_scores[item.slug] += item.points
    if declared_path is not None:
        top = declared_path.top
    else:
        top = max(_TOPS, key=lambda t: top_scores[t])  # ties: spec order
    subs = [s.slug for s in _TOPS[top].subcategories]
    best_sub = max(subs, key=lambda s: sub_scores[s])
    slug = best_sub if sub_scores[best_sub] > 0 else rules.defaults.get(top, subs[0])
    path = CategoryPath.of(slug)
    positive = sum(v for v in top_scores.values() if v > 0)
    confidence = round(top_scores[top] / positive, 2) if positive else 0.0
    if declared_path is not None:
        why = f"{top} declared in front matter; {_reasons(evidence, slug, top_scores, top)}"
        return CategoryDecision(path, "declared-top", 1.0, why)
    why = f"{_level(rules, confidence)} confidence; {_reasons(evidence, slug, top_scores, top)}"
    return CategoryDecision(path, "inferred", confidence, why, problem)


def _level(rules: _Rules, confidence: float) -> str:
    if confidence >= rules.weight("confidence.high", 0.6):
        return "high"
    return "medium" if confidence >= rules.weight("confidence.medium", 0.4) else "low"


def _reasons(evidence: list[_Evidence], slug: str, top_scores: dict[str, float], top: str) -> str:
    """The strongest evidence for the chosen place, then the runner-up category."""
    for_it = [e for e in evidence if e.slug in (slug, top)]
    for_it.sort(key=lambda e: -e.points)
    parts = [f"{e.what} → {e.slug}" for e in for_it[:4]] or [f"no cue: default of {top}"]
    others = sorted(((v, t) for t, v in top_scores.items() if t != top and v > 0), reverse=True)
    if others:
        parts.append(f"runner-up {others[0][1]} ({others[0][0]:.1f} vs {top_scores[top]:.1f})")
    return "; ".join(parts)


def _evidence(rules: _Rules, mem_type: str, fields: dict[str, str]) -> Iterator[_Evidence]:
    for key, points in rules.weights.items():
        if key.startswith(f"type.{mem_type}."):
            yield _Evidence(key.rsplit(".", 1)[1], points, f"type {mem_type}")
    incident_cue = False
    for name in FIELDS:
        folded = _fold(fields[name])
        for cue in _matching_cues(rules, folded):
            incident_cue = incident_cue or cue.slug == INCIDENTS
            points = cue.weight * rules.weight(f"field.{name}", 1.0)
            yield _Evidence(cue.slug, points, f"{cue.text!r} in {name}")
    text = unicodedata.normalize("NFKC", "\n".join(fields[name] for name in FIELDS))
    yield from _signals(rules, text, incident_cue)


def _matching_cues(rules: _Rules, folded: str) -> Iterator[_Cue]:
    """Each cue found in a folded field, once; a word is evidence for a category once
    (`module` is not counted again for `modul*`, the German spelling)."""
    seen: set[int] = set()
    claimed: set[tuple[str, int]] = set()  # (category, word position)
    words = _WORD.findall(folded)
    # Most words start no cue: find those that do once per distinct word, then visit
    # only their places, in order.
    cued = {word for word in set(words) if rules.cues_starting(word)}
    for i in [i for i, word in enumerate(words) if word in cued]:
        for cue in rules.cues_starting(words[i]):
            if id(cue) in seen or (cue.slug, i) in claimed or not _matches_at(cue, words, i):
                continue
            seen.add(id(cue))
            claimed.add((cue.slug, i))
            yield cue
    if folded.isascii():  # a CJK cue has a CJK character
        return
    present = set(folded)
    for cue in rules.substrings:
        if cue.substring[0] in present and cue.substring in folded:
            yield cue


def _matches_at(cue: _Cue, words: list[str], start: int) -> bool:
    if start + len(cue.words) > len(words):
        return False
    for (expected, prefix), word in zip(cue.words, words[start:], strict=False):
        if not (word.startswith(expected) if prefix else word == expected):
            return False
    return True


def _signals(rules: _Rules, text: str, incident_cue: bool) -> Iterator[_Evidence]:
    cap = int(rules.weight("signal.cap", 3))
    found: dict[tuple[str, str], list[str]] = defaultdict(list)  # (kind, slug) → things

    urls = _URL.findall(text)
    for url in urls:
        found[("url", "tools/links")].append(url)
        lowered = url.lower()
        for host, slug in rules.hosts:
            if host in lowered:
                found[("url-host", slug)].append(url)
                break
    without_urls = _URL.sub(" ", text)
    # Each cited path once, in the order the text cites them: the explanation names the
    # first few (`cap`), the same ones in every process.
    for candidate in dict.fromkeys(c.rstrip(".,;:)") for c in _paths(without_urls)):
        path = candidate.lower().removeprefix("./")
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if not (rules.any_path.match(path) or rules.any_path.match(name)):
            continue
        for glob, slug in rules.paths:
            if fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(name, glob):
                found[("path", slug)].append(candidate)
                break
    for match in _CODE_SPAN.finditer(without_urls):
        span = (match[1] or match[2]).strip()
        words = span.split()
        if len(words) >= 2 and words[0].lower() in rules.programs:
            found[("command", rules.programs[words[0].lower()])].append(span)
    for pattern, slug in rules.patterns:
        if hit := pattern.search(text):
            found[("error-text", slug)].append(hit.group())
    if incident_cue and _has_date(text):
        found[("incident-date", INCIDENTS)].append("a date")

    for (kind, slug), things in found.items():
        weight = rules.weight(f"signal.{kind}")
        for thing in things[:cap]:
            yield _Evidence(slug, weight, f"{kind} {thing[:60]!r}")


def _paths(text: str) -> Iterator[str]:
    """`_PATH.findall(text)`, run by run: the pattern backtracks on every word, and most
    words hold neither a slash nor a dot."""
    for run in _PATH_RUN.findall(text):
        if "/" in run or "." in run:
            yield from _PATH.findall(run)


_YEAR = regex.compile(r"(?:19|20)\d\d")  # every date form below writes its year


def _has_date(text: str) -> bool:
    if not _YEAR.search(text):
        return False
    return (
        any(p.search(text) for p in _DATES) or next(date_tokens(normalize(text)), None) is not None
    )


# -- The tree of a root ---------------------------------------------------------------


@dataclass(frozen=True)
class TreeNode:
    """One category or subcategory with what sits on it.

    `members` are the ids placed on this node itself (a memory declared with a
    bare top-level category sits on the top-level node); `count` includes the
    members of its subcategories.
    """

    slug: str
    label: str
    count: int
    members: tuple[str, ...]
    children: tuple[TreeNode, ...] = ()


@dataclass(frozen=True)
class Tree:
    """The topic tree of a set of memories: every category, empty ones included."""

    categories: tuple[TreeNode, ...]
    total: int

    def find(self, slug: str) -> TreeNode | None:
        """The node of a category or subcategory slug."""
        for node in self.categories:
            if node.slug == slug:
                return node
            for child in node.children:
                if child.slug == slug:
                    return child
        return None


def build_tree(items: Iterable[tuple[str, CategoryPath]]) -> Tree:
    """The tree of `(member id, place)` pairs; members keep the order given."""
    members: dict[str, list[str]] = defaultdict(list)
    total = 0
    for member, path in items:
        members[path.slug].append(member)
        total += 1
    nodes = []
    for cat in CATEGORIES:
        children = tuple(
            TreeNode(sub.slug, sub.label, len(members[sub.slug]), tuple(members[sub.slug]))
            for sub in cat.subcategories
        )
        own = tuple(members[cat.slug])
        count = len(own) + sum(child.count for child in children)
        nodes.append(TreeNode(cat.slug, cat.label, count, own, children))
    return Tree(tuple(nodes), total)
