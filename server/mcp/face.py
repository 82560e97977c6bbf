"""`memory-recall mcp`: the memory daemon as an MCP server over stdio (the official `mcp` SDK).

Tools and resources are thin, like the daemon's handlers: validate with the
protocol's models, call the core's services (`core.py`: the daemon's own
session, recall service, writer and organiser), turn the result into plain
JSON. A refusal (a gate rule, an unknown memory, bad arguments) is a tool
error whose text says what to do; it never echoes a secret.

Memories are named by URI, `memory://memories/{scope}/{relative path}`, the
same string in recall results, the resource template and `forget`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import uuid
from typing import Any, Literal
from urllib.parse import quote, unquote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from memory_recall.protocol.limits import MAX_QUERY_CHARS, REFINED_LIMIT, SEARCH_DEFAULT_LIMIT
from memory_recall.protocol.messages import (
    ContextParams,
    PhaseNotification,
    PhaseResult,
    RecallParams,
    RecallTelemetry,
    RememberParams,
)
from memory_recall.server.daemon.organising import context_wire, tree_wire
from memory_recall.server.daemon.writing import result_wire
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.mcp.core import MemoryCore
from memory_recall.server.prompt import HEADING, NOTICE
from memory_recall.server.recall import RecallRequest
from memory_recall.server.search import (
    SearchError,
    SearchHit,
    SearchOutcome,
    SearchRequest,
    SearchSubtree,
    render_search,
)
from memory_recall.server.store.errors import InvalidWrite, WriteError
from memory_recall.server.store.writer import ForgetRequest, RememberRequest
from pydantic import BaseModel, ValidationError

log = logging.getLogger("memory_recall")

SERVER_NAME = "memory-recall"
URI_PREFIX = "memory://memories/"
TREE_URI = "memory://tree"

INSTRUCTIONS = (
    "Long-term memory for this project and this user. Call recall_memory with the user's "
    "request at the start of a task to get what was learned before; search_memory to look "
    "further (shallow, deep, explore the topic tree, get one memory); remember what the user "
    "asks you to remember; memory_context gives the standing rules to keep in mind."
)


def memory_uri(scope: str, relative_path: str) -> str:
    return URI_PREFIX + scope + "/" + quote(relative_path, safe="/")


def uri_of(doc: MemoryDocument) -> str:
    return memory_uri(doc.scope.wire, doc.relative_path)


def _checked(model: type[BaseModel], params: dict[str, Any]) -> Any:
    """Arguments as the protocol's model, or a tool error naming each bad field."""
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        ]
        raise ToolError("invalid arguments: " + "; ".join(problems)) from None


class _Collector:
    """A recall's listener: keeps the phases and counts what is delivered."""

    def __init__(self, core: MemoryCore) -> None:
        self._core = core

    def fast_result(self, note: PhaseNotification) -> None:
        self._count(note)

    def refined_result(self, note: PhaseNotification) -> None:
        self._count(note)

    def _count(self, note: PhaseNotification) -> None:
        for doc in note.docs:
            self._core.write.count_delivery(doc.path, doc.relative_path)

    def telemetry(self, event: RecallTelemetry) -> None:
        return None


def _phase_docs(phase: PhaseResult | None) -> list[dict[str, Any]]:
    if phase is None:
        return []
    out = []
    for doc in phase.docs:
        wire = doc.wire()
        wire["phase"] = phase.phase
        wire["uri"] = memory_uri(doc.scope, doc.relative_path)
        out.append(wire)
    return out


def recall_answer(
    core: MemoryCore, fast: PhaseResult | None, refined: PhaseResult
) -> dict[str, Any]:
    """One answer from both phases: the fast documents, then the refined ones (which never
    repeat them), one prompt block, and in words how the second half was chosen."""
    if refined.strategy == "model":
        how = f"refined by the model ({core.model})"
    elif core.model is None:
        how = (
            "no model configured (--model-url): the lexical ranking's top "
            f"{REFINED_LIMIT}, without a refined phase"
        )
    elif refined.failure:
        how = (
            f"the model's answer was not used ({refined.failure}): the lexical top {REFINED_LIMIT}"
        )
    else:
        how = "nothing to refine"
    prompts = [p.prompt for p in (fast, refined) if p is not None and p.prompt]
    prompt = prompts[0] + "".join(
        "\n" + p.removeprefix(f"{HEADING}\n\n{NOTICE}\n\n") for p in prompts[1:]
    ) if prompts else ""  # fmt: skip
    return {
        "status": refined.status if not (fast and fast.docs) else "delivered",
        "refined": how,
        "prompt": prompt,
        "memories": _phase_docs(fast) + _phase_docs(refined),
    }


def build_server(core: MemoryCore) -> MCPServer[Any]:
    """The MCP server: its tools and resources over `core`."""
    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)

    async def view_documents() -> tuple[MemoryDocument, ...]:
        return (await core.session.view()).documents

    async def resolve(memory: str) -> MemoryDocument:
        """A memory by its URI (or its absolute path), or a tool error that says what ids are."""
        await core.session.ready.wait()
        doc = find_memory(core, memory)
        if doc is None:
            raise ToolError(
                f"no memory {memory!r}: name one by the `uri` a recall_memory result gives "
                f"({URI_PREFIX}<scope>/<path>) or by its absolute path"
            )
        return doc

    async def write(kind: str, request: object, *, team: bool = False, title: str = "") -> Any:
        await core.session.ready.wait()  # decisions are made on the warm catalog
        # An agent's writes: force, always and team ones wait for the user's confirmation
        # (store/proposals.py); the rest are written at once.
        try:
            if kind == "remember":
                result = await core.write.remember_from_agent(request, "mcp")  # type: ignore[arg-type]
            elif kind == "forget":
                result = await core.write.forget_from_agent(
                    request,  # type: ignore[arg-type]
                    "mcp",
                    team=team,
                    title=title,
                )
            else:
                result = await core.write.writer.run_async(kind, request)
        except InvalidWrite as exc:
            raise ToolError(f"invalid arguments: {exc.field}: {exc.message}") from None
        except WriteError as exc:
            raise ToolError(f"not written: {exc}") from None
        answer: dict[str, Any] = result_wire(result).wire()
        if not result.operations:
            reasons = "; ".join(f"{s.reason}: {s.message}" for s in result.skipped)
            raise ToolError(f"refused, nothing written ({reasons or 'no change'})")
        for op in answer["operations"]:
            located = core.session.catalog.locate(op["path"])
            if located is not None:
                relative = located[2].relative_to(located[1].path).as_posix()
                op["uri"] = memory_uri(op["scope"], relative)
        return answer

    @server.tool()
    async def recall_memory(
        query: str, recent_tools: list[str] | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """What this project and this user remember that is relevant to `query` (the user's
        request, in any language). Returns a ready-to-use `prompt` block and the memories,
        each with its `uri`. `recent_tools`: names of tools used lately (their usage notes
        are left out). With a model configured the lexical result is refined by it."""
        params = _checked(
            RecallParams, {"query": query, "recentTools": recent_tools or [], "limit": limit}
        )
        request = RecallRequest(
            request_id=f"mcp-{uuid.uuid4()}",
            query=params.query,
            recent_tools=params.recent_tools,
            limit=params.limit or REFINED_LIMIT,
        )
        result = await core.recall.recall(request, core.session.view, _Collector(core))
        assert result.refined is not None  # every recall that is not cancelled ends with one
        return recall_answer(core, result.fast, result.refined)

    @server.tool()
    async def search_memory(
        query: str = "",
        mode: Literal["shallow", "deep", "explore", "get"] = "shallow",
        memory: str | None = None,
        category: str | None = None,
        scope: Literal["project", "team", "user"] | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """Look through the memories yourself. `shallow`: `query` against titles and
        descriptions (a cheap list); `deep`: against whole bodies, with the matching passage
        and memories linked to the hits; `explore`: a topic-tree subtree (`category` such as
        `lessons` or `lessons/errors`, or the subtree of `memory`, or of the query's best
        hit); `get`: one `memory` (its uri) whole. `scope` keeps one scope's memories."""
        if len(query) > MAX_QUERY_CHARS:
            raise ToolError(f"invalid arguments: query: longer than {MAX_QUERY_CHARS} characters")
        path = None
        if memory is not None:
            path = (await resolve(memory)).path
        request = SearchRequest(
            mode=mode, query=query, path=path, category=category, scope=scope,
            limit=limit or SEARCH_DEFAULT_LIMIT,
        )  # fmt: skip
        view = await core.session.view()

        def search() -> SearchOutcome:
            network = core.network.network(view) if mode in ("deep", "explore") else None
            stale = core.organise.staleness.for_recall()
            return core.search.search(view, request, network=network, stale_check=stale)

        try:
            outcome = await asyncio.to_thread(search)
        except SearchError as exc:
            raise ToolError(str(exc)) from None
        return search_answer(outcome)

    @server.tool()
    async def remember(
        text: str,
        scope: str | None = None,
        type: str | None = None,
        title: str | None = None,
        description: str | None = None,
        pinned: bool = False,
        always: bool = False,
        force: bool = False,
    ) -> dict[str, Any]:
        """Save what the user asked to remember. `scope`: project (default), user (about the
        user, across projects) or team (shared through git; only when the user says so).
        `type`: user, feedback, project or reference (derived when omitted). `always`: load
        it into every session (memory_context). Credentials are always refused; text that
        reads as instructions to the agent needs `force`. A write with `force`, `always` or
        scope team is not written by you: it becomes a proposal the user confirms
        (`memory-recall proposals`), answered with action `proposed`."""
        params = _checked(
            RememberParams,
            {"text": text, "scope": scope, "type": type, "title": title,
             "description": description, "pinned": pinned, "always": always, "force": force},
        )  # fmt: skip
        request = RememberRequest(
            text=params.text, scope=params.scope, type=params.type, title=params.title,
            description=params.description, pinned=params.pinned, always=params.always,
            force=params.force, category=params.category,
        )  # fmt: skip
        return await write("remember", request)

    @server.tool()
    async def forget(memory: str, reason: str | None = None, hard: bool = False) -> dict[str, Any]:
        """Forget one memory, named by its `uri` from a recall_memory result: it moves to its
        root's archive (restorable; `memory-recall undo` reverses it). `hard`: delete it."""
        doc = await resolve(memory)
        request = ForgetRequest(path=doc.path, reason=reason, hard=hard)
        team = doc.scope.wire == "team"  # the team's memories: the user confirms
        return await write("forget", request, team=team, title=doc.title)

    @server.tool()
    async def memory_context(budget_chars: int | None = None) -> dict[str, Any]:
        """The always-loaded memories (standing rules, communication style) as one prompt
        block within `budget_chars` (default 4,000); what did not fit is listed."""
        params = _checked(ContextParams, {"budgetChars": budget_chars})
        docs = await view_documents()
        return context_wire(core.organise.organiser.context(docs, params.budget_chars))

    @server.resource(TREE_URI, name="topic-tree", mime_type="application/json")
    async def topic_tree() -> dict[str, Any]:
        """The topic tree: categories and subcategories with counts and member memories."""
        docs = await view_documents()
        tree = await asyncio.to_thread(core.organise.organiser.tree, docs, None)
        answer = tree_wire(tree, docs, core.organise.organiser)
        _add_uris(answer["categories"])
        return answer

    @server.resource(URI_PREFIX + "{scope}/{+path}", name="memory", mime_type="text/markdown")
    async def memory_file(scope: str, path: str) -> str:
        """One memory file as it is on disk (front matter and body)."""
        await core.session.ready.wait()
        doc = find_memory(core, memory_uri(scope, path))
        if doc is None:
            raise ResourceNotFoundError(f"no {scope} memory {path!r}")
        try:
            return await asyncio.to_thread(_read_text, doc.path)
        except OSError as exc:
            raise ResourceNotFoundError(f"{scope} memory {path!r} cannot be read: {exc}") from None

    return server


def search_answer(outcome: SearchOutcome) -> dict[str, Any]:
    """A search's outcome as plain JSON, with the markdown an agent reads."""
    return {
        "mode": outcome.mode,
        "total": outcome.total,
        "prompt": render_search(outcome),
        "memories": [_hit(h) for h in outcome.hits],
        "subtree": _subtree(outcome.subtree) if outcome.subtree is not None else None,
    }


def _hit(hit: SearchHit) -> dict[str, Any]:
    doc = hit.doc
    return {
        "uri": uri_of(doc), "path": doc.path, "relativePath": doc.relative_path,
        "scope": doc.scope.wire, "type": doc.type, "title": doc.title,
        "description": doc.description, "category": hit.category, "source": hit.source,
        "score": hit.score, "body": hit.body, "truncated": hit.truncated, "stale": hit.stale,
        "reached": hit.reached.describe() if hit.reached is not None else None,
    }  # fmt: skip


def _subtree(tree: SearchSubtree) -> dict[str, Any]:
    return {
        "slug": tree.slug,
        "label": tree.label,
        "count": tree.count,
        "children": [_subtree(c) for c in tree.children],
    }


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _add_uris(nodes: list[dict[str, Any]]) -> None:
    for node in nodes:
        for member in node.get("members", []):
            member["uri"] = memory_uri(member["scope"], member["relativePath"])
        _add_uris(node.get("children", []))


def find_memory(core: MemoryCore, memory: str) -> MemoryDocument | None:
    """The memory a URI (or an absolute path) names, among the served documents."""
    catalog = core.session.catalog
    if not memory.startswith(URI_PREFIX):
        return catalog.get(memory)
    scope, _, relative = unquote(memory[len(URI_PREFIX) :]).partition("/")
    for root in core.roots:
        if root.scope.wire == scope and relative:
            doc = catalog.get(str(root.path / relative))
            if doc is not None and doc.scope.wire == scope:
                return doc
    return None


TTY_HINT = (
    "memory-recall mcp: this is an MCP server; it speaks JSON-RPC lines on stdin/stdout for "
    "MCP hosts (see `memory-recall mcp --help` and the README's MCP section). Ctrl-D ends it."
)


def run(core: MemoryCore, log_level: str = "WARNING") -> int:
    """Serve MCP on stdin/stdout until the host closes stdin."""
    logging.basicConfig(
        stream=sys.stderr, level=log_level, format="memory-recall %(levelname)s %(message)s"
    )
    for name in ("httpx", "watchfiles", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)
    if sys.stdin.isatty():  # started by hand: say what this is instead of waiting silently
        print(TTY_HINT, file=sys.stderr, flush=True)
    server = build_server(core)

    async def main() -> None:
        core.start()
        try:
            await server.run_stdio_async()
        finally:
            core.stop()

    # Not asyncio.run: on the way out it joins the default executor, where the index
    # build of a large tree may still run; a host that went away must not wait for it.
    asyncio.new_event_loop().run_until_complete(main())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
