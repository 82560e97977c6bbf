"""The vectors of one snapshot's documents as one matrix, and the scan of one query.

numpy does the scan (10,000 × 384 floats in about a millisecond, where a Python loop
takes a tenth of a second): it is imported here, and this module only by a configured
channel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from memory_recall.server.datafiles import data_lines
from memory_recall.server.documents import MemoryDocument

# What is embedded of a memory: its title, description and the start of its body. Small
# encoders read 256-512 tokens; more text only costs the endpoint time.
EMBEDDED_BODY_CHARS = 2_000


def embedded_text(doc: MemoryDocument) -> str:
    return "\n".join(
        part for part in (doc.title, doc.description, doc.body[:EMBEDDED_BODY_CHARS]) if part
    )


@dataclass(frozen=True)
class SemanticHit:
    document: MemoryDocument
    similarity: float  # cosine
    # How far above this query's typical similarity to any memory, in standard
    # deviations: comparable across models, whose cosines live on different scales.
    z: float


class VectorMatrix:
    """Unit-length float32 rows, one per document that has a vector."""

    def __init__(
        self,
        documents: Sequence[MemoryDocument],
        blobs: Sequence[bytes],
        background: Sequence[bytes] = (),
    ) -> None:
        self.documents = list(documents)
        self.rows = _unit_rows(blobs)
        self.dimension = int(self.rows.shape[1]) if len(blobs) else 0
        # The background sentences (data/background.txt): what "unrelated" looks like
        # for this model, so the floor holds for a corpus of five memories too.
        back = _unit_rows(background)
        self.background = back if back.shape[1:] == self.rows.shape[1:] else self.rows[:0]

    def __len__(self) -> int:
        return len(self.documents)

    def hits(
        self, vector: Sequence[float], keep: Callable[[MemoryDocument], bool], limit: int
    ) -> list[SemanticHit]:
        """The `limit` most similar documents that `keep` accepts, most similar first."""
        if not self.documents or len(vector) != self.dimension:
            return []
        query = np.asarray(vector, dtype=np.float32)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        sims = self.rows @ query
        reference = np.concatenate([sims, self.background @ query])
        mean, std = float(reference.mean()), float(reference.std())
        order = np.argsort(-sims)
        out: list[SemanticHit] = []
        for row in order[: limit * 4 + 16].tolist():
            doc = self.documents[row]
            if keep(doc):
                sim = float(sims[row])
                out.append(SemanticHit(doc, round(sim, 4), round((sim - mean) / (std or 1.0), 3)))
                if len(out) == limit:
                    break
        return out


def _unit_rows(blobs: Sequence[bytes]) -> np.ndarray:
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    rows = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-12)).astype(np.float32)


def background_texts() -> list[str]:
    """The background sentences, from the package's data."""
    return list(data_lines("memory_recall.server.semantic", "background.txt"))
