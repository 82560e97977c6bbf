"""One call to an OpenAI-compatible `POST {url}/embeddings`, its answer validated.

The endpoint is not trusted: an answer with the wrong number of vectors, indexes that do
not cover the input, a dimension that differs between vectors or from the model's known
one, a value that is not a finite number, or an HTTP error is an `EmbeddingError` naming
what was wrong, never a vector. The call itself is the one OpenAI-compatible client
(`models/openai.py`): the key read per call and masked out of every reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from memory_recall.server.models.openai import EndpointError, OpenAiEndpoint

# A batch answer: 64 texts × 1,024 floats as JSON text is about 1.3 MB.
MAX_ANSWER_BYTES = 32 * 1024 * 1024


class EmbeddingError(Exception):
    """The endpoint gave no usable vectors; the message is the reason."""


Vector = list[float]


class EmbeddingsEndpoint:
    """`POST {url}/embeddings {model, input: [...]}` → one vector per input, in input order."""

    def __init__(
        self, url: str, model: str | None, api_key_env: str | None, *, client: Any = None
    ) -> None:
        # One pooled client for the channel's life: a query embedding must not pay for a
        # new connection (or a TLS context) inside the fast phase's deadline.
        self._endpoint = OpenAiEndpoint(
            url, api_key_env, setting="embeddings.apiKeyEnv", pooled=True, client=client
        )
        self.endpoint = self._endpoint.base + "/embeddings"
        self.model = model or "default"
        self.dimension: int | None = None  # learned from the first good answer

    async def aclose(self) -> None:
        await self._endpoint.aclose()

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text; EmbeddingError with the reason otherwise. No timeout here:
        the caller's deadline cancels the call, and cancelling closes the connection."""
        body = {"model": self.model, "input": list(texts)}
        try:
            status, raw = await self._endpoint.post("embeddings", body, MAX_ANSWER_BYTES)
        except EndpointError as exc:
            raise EmbeddingError(str(exc)) from None
        if status != 200:
            raise EmbeddingError(f"HTTP {status} from the embeddings endpoint")
        vectors = parse_answer(raw, len(texts), self.dimension)
        if vectors:
            self.dimension = len(vectors[0])
        return vectors


def parse_answer(raw: bytes, expected: int, dimension: int | None) -> list[Vector]:
    """The vectors of an `{"data": [{"embedding": [...], "index": i}, ...]}` answer, in
    input order, or EmbeddingError saying what is wrong with it."""
    try:
        data = json.loads(raw)["data"]
    except (ValueError, KeyError, TypeError) as exc:
        raise EmbeddingError("malformed answer: not an OpenAI embeddings response") from exc
    if not isinstance(data, list):
        raise EmbeddingError("malformed answer: data is not a list")
    if len(data) != expected:
        raise EmbeddingError(f"wrong count: {len(data)} vectors for {expected} inputs")
    out: list[Vector | None] = [None] * expected
    want = dimension
    for position, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
            raise EmbeddingError("malformed answer: an item has no embedding list")
        index = item.get("index", position)
        if not isinstance(index, int) or not 0 <= index < expected or out[index] is not None:
            raise EmbeddingError(f"malformed answer: bad or repeated index {index!r}")
        vector = item["embedding"]
        if not vector:
            raise EmbeddingError("malformed answer: an empty embedding")
        want = len(vector) if want is None else want
        if len(vector) != want:
            raise EmbeddingError(f"wrong dimension: {len(vector)}, expected {want}")
        if not all(type(v) in (float, int) and math.isfinite(v) for v in vector):
            raise EmbeddingError("an embedding holds a value that is not a finite number")
        if not any(vector):
            raise EmbeddingError("an embedding is all zeros (no direction to compare)")
        out[index] = [float(v) for v in vector]
    return [v for v in out if v is not None]
