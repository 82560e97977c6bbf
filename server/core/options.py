"""Options → the core's roots, ranker, selector, model and semantic channel.

Every face hands its settings over as `InitializationOptions` (the LSP face from
`initialize`, the others from the user's config file, the environment and their
flags: `server/core/config.py`), and they pass these rules once.

Invalid options fall back to their defaults, key by key, and every problem
is returned as a sentence the daemon shows the user once.

Trust model: `initializationOptions` are the user's own configuration, passed
by the editor; the daemon trusts them as it trusts its command line. They can
name any environment variable as the API key and any URL as the selector, so
a host must not fill `selector` from settings a workspace controls (the VS
Code extension reads them from user and machine settings only). Two mistakes
are refused here whoever made them: a plain `http://` URL to another machine
(the manifest, the query and the key would cross the network unencrypted;
`selector.allowPlainHttp: true` allows it), and an `apiKeyEnv` that is not a
variable name (most likely the key itself, which is then never echoed).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

from memory_recall.protocol.messages import (
    EmbeddingsOptions,
    InitializationOptions,
    SelectorOptions,
)
from memory_recall.server.models import HostModel, Selector
from memory_recall.server.models.client import ClientSelector
from memory_recall.server.models.complete import ClientCompleter, Completer, HttpCompleter
from memory_recall.server.models.http import HttpSelector
from memory_recall.server.ranking.registry import (
    DEFAULT_RANKER,
    RANKERS,
    RankerSpec,
    accepted_names,
    ranker_named,
)
from memory_recall.server.roots import MemoryRoot, default_roots
from memory_recall.server.store.outbound import guarded_completer, guarded_selector
from pydantic import ValidationError

# Selector kind `client` asks the host's model over the face's own connection; a face
# without one (MCP, the command line, the hooks) cannot offer it.
CLIENT_KIND_PROBLEM = (
    "selector.kind 'client' needs a host that answers memory/select (an editor); "
    "use selector.kind 'http' with an OpenAI-compatible endpoint, or 'none'"
)


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
    elif selector.kind == "http" and selector.url:
        problem = url_problem(selector.url, allow_plain_http=selector.allow_plain_http)
        if problem:
            problems.append(f"selector.url: {problem}; using kind 'none'")
            options.selector = SelectorOptions()
    if options.selector.api_key_env is not None and not is_variable_name(
        options.selector.api_key_env
    ):
        problems.append(API_KEY_ENV_PROBLEM)
    embeddings = options.embeddings
    if embeddings is not None:
        problem = url_problem(embeddings.url, allow_plain_http=embeddings.allow_plain_http)
        if problem:
            problems.append(f"embeddings.url: {problem}; semantic recall is off")
            options.embeddings = None
        elif embeddings.api_key_env is not None and not is_variable_name(embeddings.api_key_env):
            problems.append(
                "embeddings.apiKeyEnv: does not look like an environment variable name (it "
                "must name the variable that holds the key); semantic recall is off"
            )
            options.embeddings = None
    if options.roots == []:
        problems.append("roots: empty list; using the default roots")
        options.roots = None
    return options, problems


# What an environment variable name looks like on every platform we run on.
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
API_KEY_ENV_PROBLEM = (
    "selector.apiKeyEnv: does not look like an environment variable name (it must name "
    "the variable that holds the key, not be the key); the selector sends no key"
)


def is_variable_name(value: str) -> bool:
    return _VARIABLE_NAME.fullmatch(value) is not None


def url_problem(url: str, *, allow_plain_http: bool) -> str | None:
    """Why the daemon will not send a selection to `url`, or None."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("http", "https") or not host:
        return "expected an http:// or https:// URL with a host"
    if parts.scheme == "http" and not allow_plain_http and not is_loopback(host):
        return (
            f"plain http to {host} would send the query, the memory manifest and the API key "
            "unencrypted; use https, a loopback address, or set selector.allowPlainHttp"
        )
    return None


def is_loopback(host: str) -> bool:
    """This machine: `localhost`, 127.0.0.0/8, ::1."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def choose_roots(options: InitializationOptions, workspace: str | None) -> list[MemoryRoot]:
    """The configured roots, else the defaults for this workspace."""
    if not options.roots:
        return default_roots(workspace)
    return [
        MemoryRoot.of(
            r.path, r.scope, follow_symlinks_outside=r.follow_symlinks, read_only=r.read_only
        )
        for r in options.roots
    ]


def choose_ranker(name: str | None) -> tuple[RankerSpec, str | None]:
    """The named ranker (an old name is an alias), or the default with the problem to report."""
    spec = ranker_named(name or DEFAULT_RANKER)
    if spec is not None and spec.served:
        return spec, None
    known = ", ".join(accepted_names(served_only=True))
    problem = f"ranker: unknown {name!r} (known: {known}); using {DEFAULT_RANKER!r}"
    return RANKERS[DEFAULT_RANKER], problem


def build_selector(options: SelectorOptions, host: HostModel | None) -> Selector | None:
    """The selector the options ask for; `host` reaches the host's model (kind `client`).
    Kind `client` without a host is refused earlier (`host_problem`). Every selector is
    guarded: what it sends a model is redacted (store/outbound.py)."""
    if options.kind == "client":
        return (
            guarded_selector(ClientSelector(host.send, host.cancel)) if host is not None else None
        )
    if options.kind == "http":
        assert options.url  # checked by parse_options
        return guarded_selector(HttpSelector(options.url, options.model, options.api_key_env))
    return None


def build_completer(options: InitializationOptions, host: HostModel | None) -> Completer | None:
    """The model for extraction tasks (docs/extraction.md), or None: the same endpoint as the
    selector.

    Kind `client` uses the host's model only when it advertised
    `capabilities.complete`; kind `http` sends the same messages to its endpoint.
    """
    selector = options.selector
    if selector.kind == "client" and options.capabilities.complete and host is not None:
        return guarded_completer(ClientCompleter(host.send, host.cancel))
    if selector.kind == "http" and selector.url:
        return guarded_completer(HttpCompleter(selector.url, selector.model, selector.api_key_env))
    return None


def host_problem(options: InitializationOptions, host: HostModel | None) -> str | None:
    """Kind `client` asked of a face that has no host model: refused, using `none`."""
    if options.selector.kind == "client" and host is None:
        options.selector = SelectorOptions()
        return CLIENT_KIND_PROBLEM + "; using none"
    return None


def completer_problem(options: InitializationOptions) -> str | None:
    """A host that offers `memory/complete` but chose a selector that will not use it."""
    if options.capabilities.complete and options.selector.kind == "none":
        return (
            "capabilities.complete: used with selector.kind 'client'; with 'none' the daemon "
            "has no model for extraction"
        )
    return None


def build_semantic(options: EmbeddingsOptions, store: Any) -> tuple[Any, str | None]:
    """The semantic channel (`server.semantic`, imported only here and only when the
    options ask for it), or None and why not."""
    try:
        import numpy  # noqa: F401  (the vector scan's one library)
    except ImportError:
        return None, (
            "embeddings: numpy is not installed (pip install 'memory-recall[semantic]'); "
            "semantic recall is off"
        )
    from memory_recall.server.semantic.channel import open_channel

    timeout_s = options.timeout_ms / 1000 if options.timeout_ms else None
    return open_channel(options.url, options.model, options.api_key_env, timeout_s, store), None


def selector_timeout_s(options: SelectorOptions) -> float | None:
    return options.timeout_ms / 1000 if options.timeout_ms else None
