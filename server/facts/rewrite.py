"""An update changes the fact, not the memory (docs/writing.md, "Partial updates").

Given an old memory, the new text and the judgement that found which old statements the
new ones change, the next body replaces exactly those statements' spans and nothing else:
each by the new statement, or by the old one with its value put in its new form when the
new one leaves out a value of it (`Change.written`). Every other character of the old
body — other sentences, list markers, headings, lines like `**Why:**` and `**How to
apply:**` — stays as it was, but for a replaced line's date stamp, which takes the new
statement's when it has one. New statements that restate nothing of the old memory are
added after the last replaced one, and a reason or a use the old memory does not give
("**Why:** …") at its end, on a line of its own. The title and the description follow the
new fact: re-derived when they were derived from the old body (a `remember` without a
title), else the old value in them is replaced by the new one, and when that cannot be
done cleanly they are derived from the new statement.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex
from memory_recall.server.facts.changes import Change, substitute
from memory_recall.server.facts.headline import derive_description, derive_title
from memory_recall.server.facts.judgement import (
    REASON_OF_ITS_OWN,
    Judgement,
    MemoryText,
    read_memory,
)
from memory_recall.server.facts.lexicon import CJK_CHAR, function_words, lexicon
from memory_recall.server.facts.titles import title_is_derived

_END = regex.compile(r"[.!?。！？]+$")
_FIRST_WORD = regex.compile(r"\p{Lu}\p{Ll}+(?!\w)")  # a capital, then lower case only
_FIRST_LOWER = regex.compile(r"\p{Ll}+(?!\w)")  # a word in lower case only
_LIST_MARKUP = regex.compile(r"^[ \t]*(?:[-*+•][ \t]+|\d{1,3}[.)][ \t]+)")


@dataclass(frozen=True)
class Rewritten:
    body: str
    title: str
    description: str
    replaced: tuple[tuple[str, str], ...]  # (old statement, new statement), for the log


def _fit(new_text: str, old_text: str, old_body: str) -> str:
    """The new statement with the old one's closing punctuation (or none, if it had none),
    and in lower case where the old one went on a sentence ("…; they take 6 minutes")."""
    new_text = new_text.strip()
    old_end = _END.search(old_text)
    bare = _END.sub("", new_text)
    if old_text[:1].islower() and (first := _FIRST_WORD.match(bare)):
        word = first.group()
        lower = word.lower()
        # A capital that only opens the sentence: a function word, or a word the old
        # memory writes in lower case ("Integration" of "run the integration tests");
        # never a name.
        if lower in function_words() or regex.search(rf"(?<!\w){lower}(?!\w)", old_body):
            bare = lower + bare[len(word) :]
    elif old_text[:1].isupper():
        bare = _opening(bare, old_body)
    return bare + old_end.group() if old_end else bare


def _opening(text: str, old_body: str) -> str:
    """`text` opening a sentence: a first word the new memory wrote in lower case because it
    went on a sentence there ("LaunchDarkly is deprecated; feature flags now live in
    Unleash") gets its capital — a function word or a word that announces a change ("now"),
    or a word the old memory writes with one ("Feature"); never a name written in lower
    case (`npm`, `pnpm`)."""
    first = _FIRST_LOWER.match(text)
    if first is None:
        return text
    word = first.group()
    capital = word[:1].upper() + word[1:]
    # "now Bob owns it": a word that announces a change is no name.
    common = word in function_words() or any(p.fullmatch(word) for p in lexicon().change.values())
    if common or regex.search(rf"(?<!\w){capital}(?!\w)", old_body):
        return capital + text[len(word) :]
    return text


def _said_alone(text: str, closing: str, old_body: str) -> str:
    """An addition placed after a replaced statement: opening a sentence, and closed as that
    statement is when the new memory's own punctuation was a semicolon or nothing."""
    text = _opening(text.rstrip(";,；，"), old_body)
    return text if _END.search(text) or not closing else text + closing


def _join(before: str, addition: str) -> str:
    if not before or before.endswith(("\n", " ")):
        return before + addition
    if CJK_CHAR.match(before[-1:]) or CJK_CHAR.match(before[-2:-1] or "x"):
        return before + addition
    return before + " " + addition


def rewrite_body(old_body: str, judgement: Judgement) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The old body with the changed statements replaced and the additions placed."""
    edits: list[tuple[int, int, str]] = []
    replaced = []
    for change in judgement.changes:
        text = _fit(change.written, change.old.text, old_body)
        old, new = change.old, change.new
        if new.stamp and not old.stamp:
            text = f"{new.stamp}: {text}"  # the date the new note gave its statement
        edits.append((old.start, old.end, text))
        replaced.append((old.text, text))
        if old.stamp and new.stamp and old.stamp != new.stamp:
            # "2026-11-02: Deploys need one approval." updated by "2026-12-07: …": the
            # line now says what was written on 2026-12-07. (An old stamp with none
            # in the new statement is never rewritten: `written_change`.)
            edits.append((old.stamp_at, old.stamp_at + len(old.stamp), new.stamp))
    # Each said as a sentence of its own, as the statement it follows ends.
    closing = next((m.group() for _, _, t in edits if (m := _END.search(t))), "")
    additions = [_said_alone(s.text.strip(), closing, old_body) for s in judgement.additions]
    body = old_body
    anchor = max((e for _, e, _ in edits), default=None)
    for start, end, text in sorted(edits, reverse=True):
        body = body[:start] + text + body[end:]
        if anchor is not None and end <= anchor:
            anchor += len(text) - (end - start)
    if additions:
        if anchor is None:  # nothing replaced: the old memory grows at its end
            lines = body.rstrip().split("\n")
            marker = _LIST_MARKUP.match(lines[-1])
            tail = "\n" + marker.group() if marker else ""
            body = body.rstrip()
            for addition in additions:
                body = (body + tail + addition) if tail else _join(body, addition)
        else:
            head, rest = body[:anchor], body[anchor:]
            for addition in additions:
                head = _join(head, addition)
            body = head + rest
    for line in judgement.appended:  # a reason or a use, on a line of its own
        body = f"{body.rstrip()}\n\n{line.strip()}"
    return body, tuple(replaced)


def _follow(line: str, changes: tuple[Change, ...], fallback: str) -> str:
    """A title or description after the update: the old value replaced where it stands,
    else (it cannot be put cleanly) `fallback`."""
    substituted = substitute(line, changes)
    return fallback if substituted is None else substituted


def _replaces_whole(old: MemoryText, judgement: Judgement) -> bool:
    """Whether the update changes every statement of the old memory (headings aside)."""
    changed = {(c.old.start, c.old.end) for c in judgement.changes}
    stated = [s for s in read_memory(old).statements if not s.heading]
    return all((s.start, s.end) in changed for s in stated)


def rewrite(
    old: MemoryText,
    judgement: Judgement,
    *,
    title: str | None = None,
    description: str | None = None,
) -> Rewritten:
    """The next version of `old` after the update `judgement` found (title and description
    as given, when given and the update replaces the whole memory)."""
    if (title is not None or description is not None) and not _replaces_whole(old, judgement):
        # A title given with the new memory names its fact: put over a memory of which one
        # statement changed ("Backend lead" over "Team contacts", its list of leads), it
        # took the memory's own name. It follows the new fact instead, as below.
        title = description = None
    body, replaced = rewrite_body(old.body, judgement)
    changes = judgement.changes
    lead = changes[0].written if changes else body
    if title is None:
        if title_is_derived(old.title, old.body):
            # The title was the first sentence: it follows the body (substituting the value
            # would leave "from Jenkins to GitHub Actions" as "Jenkins at GitHub Actions").
            first = old.body.strip()[: len(old.title.rstrip("…"))]
            touched = any(c.old.start < len(first) for c in changes)
            title = derive_title(body) if touched else old.title
        else:
            title = _follow(old.title, changes, derive_title(lead))
    if description is None:
        derived = old.description == derive_description(old.body)
        values_only = all(r.valued for c in changes for r in c.comparison.regions)
        stamped = any(c.old.stamp or c.new.stamp for c in changes)
        reasoned = bool(judgement.appended) or any(
            c.comparison.reason == REASON_OF_ITS_OWN for c in changes
        )
        if derived and (not values_only or stamped or reasoned):
            # Derived, and plain words changed: it follows the body. Put in its old words,
            # they garbled it ("Alice owns …" / "Bob took over …": "Alice Bob the billing
            # service"). So does a dated line's: its values put in, the old date stayed
            # ("2026-11-02: Deploys need two approval"), and a reason replaced or added
            # (the old "Why:" stayed in it).
            description = derive_description(body)
        else:
            description = _follow(old.description, changes, derive_description(body))
            if description == old.description and derived:
                # Derived, and no value in it to put in its new form (a statement replaced
                # whole: "Our CI runs on GitHub Actions" by "We moved CI … to Buildkite"):
                # it follows the body, or it would still state the old fact.
                description = derive_description(body)
    return Rewritten(body, title, description, replaced)
