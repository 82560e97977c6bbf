"""Settings, read in one place for every face: the user's config file, the environment,
then what the face itself was given (an editor's `initializationOptions`, command-line
flags). Later wins, key by key; everything passes the same option rules
(`options.parse_options`), so a bad value falls back to its default with a sentence
saying so, whichever face read it. docs/configuration.md lists every key.

- the file: `$MEMORY_RECALL_CONFIG`, else `config.toml` in the platform's user
  config folder (`~/.config/memory-recall/` on Linux, `~/Library/Application
  Support/memory-recall/` on macOS, `%APPDATA%\\memory-recall\\` on Windows); TOML
  with the keys of `initializationOptions` (`ranker = "bm25f"`, `[selector]`,
  `[[roots]]`, …);
- the environment: `MEMORY_RECALL_ROOTS` (`DIR[:scope]` entries separated by `;`),
  `MEMORY_RECALL_WORKSPACE`, `MEMORY_RECALL_RANKER`, `MEMORY_RECALL_MODEL_URL`,
  `MEMORY_RECALL_MODEL`, `MEMORY_RECALL_API_KEY_ENV`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_recall.protocol.messages import InitializationOptions
from memory_recall.server.core.options import parse_options
from memory_recall.server.roots import APP_DIR_NAME, parse_root_arg

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, from PyPI, on 3.10
    import tomli as tomllib

ENV_CONFIG = "MEMORY_RECALL_CONFIG"
ENV_ROOTS = "MEMORY_RECALL_ROOTS"
ENV_WORKSPACE = "MEMORY_RECALL_WORKSPACE"
ENV_RANKER = "MEMORY_RECALL_RANKER"
ENV_MODEL_URL = "MEMORY_RECALL_MODEL_URL"
ENV_MODEL = "MEMORY_RECALL_MODEL"
ENV_API_KEY_ENV = "MEMORY_RECALL_API_KEY_ENV"
CONFIG_FILE_NAME = "config.toml"
# Roots in one environment variable: `;` never appears in the paths people use, on any
# platform (`:` is the scope's separator, and part of a Windows drive).
ROOTS_SEPARATOR = ";"


def user_config_dir() -> Path:
    """The platform's per-user configuration folder for this app."""
    if sys.platform == "win32":
        base = os.environ.get("APPDATA") or "~/AppData/Roaming"
    elif sys.platform == "darwin":
        base = "~/Library/Application Support"
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or "~/.config"
    return Path(os.path.expanduser(base)) / APP_DIR_NAME


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the user's config file is (it need not exist)."""
    env = os.environ if env is None else env
    configured = env.get(ENV_CONFIG)
    if configured:
        return Path(os.path.expanduser(configured))
    return user_config_dir() / CONFIG_FILE_NAME


@dataclass
class Settings:
    """What a face serves with: validated options, the workspace, and what was wrong."""

    options: InitializationOptions
    workspace: str | None
    problems: list[str] = field(default_factory=list)
    source: Path | None = None  # the config file read, when there was one


def read_config_file(path: Path) -> tuple[dict[str, Any], str | None]:
    """The file's settings, or {} and why not (a missing file is no problem)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"{path}: cannot be read ({exc.strerror or exc}); using the defaults"
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path}: not valid TOML ({exc}); using the defaults"
    return parsed, None


def environment_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The settings the environment gives, as `initializationOptions` keys."""
    raw: dict[str, Any] = {}
    roots = [r.strip() for r in env.get(ENV_ROOTS, "").split(ROOTS_SEPARATOR) if r.strip()]
    if roots:
        raw["roots"] = [root_option(spec) for spec in roots]
    if env.get(ENV_RANKER):
        raw["ranker"] = env[ENV_RANKER]
    selector = model_settings(env.get(ENV_MODEL_URL), env.get(ENV_MODEL), env.get(ENV_API_KEY_ENV))
    if selector:
        raw["selector"] = selector
    return raw


def root_option(spec: str) -> dict[str, str]:
    """`DIR` or `DIR:scope` as a `roots` entry (`~` expanded)."""
    root = parse_root_arg(os.path.expanduser(spec))
    return {"path": str(root.path), "scope": root.scope.value}


def model_settings(
    url: str | None, model: str | None = None, api_key_env: str | None = None
) -> dict[str, Any]:
    """`selector` keys for an OpenAI-compatible endpoint (empty without a URL, except the
    model and key names, which refine a selector the file configured)."""
    selector: dict[str, Any] = {}
    if url:
        selector.update(kind="http", url=url)
    if model:
        selector["model"] = model
    if api_key_env:
        selector["apiKeyEnv"] = api_key_env
    return selector


def merged(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Later layers win, key by key; a table (`selector`, `write`, …) merges one level down,
    a list (`roots`) is replaced whole."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
                out[key] = {**out[key], **value}
            else:
                out[key] = value
    return out


def load_settings(
    given: Mapping[str, Any] | None = None,
    *,
    workspace: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """The file, then the environment, then `given` (the face's own), validated.

    `workspace`: the face's (an editor's folder, `--workspace`); else
    `$MEMORY_RECALL_WORKSPACE`; else None (the face decides, usually the current folder).
    """
    env = os.environ if env is None else env
    problems: list[str] = []
    path = config_path(env)
    from_file, problem = read_config_file(path)
    if problem:
        problems.append(problem)
    if not isinstance(from_file, dict):
        from_file = {}
    raw = merged(from_file, environment_settings(env), given or {})
    options, option_problems = parse_options(raw)
    problems += option_problems
    chosen = workspace or env.get(ENV_WORKSPACE) or None
    return Settings(
        options,
        os.path.abspath(os.path.expanduser(chosen)) if chosen else None,
        problems,
        path if from_file else None,
    )
