"""Embedding vectors kept in the state store (docs/writing.md): by the hash of the text embedded
and the model's name, so a restart re-embeds nothing and a model change re-embeds all.

A vector is stored as little-endian float32 bytes. Without a state store (`off`) the
cache lives in memory for the session only.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Mapping

from memory_recall.server.store.state import StateStore, now_ms

# SQLite's default limit of host parameters per statement is 999 on old builds.
_LOOKUP_CHUNK = 500


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def to_bytes(vector: Iterable[float]) -> bytes:
    packed = array("f", vector)
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def from_bytes(blob: bytes) -> array[float]:
    packed = array("f")
    packed.frombytes(blob)
    if sys.byteorder != "little":
        packed.byteswap()
    return packed


class VectorCache:
    """Vectors of one model: text hash → float32 bytes."""

    def __init__(self, store: StateStore | None, model: str) -> None:
        self.store = store
        self.model = model
        self._memory: dict[str, bytes] = {}
        self.problem: str | None = None  # a store that failed: the session keeps vectors in RAM

    def get_many(self, hashes: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(hashes))
        found = {h: self._memory[h] for h in wanted if h in self._memory}
        missing = [h for h in wanted if h not in found]
        if self.store is None or not missing:
            return found
        try:
            for start in range(0, len(missing), _LOOKUP_CHUNK):
                chunk = missing[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self.store.query(
                    f"SELECT text_hash, vector FROM embeddings WHERE model = ? "
                    f"AND text_hash IN ({marks})",
                    [self.model, *chunk],
                )
                found.update((h, bytes(v)) for h, v in rows)
        except sqlite3.Error as exc:
            self.problem = f"the vector cache could not be read: {exc}"
        return found

    def put_many(self, vectors: Mapping[str, bytes], dimension: int) -> None:
        if self.store is None:
            self._memory.update(vectors)
            return
        try:
            with self.store.transaction() as tx:
                tx.executemany(
                    "INSERT OR REPLACE INTO embeddings (model, text_hash, dimension, vector, "
                    "created_ms) VALUES (?, ?, ?, ?, ?)",
                    [(self.model, h, dimension, v, now_ms()) for h, v in vectors.items()],
                )
        except Exception as exc:  # WriteFailed, sqlite3.Error: keep them for this session
            self.problem = f"the vector cache could not be written: {exc}"
            self._memory.update(vectors)

    def count(self) -> int:
        if self.store is None:
            return len(self._memory)
        rows = self.store.query("SELECT COUNT(*) FROM embeddings WHERE model = ?", [self.model])
        return int(rows[0][0])
