"""A memory's file name that follows its title when an update changes what the name says.

A remember names a new file after its title (`files.slugify`): "Release freeze starts on
December 18" is `release-freeze-starts-on-december-18.md`. An update that rewrites the 18
as 15 rewrites the title too, and the name went on saying 18 — in the folder the user
browses, and in the prompt's heading, where the agent reads the title and the path side
by side and meets both dates. So an update whose title changes moves the file to the new
title's name (docs/writing.md, "Partial updates"), with two limits that keep what the user
has:

- only a name the daemon gave: the old title's slug, or it with the `-N` a namesake made
  it take. A name written by hand or by another agent (`feedback_testing.md`) stays;
- only a file no other memory names: a markdown link to it, a `related`, `supersedes` or
  `maybeSupersedes` entry, a wiki link that found it by its file name. Those would point
  nowhere after the move, so the name stays (read conservatively: the file's name anywhere
  in another memory's body keeps it).

The move is the copy first, then the removal, one journaled operation as every write: a
crash between them leaves both files, `memory/undo` puts the old name back, `memory/history`
follows the memory across it (`inventory.memory_history`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.facts.newer import MAYBE_SUPERSEDES_KEY
from memory_recall.server.roots import posix_relative
from memory_recall.server.store.commit import PlannedChange
from memory_recall.server.store.files import slugify
from memory_recall.server.store.index_file import IndexEntry
from memory_recall.server.store.journal import Change, ChangeRecord

# The journal's action on both changes of a move to a new name: `memory_history` pairs
# them by it (the new file's creation, the old one's removal, in one operation).
RENAMED = "renamed"


def renamed_pair(changes: Sequence[ChangeRecord]) -> tuple[ChangeRecord, ChangeRecord] | None:
    """The two changes of a rename in one operation's journal: the old file's removal and
    the new file's creation; None when the operation renamed nothing."""
    left = next((c for c in changes if c.action == RENAMED and c.after_hash is None), None)
    made = next((c for c in changes if c.action == RENAMED and c.before_hash is None), None)
    return (left, made) if left is not None and made is not None else None


_LIST_KEYS = ("related", "supersedes", MAYBE_SUPERSEDES_KEY)
_WIKI = re.compile(r"\[\[([^\[\]|#\n]+)")


def renamed_slug(
    rel: str, old_title: str, new_title: str, others: Iterable[MemoryDocument]
) -> str | None:
    """The new name (a slug, without `.md`) for the memory at `rel` whose title goes from
    `old_title` to `new_title`; None when its name stays."""
    name = rel.rpartition("/")[2]
    stem = name.removesuffix(".md")
    old, new = slugify(old_title), slugify(new_title)
    if new == old or not name.endswith(".md") or not _given_by_us(stem, old):
        return None
    for doc in others:
        if posix_relative(doc.relative_path) != rel and _names(doc, name, stem):
            return None
    return new


def _given_by_us(stem: str, slug: str) -> bool:
    """Whether `stem` is `slug`, or `slug-N` as `files.free_name` makes beside a namesake."""
    if stem == slug:
        return True
    base, _, number = stem.rpartition("-")
    return base == slug and number.isdigit() and int(number) >= 2


def _names(doc: MemoryDocument, name: str, stem: str) -> bool:
    """Whether `doc` may name the file `name`: in its body (a markdown link, a reference,
    the path written out), in a front-matter list, or by a wiki link to its file name."""
    if name in doc.body:
        return True
    for key in _LIST_KEYS:
        if any(path.rpartition("/")[2] == name for path in doc.paths_of(key)):
            return True
    if "[[" in doc.body:
        for match in _WIKI.finditer(doc.body):
            if slugify(match.group(1).rpartition("/")[2]) == stem:
                return True
    return False


def rename_changes(
    rel: str, before: bytes, after: bytes, title: str, slug: str, entry: IndexEntry
) -> list[PlannedChange]:
    """The updated memory written under its new name in the same folder (the name chosen
    under the root's lock: `slug-2` beside a namesake), then the old file removed; its
    statistics go with it. The first change is the memory's: answers and links name it."""
    folder = rel.rpartition("/")[0]
    return [
        PlannedChange(
            Change("", RENAMED, None, after, title),
            new_in=folder,
            slug=slug,
            entry=entry,
            stats="updated",
            moved_from=rel,
        ),
        PlannedChange(Change(rel, RENAMED, before, None, title)),
    ]
