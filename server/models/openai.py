"""One client for OpenAI-compatible endpoints: chat completions (the selector, the
completer) and embeddings (the semantic channel).

The upstream is not trusted, and what it sends back reaches results, telemetry and
the log, so every caller gets the same guarantees from here:

- the API key is read from the environment variable the settings name, per call;
  a setting that is not a variable name (most likely the key itself pasted in) is
  refused and never echoed;
- the answer is read up to a bound *after* decoding (a small gzip body can expand a
  thousandfold), in the encodings asked for;
- `mask_secret` takes every fragment of the key (any case, cut short) out of any text
  that came back, and out of every failure's reason.

There is no client-side timeout: the caller's deadline cancels the call, and
cancelling closes the connection. `httpx` is imported only by a daemon that has a
model or an embeddings endpoint configured.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from typing import Any

# A fragment of the key this long found in an upstream's text is masked.
KEY_FRAGMENT_CHARS = 8
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class EndpointError(Exception):
    """The endpoint gave no usable answer; the message is the reason (safe to show)."""


def mask_secret(text: str, secret: str) -> str:
    """`text` with every fragment of `secret` (any case, cut short, at least
    `KEY_FRAGMENT_CHARS` long) replaced by `[redacted]`."""
    if not secret or not text:
        return text
    n = min(KEY_FRAGMENT_CHARS, len(secret))
    folded = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    folded_secret = secret.lower()
    grams = {folded_secret[i : i + n] for i in range(len(folded_secret) - n + 1)}
    masked = [False] * len(text)
    for i in range(len(folded) - n + 1):
        if folded[i : i + n] in grams:
            masked[i : i + n] = [True] * n
    if not any(masked):
        return text
    out, i = [], 0
    while i < len(text):
        if masked[i]:
            while i < len(text) and masked[i]:
                i += 1
            out.append("[redacted]")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


class OpenAiEndpoint:
    """`POST {base}/{path}` with JSON, its answer read within a bound.

    `pooled`: keep one connection pool for the endpoint's life (the semantic channel's
    query embedding must not pay for a new connection inside the fast phase's
    deadline); otherwise each call opens and closes its own.
    """

    def __init__(
        self,
        base_url: str,
        api_key_env: str | None,
        *,
        setting: str = "apiKeyEnv",
        pooled: bool = False,
        client: Any = None,
    ) -> None:
        self.base = base_url.rstrip("/")
        self._api_key_env = api_key_env
        self._setting = setting
        self._pooled = pooled or client is not None
        self._client = client

    def key(self) -> str:
        """The API key, or "" without one; EndpointError when it cannot be had."""
        if self._api_key_env is None:
            return ""
        if not _VARIABLE_NAME.fullmatch(self._api_key_env):
            raise EndpointError(
                f"{self._setting} does not look like an environment variable name (it must "
                "name the variable that holds the key); no request sent"
            )
        key = os.environ.get(self._api_key_env)
        if not key:
            raise EndpointError(f"environment variable {self._api_key_env} is not set")
        return key

    async def post(self, path: str, body: dict[str, Any], limit: int) -> tuple[int, bytes]:
        """(status, decoded body read up to `limit` bytes); EndpointError on a failure,
        its reason free of the key."""
        key = self.key()
        try:
            return await self._post(path, body, limit, key)
        except EndpointError as exc:
            raise EndpointError(mask_secret(str(exc), key)) from None

    async def _post(
        self, path: str, body: dict[str, Any], limit: int, key: str
    ) -> tuple[int, bytes]:
        import httpx

        # Only encodings decoded here, with a bound (`read_bounded`).
        headers = {"Content-Type": "application/json", "Accept-Encoding": "gzip, deflate"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        # ASCII JSON: any string can be sent, whatever it holds.
        payload = json.dumps(body, ensure_ascii=True).encode("ascii")
        url = f"{self.base}/{path}"
        try:
            if self._pooled:
                async with self._pool().stream(
                    "POST", url, content=payload, headers=headers
                ) as response:
                    return response.status_code, await read_bounded(response, limit)
            async with (
                httpx.AsyncClient(timeout=None, trust_env=False) as client,
                client.stream("POST", url, content=payload, headers=headers) as response,
            ):
                return response.status_code, await read_bounded(response, limit)
        except httpx.HTTPError as exc:
            raise EndpointError(f"request failed: {type(exc).__name__}") from None
        except EndpointError:
            raise
        except Exception as exc:  # e.g. a URL httpx rejects only when used
            raise EndpointError(f"request failed: {type(exc).__name__}") from None

    def _pool(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=None, trust_env=False)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


async def read_bounded(response: Any, limit: int) -> bytes:
    """The decoded body, reading no further than `limit` decoded bytes."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        decoder = None
    elif encoding in ("gzip", "x-gzip"):
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        decoder = zlib.decompressobj()
    else:
        raise EndpointError(f"answer in an unsupported content-encoding ({encoding[:40]})")
    out = bytearray()
    size = f"{limit // 1024} KiB" if limit >= 1024 else f"{limit} bytes"
    too_large = EndpointError(f"answer larger than {size}: not read further")
    try:
        async for chunk in response.aiter_raw():
            if decoder is None:
                out += chunk
            else:
                # At most one byte past the limit is ever decoded.
                out += decoder.decompress(chunk, limit + 1 - len(out))
            if len(out) > limit:
                raise too_large
        if decoder is not None:
            out += decoder.flush()
    except zlib.error as exc:
        raise EndpointError(f"answer is not valid {encoding} ({exc})") from exc
    if len(out) > limit:
        raise too_large
    return bytes(out)


def chat_content(raw: bytes) -> str:
    """The message text of an OpenAI chat completion; EndpointError when it is not one."""
    try:
        content = json.loads(raw)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise EndpointError("malformed answer: not an OpenAI chat completion") from exc
    if not isinstance(content, str):
        raise EndpointError("malformed answer: message content is not text")
    return content
