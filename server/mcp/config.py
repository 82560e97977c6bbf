"""`memory-recall mcp` flags → the core's settings.

An MCP host starts the server with a command line and an environment, nothing
else. The settings are the user's config file and environment (`core/config.py`,
the same every face reads), then these flags: a flag wins over its environment
variable, which wins over the file.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any

from memory_recall.server.core.config import (
    ENV_API_KEY_ENV,
    ENV_MODEL,
    ENV_MODEL_URL,
    ENV_WORKSPACE,
    Settings,
    load_settings,
    model_settings,
)
from memory_recall.server.roots import MemoryRoot


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


def config_from(
    args: argparse.Namespace,
    roots: list[MemoryRoot] | None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Settings:
    """The settings one `memory-recall mcp` process serves with; `roots` from `--root`."""
    env = os.environ if env is None else env
    given: dict[str, Any] = {}
    if args.no_watch:
        given["watch"] = False
    if roots:
        given["roots"] = [{"path": str(r.path), "scope": r.scope.value} for r in roots]
    if args.ranker:
        given["ranker"] = args.ranker
    selector = model_settings(args.model_url, args.model, args.api_key_env)
    if args.model_timeout_ms:
        selector["timeoutMs"] = args.model_timeout_ms
    if selector:
        given["selector"] = selector
    settings = load_settings(given, workspace=args.workspace, env=env)
    if settings.workspace is None:
        settings.workspace = os.path.abspath(cwd or os.getcwd())
    return settings
