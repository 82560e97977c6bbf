"""The model channel for judgement tasks (docs/extraction.md): `extract`, `reconcile`,
`consolidate`.

Two completers answer a `CompletionRequest` with the model's text:

- `ClientCompleter` sends `memory/complete` to a host that advertised
  `initializationOptions.capabilities.complete = true`;
- `HttpCompleter` sends the same messages to an OpenAI-compatible
  `POST {url}/chat/completions`, asking for structured output
  (`response_format: json_schema`) and falling back to plain JSON mode, then
  to none, when the server refuses it (remembered for the session).

Both follow `memory/select`'s rules: the caller's deadline (`complete_within`)
bounds the call and cancelling abandons it (`$/cancelRequest` to the host,
the HTTP connection closed); the API key is read from the named environment
variable, sent only as a header and redacted from anything that comes back;
every failure is a `CompletionError` whose message is the recorded reason.
The answer is text to be validated by the caller, never trusted.

Callers redact the messages (secrets.py) before building the request: this
layer sits below the store and cannot see the detector.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from memory_recall.protocol.messages import ChatMessage, CompleteParams, CompleteResult
from memory_recall.protocol.methods import COMPLETE
from memory_recall.server.models import CancelRequest, SendRequest
from memory_recall.server.models.openai import EndpointError, OpenAiEndpoint, chat_content

# A completion answer larger than this is not a handful of memories: stop reading.
MAX_ANSWER_BYTES = 256 * 1024


class CompletionError(Exception):
    """The model gave no usable answer; the message is the reason (safe to show and log)."""


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def json_answer(content: str) -> Any:
    """The JSON value of a model's answer: bare, in a ```json fence, or wrapped in prose
    (the outermost braces, once); CompletionError("malformed answer: not JSON") else."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(text[start : end + 1])
            except json.JSONDecodeError:
                pass
    raise CompletionError("malformed answer: not JSON")


@dataclass(frozen=True)
class CompletionRequest:
    task: str  # extract | reconcile | consolidate
    messages: list[dict[str, str]]  # [{role, content}], already redacted by the caller
    response_schema: dict[str, Any]
    max_tokens: int
    schema_name: str = "answer"


class Completer(Protocol):
    kind: str

    async def complete(self, request: CompletionRequest) -> str:
        """The model's answer text, or CompletionError with the reason."""
        ...


async def complete_within(
    completer: Completer, request: CompletionRequest, deadline_s: float
) -> tuple[str, float]:
    """(answer, elapsed ms) within the deadline; CompletionError names a timeout as one."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        answer = await asyncio.wait_for(completer.complete(request), deadline_s)
    except asyncio.TimeoutError:
        raise CompletionError(f"timed out after {round(deadline_s * 1000)} ms") from None
    return answer, round((loop.time() - started) * 1000, 3)


class ClientCompleter:
    """`memory/complete` to the host, which runs its own model."""

    kind = "client"

    def __init__(self, send_request: SendRequest, cancel_request: CancelRequest) -> None:
        self._send = send_request
        self._cancel = cancel_request

    async def complete(self, request: CompletionRequest) -> str:
        params = CompleteParams(
            task=request.task,  # type: ignore[arg-type]
            messages=[ChatMessage.model_validate(m) for m in request.messages],
            response_schema=request.response_schema,
            max_tokens=request.max_tokens,
        )
        msg_id, future = self._send(COMPLETE, params.wire())
        try:
            reply = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            self._cancel(msg_id)  # the deadline passed or the request was cancelled
            raise
        except Exception as exc:  # an error response from the host
            message = str(getattr(exc, "message", None) or exc) or type(exc).__name__
            raise CompletionError(f"client declined: {_short(message)}") from exc
        try:
            content = CompleteResult.model_validate(reply).content
        except Exception as exc:
            raise CompletionError(
                f"malformed answer: expected {{content: text}}, got {_short(repr(reply))}"
            ) from exc
        if len(content.encode("utf-8")) > MAX_ANSWER_BYTES:
            raise CompletionError(f"answer larger than {MAX_ANSWER_BYTES // 1024} KiB")
        return content


# Ways to ask for JSON, best first: a server that rejects one gets the next.
_FORMATS = ("json_schema", "json_object", "none")


class HttpCompleter:
    """An OpenAI-compatible chat-completions endpoint (Ollama, vLLM, llama.cpp, hosted)."""

    kind = "http"

    def __init__(self, url: str, model: str | None, api_key_env: str | None) -> None:
        self._endpoint = OpenAiEndpoint(url, api_key_env, setting="selector.apiKeyEnv")
        self._model = model or "default"
        self._format = 0  # index into _FORMATS; moves on when the server refuses one
        self.last_format = _FORMATS[0]

    async def complete(self, request: CompletionRequest) -> str:
        try:
            return await self._complete(request)
        except EndpointError as exc:
            raise CompletionError(str(exc)) from None

    def _body(self, request: CompletionRequest, fmt: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model,
            "temperature": 0,
            "max_tokens": request.max_tokens,
            "messages": request.messages,
        }
        if fmt == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "schema": request.response_schema,
                    "strict": False,
                },
            }
        elif fmt == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    async def _complete(self, request: CompletionRequest) -> str:
        while True:
            fmt = _FORMATS[self._format]
            status, payload = await self._endpoint.post(
                "chat/completions", self._body(request, fmt), MAX_ANSWER_BYTES
            )
            if status in {400, 422} and self._format + 1 < len(_FORMATS):
                # Most servers that lack structured output say so with a 400.
                self._format += 1
                continue
            self.last_format = fmt
            break
        if status != 200:
            raise CompletionError(f"HTTP {status} from the model")
        return chat_content(payload)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
