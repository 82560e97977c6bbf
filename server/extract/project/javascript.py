"""JavaScript / TypeScript: package.json, its lockfile, tsconfig, workspaces, lint configs."""

from __future__ import annotations

from typing import Any

import regex
from memory_recall.server.extract.project.classify import NAMES, classify_line, fix_of, tool_words
from memory_recall.server.extract.project.deps import frameworks
from memory_recall.server.extract.project.facts import (
    COMMAND_KINDS,
    CONVENTION,
    SCRIPT,
    Component,
)
from memory_recall.server.extract.project.files import Workspace

ECOSYSTEM = "javascript"
LOCKFILES = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lockb", "bun"),
    ("bun.lock", "bun"),
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
)
EXEC_PREFIX = {"npm": "npx ", "pnpm": "pnpm exec ", "yarn": "yarn ", "bun": "bunx "}
_NPM_PLACEHOLDER_TEST = regex.compile(r"no test specified")
_ESLINT_CONFIGS = regex.compile(r"^(?:\.eslintrc(?:\.\w+)?|eslint\.config\.[cm]?[jt]s)$")
_PRETTIER_CONFIGS = regex.compile(r"^(?:\.prettierrc(?:\.\w+)?|prettier\.config\.[cm]?js)$")


def applies(names: set[str]) -> bool:
    return "package.json" in names


def package_manager(ws: Workspace, directory: str, manifest: dict[str, Any]) -> tuple[str, str]:
    """(manager, how we know) from `packageManager`, else the nearest lockfile, else npm."""
    declared = manifest.get("packageManager")
    if isinstance(declared, str) and "@" in declared:
        name = declared.split("@", 1)[0]
        if name in EXEC_PREFIX:
            return name, "packageManager field"
    current = directory
    while True:
        names = ws.names_in(current)
        for lockfile, manager in LOCKFILES:
            if lockfile in names:
                return manager, lockfile
        if current == ".":
            return "npm", "no lockfile"
        current = current.rsplit("/", 1)[0] if "/" in current else "."


def script_command(manager: str, script: str) -> str:
    if script == "test" and manager in {"npm", "yarn", "pnpm"}:
        return f"{manager} test"
    if manager == "npm":
        return f"npm run {script}"
    if manager == "bun":
        return f"bun run {script}"  # `bun test` is bun's own runner, not the script
    return f"{manager} {script}"


def read(ws: Workspace, directory: str, component: Component) -> None:
    prefix = "" if directory == "." else directory + "/"
    manifest = ws.load_json(prefix + "package.json")
    if manifest is None:
        return
    component.add_manifest(prefix + "package.json")
    names = ws.names_in(directory)
    deps: dict[str, Any] = {}
    for table in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        value = manifest.get(table)
        if isinstance(value, dict):
            deps.update(value)
    typescript = "tsconfig.json" in names or "typescript" in deps
    if typescript:
        version = deps.get("typescript")
        component.add_language("TypeScript", _clean_version(version))
        if "tsconfig.json" in names:
            ws.load_jsonc(prefix + "tsconfig.json")  # report it when broken
            component.add_manifest(prefix + "tsconfig.json")
    else:
        component.add_language("JavaScript")
    engines = manifest.get("engines")
    node = engines.get("node") if isinstance(engines, dict) else None
    node = node or _version_file(ws, prefix, names)
    component.add_language("Node.js", node if isinstance(node, str) else None)
    manager, how = package_manager(ws, directory, manifest)
    component.add_package_manager(manager)
    # A workspace member shares its root's lockfile: installing happens there.
    member = how.endswith((".yaml", ".lock", ".lockb", ".json")) and how not in names
    for label in frameworks(ECOSYSTEM, deps):
        component.add_framework(label)
    component.workspace_members.extend(_workspaces(ws, prefix, manifest))
    scripts = manifest.get("scripts")
    scripts = scripts if isinstance(scripts, dict) else {}
    _scripts(component, manager, scripts, prefix)
    _conventions(component, manager, names, deps, manifest, typescript, prefix, member)


def _clean_version(value: Any) -> str | None:
    return value if isinstance(value, str) and value[:1] in "^~>=<0123456789" else None


def _version_file(ws: Workspace, prefix: str, names: set[str]) -> str | None:
    for name in (".nvmrc", ".node-version"):
        if name in names:
            text = (ws.read_text(prefix + name) or "").strip()
            if text:
                return text.split()[0]
    return None


def _workspaces(ws: Workspace, prefix: str, manifest: dict[str, Any]) -> list[str]:
    declared = manifest.get("workspaces")
    if isinstance(declared, dict):
        declared = declared.get("packages")
    globs = [g for g in declared or [] if isinstance(g, str)] if isinstance(declared, list) else []
    if ws.exists(prefix + "pnpm-workspace.yaml"):
        data = ws.load_yaml(prefix + "pnpm-workspace.yaml")
        if isinstance(data, dict) and isinstance(data.get("packages"), list):
            globs.extend(g for g in data["packages"] if isinstance(g, str))
    return globs


def _scripts(component: Component, manager: str, scripts: dict[str, Any], prefix: str) -> None:
    source = f"{prefix}package.json scripts"
    for kind in COMMAND_KINDS:
        for name in NAMES[kind]:
            body = scripts.get(name)
            if not isinstance(body, str) or not body.strip():
                continue
            if kind == "test" and _NPM_PLACEHOLDER_TEST.search(body):
                continue
            component.offer(kind, script_command(manager, name), ECOSYSTEM, SCRIPT, source)
            break
    if any(isinstance(scripts.get(n), str) for n in NAMES["format"]):
        return
    # No format script: a lint script that checks formatting says how to fix it.
    for name in NAMES["lint"]:
        body = scripts.get(name)
        if not isinstance(body, str):
            continue
        for found in classify_line(body):
            fixed = fix_of(found.command) if found.format_check else None
            if fixed:
                words = tool_words(fixed.split())
                bare = words and fixed.split()[0] == words[0]
                command = EXEC_PREFIX[manager] + fixed if bare else fixed
                component.offer(
                    "format", command, ECOSYSTEM, SCRIPT, f"{source} ({name}, check mode)"
                )
                return


def _conventions(
    component: Component,
    manager: str,
    names: set[str],
    deps: dict[str, Any],
    manifest: dict[str, Any],
    typescript: bool,
    prefix: str,
    member: bool,
) -> None:
    run = EXEC_PREFIX[manager]
    source = f"{prefix}package.json"

    def offer(kind: str, command: str) -> None:
        component.offer(kind, command, ECOSYSTEM, CONVENTION, source)  # type: ignore[arg-type]

    has_lockfile = any(lock in names for lock, _ in LOCKFILES)
    install = {"npm": "npm ci" if has_lockfile else "npm install", "pnpm": "pnpm install",
               "yarn": "yarn install", "bun": "bun install"}[manager]  # fmt: skip
    if not member:
        offer("install", install)
    eslint = "eslint" in deps or any(_ESLINT_CONFIGS.match(n) for n in names)
    eslint = eslint or "eslintConfig" in manifest
    prettier = "prettier" in deps or any(_PRETTIER_CONFIGS.match(n) for n in names)
    prettier = prettier or "prettier" in manifest
    biome = "biome.json" in names or "biome.jsonc" in names or "@biomejs/biome" in deps
    for tool, present in (("eslint", eslint), ("prettier", prettier), ("biome", biome)):
        if present:
            component.add_tool(tool)
    if biome:
        offer("lint", f"{run}biome check .")
        offer("format", f"{run}biome format --write .")
    if eslint:
        offer("lint", f"{run}eslint .")
    if prettier:
        offer("format", f"{run}prettier --write .")
    if typescript and "typescript" in deps:
        component.add_tool("tsc")
        offer("typecheck", f"{run}tsc --noEmit")
    if "vitest" in deps:
        offer("test", f"{run}vitest run")
    elif "jest" in deps:
        offer("test", f"{run}jest")
