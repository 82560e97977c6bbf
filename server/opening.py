"""The opening: a face's first messages answered while the daemon is still importing.

A host gives a server a few hundred milliseconds to answer `initialize` (Claude Code
sends its first model request about 2 s after starting an MCP server, with whatever
tools it has by then), while importing the daemon (pydantic models, lsprotocol, pygls,
the MCP SDK, the core) takes seconds. So `memory-recall serve` and `memory-recall mcp`
start with this standard-library loop: a thread imports the daemon while the main
thread reads stdin and answers, from canned replies, the few first requests whose
answer does not depend on anything the daemon has yet to build (`initialize`, and for
MCP the tool, prompt and resource lists). Everything read is kept; when the imports are
done the real server is handed the whole stream from its first byte, so its state is
exactly what it would have been, and its own replies to the requests answered early are
dropped (compared first: a difference is logged as a bug). Anything the opening is not
sure of (a malformed first message, a request it has no canned reply for) ends the
opening's answering: from there on it only reads, and the real server answers.

docs/performance.md ("Start-up") has the figures. Imports here: the standard library only.
"""

from __future__ import annotations

import json
import logging
import os
import select
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("memory_recall")

# Bytes kept from stdin before the real server takes over: beyond this the opening stops
# reading (the host then waits on a full pipe, as it would on a busy server).
MAX_HELD_BYTES = 16 << 20

# A face's responder: a parsed message in, the reply to send (a JSON-RPC response
# object), None to hold the message for the real server, or STOP to end early answers.
STOP: dict[str, Any] = {}
Responder = Callable[[dict[str, Any]], "dict[str, Any] | None"]


@dataclass
class Opening:
    """What the opening read and answered: the real server starts from `held` (every byte
    read, answered or not) and drops its own replies to `answered`'s ids."""

    held: bytes = b""
    answered: dict[Any, dict[str, Any]] = field(default_factory=dict)
    _dropped: set[Any] = field(default_factory=set)

    def drops(self, reply: Any) -> bool:
        """Whether `reply` (a parsed message the real server is about to send) was already
        sent by the opening; a first reply to an id answered early is dropped, after it is
        compared with what was sent."""
        if not isinstance(reply, dict) or "method" in reply or "id" not in reply:
            return False
        msg_id = reply["id"]
        if not _hashable(msg_id) or msg_id not in self.answered or msg_id in self._dropped:
            return False
        self._dropped.add(msg_id)
        sent = self.answered[msg_id]
        if _comparable(sent) != _comparable(reply):
            log.error(
                "the opening's early reply to request %r differs from the server's "
                "(a bug: please report it): sent %s, the server would send %s",
                msg_id,
                json.dumps(sent)[:400],
                json.dumps(reply)[:400],
            )
        return True


_taken: Opening | None = None


def taken() -> Opening | None:
    """The opening that ran in this process, once, for the face that takes over."""
    global _taken
    opening, _taken = _taken, None
    return opening


def supported(stdin_fd: int = 0) -> bool:
    """The opening needs a stdin it can poll without consuming it: a pipe or a socket on
    POSIX (a terminal is a person, a file is read by the server itself)."""
    if sys.platform == "win32":
        return False
    try:
        import stat

        mode = os.fstat(stdin_fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def run(
    prepare: Callable[[], None],
    split: Callable[[bytes], tuple[list[bytes], bytes]],
    respond: Responder,
    write: Callable[[dict[str, Any]], bytes],
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    gone: Callable[[], None] | None = None,
) -> BaseException | None:
    """Run `prepare` (the imports) in a thread; meanwhile read stdin, cut it into message
    bodies with `split` (bodies, rest), answer what `respond` answers (`write` frames a
    reply). Returns when `prepare` is done, with the opening recorded for `taken()`; the
    exception `prepare` raised, if any, is returned for the caller to raise. `gone`: called
    at once when stdin ends and every message read was the opening's to answer (the client
    went away before the server had anything to do: waiting for the imports first kept a
    dead client's daemon alive for a second or more); it is not expected to return."""
    global _taken
    opening = Opening()
    failure: list[BaseException] = []
    # The worker's end is told through a pipe, so the loop sleeps in one select on stdin
    # and that pipe (a timed poll would take the interpreter lock from the imports).
    done_r, done_w = os.pipe()

    def work() -> None:
        try:
            prepare()
        except BaseException as exc:
            failure.append(exc)
        finally:
            os.write(done_w, b"x")

    worker = threading.Thread(target=work, name="memory-recall-imports", daemon=True)
    worker.start()
    held = bytearray()
    pending = b""
    answering = True
    at_eof = False
    while True:
        watched = [done_r] if at_eof or len(held) >= MAX_HELD_BYTES else [done_r, stdin_fd]
        try:
            ready, _, _ = select.select(watched, [], [])
        except (OSError, ValueError):
            worker.join()
            break
        if done_r in ready:
            break
        try:
            chunk = os.read(stdin_fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            at_eof = True
            if gone is not None and answering and not pending:
                gone()
            continue
        held += chunk
        if not answering:
            continue
        bodies, pending = split(pending + chunk)
        for body in bodies:
            reply = _respond(respond, body)
            if reply is STOP:
                answering = False
                break
            if reply is not None:
                msg_id = reply.get("id")
                if not _hashable(msg_id) or msg_id in opening.answered:
                    answering = False  # an id seen twice: the server says what that means
                    break
                try:
                    _write_all(stdout_fd, write(reply))
                except OSError:
                    answering = False
                    break
                opening.answered[msg_id] = reply
    worker.join()
    os.close(done_r)
    os.close(done_w)
    opening.held = bytes(held)
    _taken = opening
    return failure[0] if failure else None


def _respond(respond: Responder, body: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return STOP
    if not isinstance(message, dict):
        return STOP
    try:
        return respond(message)
    except Exception:  # a responder's bug must not cost the start: the server answers
        log.debug("the opening's responder failed", exc_info=True)
        return STOP


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _comparable(message: dict[str, Any]) -> str:
    return json.dumps(message, sort_keys=True)


# -- the two framings ------------------------------------------------------------------


def split_lines(data: bytes) -> tuple[list[bytes], bytes]:
    """MCP's stdio framing: one JSON message per line."""
    *lines, rest = data.split(b"\n")
    return [line for line in lines if line.strip()], rest


def split_frames(data: bytes) -> tuple[list[bytes], bytes]:
    """LSP's framing: `Content-Length` headers, a blank line, the body. A header the
    opening does not understand yields a body that is not JSON, which ends its answers."""
    bodies: list[bytes] = []
    while True:
        end = data.find(b"\r\n\r\n")
        if end < 0:
            return bodies, data
        length = None
        for line in data[:end].split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    length = None
        if length is None or length < 0:
            return [*bodies, b"not a frame"], b""
        start = end + 4
        if len(data) < start + length:
            return bodies, data
        bodies.append(data[start : start + length])
        data = data[start + length :]


def frame_lsp(reply: dict[str, Any]) -> bytes:
    body = json.dumps(reply).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def frame_line(reply: dict[str, Any]) -> bytes:
    return json.dumps(reply, ensure_ascii=False).encode() + b"\n"
