"""`memory-recall mcp` flags and environment → the daemon's `InitializationOptions`.

An MCP host starts the server with a command line and an environment, nothing
else; both say what an editor says in `initializationOptions`, under the same
rules (`daemon/options.parse_options`): the roots, the workspace, the ranker,
the model channel. A flag wins over its environment variable.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory_recall.protocol.messages import InitializationOptions
from memory_recall.server.daemon.options import parse_options
from memory_recall.server.roots import MemoryRoot

# Environment variables an MCP host's `env` block may set instead of flags.
ENV_WORKSPACE = "MEMORY_RECALL_WORKSPACE"
ENV_MODEL_URL = "MEMORY_RECALL_MODEL_URL"
ENV_MODEL = "MEMORY_RECALL_MODEL"
ENV_API_KEY_ENV = "MEMORY_RECALL_API_KEY_ENV"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `memory-recall mcp` (`--root` is the CLI's own, added by the caller)."""
    parser.add_argument(
        "--workspace", metavar="DIR", default=None,
        help=f"the project folder (default ${ENV_WORKSPACE}, else the current folder): "
        "its .memory (project) and .memory/team (team) are the default roots",
    )  # fmt: skip
    parser.add_argument(
        "--model-url", default=None, metavar="URL",
        help="an OpenAI-compatible base URL for the refined phase "
        f"(default ${ENV_MODEL_URL}; none: the lexical ranking only)",
    )  # fmt: skip
    parser.add_argument("--model", default=None, help=f"model name (default ${ENV_MODEL})")
    parser.add_argument(
        "--api-key-env", default=None, metavar="VAR",
        help=f"name of the environment variable with the API key (default ${ENV_API_KEY_ENV})",
    )  # fmt: skip
    parser.add_argument(
        "--model-timeout-ms", type=int, default=None, help="deadline per model call"
    )
    parser.add_argument("--ranker", default=None, help="bm25f (default) or spec")
    parser.add_argument(
        "--no-watch", action="store_true", help="do not watch the roots for changes"
    )
    parser.add_argument("--log-level", default="WARNING", help="stderr log level (default WARNING)")


@dataclass
class McpConfig:
    """What one `memory-recall mcp` process serves, and what was wrong with what it was given."""

    options: InitializationOptions
    workspace: str
    problems: list[str] = field(default_factory=list)


def config_from(
    args: argparse.Namespace,
    roots: list[MemoryRoot] | None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> McpConfig:
    """Flags (then environment variables) as the daemon's options; `roots` from `--root`."""
    env = os.environ if env is None else env
    workspace = os.path.abspath(args.workspace or env.get(ENV_WORKSPACE) or cwd or os.getcwd())
    raw: dict[str, Any] = {"watch": not args.no_watch}
    if roots:
        raw["roots"] = [{"path": str(r.path), "scope": r.scope.value} for r in roots]
    if args.ranker:
        raw["ranker"] = args.ranker
    url = args.model_url or env.get(ENV_MODEL_URL)
    if url:
        selector: dict[str, Any] = {"kind": "http", "url": url}
        model = args.model or env.get(ENV_MODEL)
        key_env = args.api_key_env or env.get(ENV_API_KEY_ENV)
        if model:
            selector["model"] = model
        if key_env:
            selector["apiKeyEnv"] = key_env
        if args.model_timeout_ms:
            selector["timeoutMs"] = args.model_timeout_ms
        raw["selector"] = selector
    options, problems = parse_options(raw)
    return McpConfig(options, workspace, problems)
