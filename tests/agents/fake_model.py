"""A stand-in model for the real agent CLIs (`make agents`): four wire formats, one script.

It speaks what the agents send — Anthropic's Messages API (Claude Code), OpenAI's chat
completions (qwen-code) and Responses API (Codex), Gemini's generateContent (Gemini CLI),
streamed or not — and plays the same part in each: the first request of a task gets one
call of the agent's shell tool (`ls`), the request that carries its result gets a short
final answer, and anything else (titles, summaries, background memory requests) gets
"ok". Every request body is kept, in order, so a test can read what reached the model.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL = "Deploys run through the pipeline."
SHELL_NAMES = ("Bash", "run_shell_command", "shell", "shell_command", "exec_command", "bash")


class Recorded:
    def __init__(self, path: str, body: Any) -> None:
        self.path = path
        self.body = body
        self.text = json.dumps(body, ensure_ascii=False)


def _shell_tool(body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The agent's shell tool in this request, and arguments that run `ls` with it."""
    declared: list[tuple[str, dict[str, Any]]] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if "functionDeclarations" in tool:  # Gemini
            for f in tool["functionDeclarations"]:
                schema = f.get("parametersJsonSchema") or f.get("parameters") or {}
                declared.append((f.get("name", ""), schema))
        elif isinstance(tool.get("function"), dict):  # OpenAI chat
            declared.append(
                (tool["function"].get("name", ""), tool["function"].get("parameters") or {})
            )
        else:  # Anthropic, Responses
            declared.append(
                (tool.get("name", ""), tool.get("input_schema") or tool.get("parameters") or {})
            )
    for wanted in SHELL_NAMES:
        for name, schema in declared:
            if name == wanted:
                props = schema.get("properties") or {}
                if "cmd" in props:
                    return name, {"cmd": "ls"}
                command = props.get("command") or {}
                if command.get("type") == "array":
                    return name, {"command": ["ls"]}
                return name, {"command": "ls"}
    return None


def _has_tool_result(body: dict[str, Any]) -> bool:
    text = json.dumps(body)
    return any(
        marker in text
        for marker in (
            '"tool_result"',
            '"role": "tool"',
            '"function_call_output"',
            '"functionResponse"',
            '"custom_tool_call_output"',
        )
    )


class FakeModel:
    """The server, on 127.0.0.1, in a thread."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:  # model lists
                self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}],
                                 "models": [{"name": "models/fake"}]})  # fmt: skip

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                with model._lock:
                    model.requests.append(Recorded(self.path, body))
                path = self.path.split("?")[0]
                if path.endswith("/messages/count_tokens"):
                    self._json(200, {"input_tokens": 100})
                elif path.endswith("/messages"):
                    self._anthropic(body)
                elif path.endswith("/chat/completions"):
                    self._chat(body)
                elif path.endswith("/responses"):
                    self._responses(body)
                elif ":countTokens" in path:
                    self._json(200, {"totalTokens": 100})
                elif ":streamGenerateContent" in path or ":generateContent" in path:
                    self._gemini(body, stream=":streamGenerateContent" in path)
                else:
                    self._json(404, {"error": {"message": f"no {path} here"}})

            # -- plumbing -----------------------------------------------------------------

            def _json(self, status: int, data: Any) -> None:
                out = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def _sse(self, events: list[tuple[str | None, Any]]) -> None:
                chunks = []
                for name, data in events:
                    payload = data if isinstance(data, str) else json.dumps(data)
                    chunks.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
                out = "".join(chunks).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def _plan(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
                """A shell call for a task's first request; None: answer with text."""
                if _has_tool_result(body):
                    return None
                return _shell_tool(body)

            # -- Anthropic Messages -----------------------------------------------------

            def _anthropic(self, body: dict[str, Any]) -> None:
                call = self._plan(body)
                model_name = body.get("model", "fake")
                if call is not None:
                    block = {
                        "type": "tool_use",
                        "id": "toolu_fake1",
                        "name": call[0],
                        "input": call[1],
                    }
                    stop = "tool_use"
                else:
                    block = {"type": "text", "text": FINAL if body.get("tools") else "ok"}
                    stop = "end_turn"
                message = {"id": "msg_fake", "type": "message", "role": "assistant",
                           "model": model_name, "content": [block], "stop_reason": stop,
                           "stop_sequence": None,
                           "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip
                if not body.get("stream"):
                    self._json(200, message)
                    return
                start = {**message, "content": [], "stop_reason": None}
                if block["type"] == "tool_use":
                    opened = {**block, "input": {}}
                    delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                else:
                    opened = {"type": "text", "text": ""}
                    delta = {"type": "text_delta", "text": block["text"]}
                self._sse([
                    ("message_start", {"type": "message_start", "message": start}),
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": opened}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": stop, "stop_sequence": None},
                                       "usage": {"output_tokens": 5}}),
                    ("message_stop", {"type": "message_stop"}),
                ])  # fmt: skip

            # -- OpenAI chat completions ---------------------------------------------

            def _chat(self, body: dict[str, Any]) -> None:
                call = self._plan(body)
                model_name = body.get("model", "fake")
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                if call is not None:
                    message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "call_fake1", "type": "function",
                         "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}  # fmt: skip
                    finish = "tool_calls"
                else:
                    message = {"role": "assistant", "content": FINAL if body.get("tools") else "ok"}
                    finish = "stop"
                if not body.get("stream"):
                    self._json(200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                                     "model": model_name, "usage": usage,
                                     "choices": [{"index": 0, "message": message,
                                                  "finish_reason": finish}]})  # fmt: skip
                    return
                delta = dict(message)
                if "tool_calls" in delta:
                    delta["tool_calls"] = [{**delta["tool_calls"][0], "index": 0}]
                base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                        "model": model_name}  # fmt: skip
                self._sse([
                    (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
                    (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                            "usage": usage}),
                    (None, "[DONE]"),
                ])  # fmt: skip

            # -- OpenAI Responses ------------------------------------------------------

            def _responses(self, body: dict[str, Any]) -> None:
                call = self._plan(body)
                if call is not None:
                    item: dict[str, Any] = {"type": "function_call", "id": "fc_fake1",
                                            "call_id": "call_fake1", "name": call[0],
                                            "arguments": json.dumps(call[1]), "status": "completed"}  # fmt: skip
                else:
                    item = {"type": "message", "id": "msg_fake1", "role": "assistant",
                            "status": "completed",
                            "content": [{"type": "output_text", "text": FINAL, "annotations": []}]}  # fmt: skip
                usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": 15}  # fmt: skip
                response = {"id": "resp_fake", "object": "response", "status": "completed",
                            "model": body.get("model", "fake"), "output": [item], "usage": usage}  # fmt: skip
                self._sse([
                    ("response.created", {"type": "response.created",
                                          "response": {**response, "status": "in_progress", "output": []}}),
                    ("response.output_item.added", {"type": "response.output_item.added",
                                                    "output_index": 0, "item": item}),
                    ("response.output_item.done", {"type": "response.output_item.done",
                                                   "output_index": 0, "item": item}),
                    ("response.completed", {"type": "response.completed", "response": response}),
                ])  # fmt: skip

            # -- Gemini --------------------------------------------------------------

            def _gemini(self, body: dict[str, Any], *, stream: bool) -> None:
                call = self._plan(body)
                if call is not None:
                    part: dict[str, Any] = {"functionCall": {"name": call[0], "args": call[1]}}
                else:
                    part = {"text": FINAL if body.get("tools") else "ok"}
                answer = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                          "finishReason": "STOP", "index": 0}],
                          "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                            "totalTokenCount": 15},
                          "modelVersion": "gemini-2.5-flash"}  # fmt: skip
                if stream:
                    self._sse([(None, answer)])
                else:
                    self._json(200, answer)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
