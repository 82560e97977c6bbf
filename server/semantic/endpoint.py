"""One call to an OpenAI-compatible `POST {url}/embeddings`, its answer validated.

The endpoint is not trusted: an answer with the wrong number of vectors, indexes that do
not cover the input, a dimension that differs between vectors or from the model's known
one, a value that is not a finite number, or an HTTP error is an `EmbeddingError` naming
what was wrong, never a vector. The key is read from the environment per call and
masked out of every reason.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any

from memory_recall.server.models import SelectorError
from memory_recall.server.models.http import _read_bounded, mask_secret

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
        self.endpoint = url.rstrip("/") + "/embeddings"
        self.model = model or "default"
        self._api_key_env = api_key_env
        self.dimension: int | None = None  # learned from the first good answer
        self._client = client

    def _headers(self) -> tuple[dict[str, str], str]:
        headers = {"Content-Type": "application/json", "Accept-Encoding": "gzip, deflate"}
        key = ""
        if self._api_key_env is not None:
            key = os.environ.get(self._api_key_env, "")
            if not key:
                raise EmbeddingError(f"environment variable {self._api_key_env} is not set")
            headers["Authorization"] = f"Bearer {key}"
        return headers, key

    def client(self) -> Any:
        """One pooled client for the channel's life: a query embedding must not pay for a
        new connection (or a TLS context) inside the fast phase's deadline."""
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=None, trust_env=False)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text; EmbeddingError with the reason otherwise. No timeout here:
        the caller's deadline cancels the call, and cancelling closes the connection."""
        headers, key = self._headers()
        try:
            return await self._embed(list(texts), headers)
        except EmbeddingError as exc:
            raise EmbeddingError(mask_secret(str(exc), key)) from None
        except Exception as exc:  # e.g. a URL httpx rejects only when used
            raise EmbeddingError(f"request failed: {type(exc).__name__}") from None

    async def _embed(self, texts: list[str], headers: dict[str, str]) -> list[Vector]:
        import httpx

        payload = json.dumps({"model": self.model, "input": texts}, ensure_ascii=True)
        try:
            async with self.client().stream(
                "POST", self.endpoint, content=payload.encode("ascii"), headers=headers
            ) as response:
                if response.status_code != 200:
                    raise EmbeddingError(
                        f"HTTP {response.status_code} from the embeddings endpoint"
                    )
                raw = await _read_bounded(response, MAX_ANSWER_BYTES)
        except SelectorError as exc:  # the bounded reader's own reasons
            raise EmbeddingError(str(exc)) from None
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"request failed: {type(exc).__name__}") from None
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
