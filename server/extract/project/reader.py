"""`read_project(workspace)`: every reader over every folder, then CI and containers."""

from __future__ import annotations

import fnmatch
import time
from pathlib import Path
from types import ModuleType

from memory_recall.server.extract.project import (
    ci,
    containers,
    dotnet,
    golang,
    javascript,
    jvm,
    php,
    python,
    ruby,
    rust,
    tasks,
)
from memory_recall.server.extract.project.facts import Component, ProjectReport
from memory_recall.server.extract.project.files import MAX_DEPTH, MAX_ENTRIES, Workspace

READERS: tuple[ModuleType, ...] = (python, javascript, rust, golang, jvm, dotnet, ruby, php)
# Ecosystems whose workspace root builds and tests every member: members fold into it.
FOLDING = frozenset({rust.ECOSYSTEM, jvm.ECOSYSTEM, dotnet.ECOSYSTEM})


def read_project(
    workspace: str | Path, *, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES
) -> ProjectReport:
    """What the workspace's manifests, task runners, CI and configs say (never raises on a file)."""
    started = time.perf_counter()
    ws = Workspace.walk(workspace, max_depth=max_depth, max_entries=max_entries)
    components: list[Component] = []
    for directory in ws.dirs():
        names = ws.names_in(directory)
        component = Component(directory)
        for reader in READERS:
            if reader.applies(names):
                before = len(component.manifests)
                reader.read(ws, directory, component)
                if len(component.manifests) > before:
                    component.ecosystems.append(reader.ECOSYSTEM)
        tasks.read(ws, directory, component)
        if not component.is_empty:
            components.append(component)
    components = [c for c in _fold_members(components) if not _set_aside(c.path)]
    report = ProjectReport(
        workspace=str(workspace), components=components, files_seen=len(ws.files)
    )
    ci.read(ws, report)
    containers.read(ws, report, report.component("."))
    report.problems = list(ws.problems)
    report.truncated_walk = ws.truncated
    report.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
    return report


def _fold_members(components: list[Component]) -> list[Component]:
    """Members of a Cargo workspace, Maven/Gradle build or .NET solution join their root."""
    kept: list[Component] = []
    for component in components:  # parents come first (dirs() is by depth)
        owner = next((k for k in reversed(kept) if _owns(k, component)), None)
        if owner is None:
            kept.append(component)
            continue
        for name, version in component.languages.items():
            owner.add_language(name, version)
        for framework in component.frameworks:
            owner.add_framework(framework)
        for tool in component.tools:
            owner.add_tool(tool)
        for manifest in component.manifests:
            owner.add_manifest(manifest)
        # A member's own task runner still answers for its folder.
        runner = [c for c in component.candidates if c.ecosystem == "*"]
        if runner:
            kept.append(Component(component.path, candidates=runner))
    return kept


# Folders of tests and docs. A folder right inside one may be a project of its own (.NET's
# test/App.Tests, an e2e package, a docs site); a manifest deeper (axios's
# test/module/esm/package.json, black's tests/data/…/pyproject.toml and
# docs/compatible_configs/flake8/tox.ini) is something they build, read or show, not a
# component — unless a workspace, build or solution above claims it (folded into its
# owner first).
ASIDE_DIRS = frozenset({"test", "tests", "__tests__", "docs", "doc"})


def _set_aside(path: str) -> bool:
    return any(part in ASIDE_DIRS for part in path.split("/")[:-2])


def _owns(owner: Component, member: Component) -> bool:
    if not member.ecosystems or not set(member.ecosystems) <= FOLDING:
        return False
    if not set(member.ecosystems) <= set(owner.ecosystems):
        return False
    prefix = "" if owner.path == "." else owner.path + "/"
    if not member.path.startswith(prefix):
        return False
    relative = member.path[len(prefix) :]
    if dotnet.ECOSYSTEM in member.ecosystems and any(
        m.endswith((".sln", ".slnx")) for m in owner.manifests
    ):
        return True
    return any(fnmatch.fnmatch(relative, glob.rstrip("/")) for glob in owner.workspace_members)
