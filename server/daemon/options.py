"""`initializationOptions` → the session's roots, ranker and selector (SPEC §5).

Invalid options fall back to their defaults, key by key, and every problem
is returned as a sentence the daemon shows the user once.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from memory_recall.protocol.messages import InitializationOptions, SelectorOptions
from memory_recall.server.models import Selector
from memory_recall.server.models.client import ClientSelector
from memory_recall.server.models.http import HttpSelector
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS, RankerSpec
from memory_recall.server.roots import MemoryRoot, default_roots
from pydantic import ValidationError
from pygls.uris import to_fs_path

SendRequest = Callable[[str, dict[str, Any]], tuple[str, Future[Any]]]
CancelRequest = Callable[[str], None]


def parse_options(raw: Any) -> tuple[InitializationOptions, list[str]]:
    """Valid options, falling back to the default per invalid key, and what was wrong."""
    if raw is None:
        return InitializationOptions(), []
    if not isinstance(raw, dict):
        return InitializationOptions(), [f"expected an object, got {type(raw).__name__}"]
    problems: list[str] = []
    kept: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            InitializationOptions.model_validate({key: value})
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            problems.append(f"{where}: {err['msg']}")
            continue
        kept[key] = value
    options = InitializationOptions.model_validate(kept)
    selector = options.selector
    if selector.kind == "http" and not selector.url:
        problems.append("selector.url: required for kind 'http'; using kind 'none'")
        options.selector = SelectorOptions()
    if options.roots == []:
        problems.append("roots: empty list; using the default roots")
        options.roots = None
    return options, problems


def choose_roots(options: InitializationOptions, workspace: str | None) -> list[MemoryRoot]:
    """The configured roots, else the defaults for this workspace."""
    if not options.roots:
        return default_roots(workspace)
    return [
        MemoryRoot.of(r.path, r.scope, follow_symlinks_outside=r.follow_symlinks)
        for r in options.roots
    ]


def choose_ranker(name: str | None) -> tuple[RankerSpec, str | None]:
    """The named ranker, or the default with the problem to report."""
    name = name or DEFAULT_RANKER
    if name in RANKERS:
        return RANKERS[name], None
    problem = (
        f"ranker: unknown {name!r} (known: {', '.join(sorted(RANKERS))}); using {DEFAULT_RANKER!r}"
    )
    return RANKERS[DEFAULT_RANKER], problem


def build_selector(
    options: SelectorOptions, send: SendRequest, cancel: CancelRequest
) -> Selector | None:
    """The selector the options ask for; `send`/`cancel` reach the client (kind `client`)."""
    if options.kind == "client":
        return ClientSelector(send, cancel)
    if options.kind == "http":
        assert options.url  # checked by parse_options
        return HttpSelector(options.url, options.model, options.api_key_env)
    return None


def selector_timeout_s(options: SelectorOptions) -> float | None:
    return options.timeout_ms / 1000 if options.timeout_ms else None


def workspace_path(params: types.InitializeParams) -> str | None:
    """The first workspace folder, else the root URI, else the root path."""
    if params.workspace_folders:
        return to_fs_path(params.workspace_folders[0].uri)
    if params.root_uri:
        return to_fs_path(params.root_uri)
    return params.root_path
