"""What may leave this machine (docs/sync.md, "Nothing secret leaves the machine").

- Only memory files travel: `*.md` (MEMORY.md included), regular files, outside
  hidden folders. `.archive/` (forgotten memories and what hard deletes left), the
  root's lock, temp files and anything else hidden never do; neither does a folder
  that is another root of its own (the team root inside a project root).
- A memory whose front matter says `private: true` stays on this machine.
- Every file passes the store's secret detector (store/secrets.py) before it is
  committed: one that holds a credential is held back — never committed, named in
  the status — until the credential is gone from it.
- MEMORY.md is committed without the lines of memories that stay here (a private
  memory's title is as private as its body), nor a line that holds a credential.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from memory_recall.server.documents import INDEX_FILE_NAME, InvalidMemory
from memory_recall.server.store.index_file import index_target
from memory_recall.server.store.memory_file import MemoryFile
from memory_recall.server.store.secrets import find_secrets

PRIVATE_KEY = "private"
HeldReason = Literal["private", "credential"]


@dataclass(frozen=True)
class Held:
    """Why a file stays on this machine."""

    reason: HeldReason
    detail: str  # for people: the credential kinds, never the value

    @property
    def message(self) -> str:
        if self.reason == "private":
            return "private: true — stays on this machine"
        return f"holds a credential ({self.detail}); remove it and sync again"


def is_synced_path(path: str, nested_roots: Iterable[str] = ()) -> bool:
    """Whether a path inside the root (`/`-separated) is one that sync carries."""
    if not path.endswith(".md"):
        return False
    parts = path.split("/")
    if any(part.startswith(".") or not part for part in parts):
        return False
    return not any(path == n or path.startswith(n.rstrip("/") + "/") for n in nested_roots)


def is_private(data: bytes) -> bool:
    try:
        return MemoryFile.parse(data.decode("utf-8", "replace")).get_bool(PRIVATE_KEY)
    except InvalidMemory:
        return False


# The detector takes milliseconds a memory; a sync looks at the same contents again and
# again (MEMORY.md, a file the journal and the disk both hold): its verdicts are kept by
# the content's id, this many of them (ids only, never the content).
VERDICTS_KEPT = 50_000
_verdicts: OrderedDict[str, Held | None] = OrderedDict()
_verdicts_lock = threading.Lock()


def held(data: bytes) -> Held | None:
    """Why this content may not be committed, or None when it may."""
    key = hashlib.sha1(data).hexdigest()
    with _verdicts_lock:
        if key in _verdicts:
            _verdicts.move_to_end(key)
            return _verdicts[key]
    verdict = _judge(data)
    with _verdicts_lock:
        _verdicts[key] = verdict
        if len(_verdicts) > VERDICTS_KEPT:
            _verdicts.popitem(last=False)
    return verdict


def _judge(data: bytes) -> Held | None:
    if is_private(data):
        return Held("private", "")
    kinds = sorted({f.kind for f in find_secrets(data.decode("utf-8", "replace"))})
    if kinds:
        return Held("credential", ", ".join(kinds))
    return None


@functools.lru_cache(maxsize=VERDICTS_KEPT)
def _line_holds_secret(line: str) -> bool:
    return bool(find_secrets(line))


def public_index(text: bytes, stays: Callable[[str], bool]) -> bytes:
    """MEMORY.md as committed: without the lines of memories that stay on this machine,
    nor any line that holds a credential itself (a description can: the rest travels)."""
    lines = text.decode("utf-8", "replace").splitlines(keepends=True)
    kept = [
        line
        for line in lines
        if ((target := index_target(line)) is None or not stays(target))
        and not _line_holds_secret(line)
    ]
    return "".join(kept).encode("utf-8")


def is_index(path: str) -> bool:
    return path == INDEX_FILE_NAME
