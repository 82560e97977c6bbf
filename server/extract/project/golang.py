"""Go: go.mod, go.work, golangci-lint configs."""

from __future__ import annotations

import regex
from memory_recall.server.extract.project.deps import frameworks
from memory_recall.server.extract.project.facts import CONVENTION, Component
from memory_recall.server.extract.project.files import Workspace

ECOSYSTEM = "go"
_GO = regex.compile(r"^go\s+(\d+(?:\.\d+)*)\s*$", regex.M)
_REQUIRE_BLOCK = regex.compile(r"^require\s*\((.*?)^\)", regex.M | regex.S)
_REQUIRE_LINE = regex.compile(r"^require\s+(\S+)\s", regex.M)
_MODULE = regex.compile(r"^module\s+(\S+)", regex.M)
_USE = regex.compile(r"^use\s+(?:\((.*?)^\)|(\S+))", regex.M | regex.S)
GOLANGCI_CONFIGS = (".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json")


def applies(names: set[str]) -> bool:
    return "go.mod" in names or "go.work" in names


def read(ws: Workspace, directory: str, component: Component) -> None:
    prefix = "" if directory == "." else directory + "/"
    names = ws.names_in(directory)
    if "go.work" in names:
        work = ws.read_text(prefix + "go.work") or ""
        component.add_manifest(prefix + "go.work")
        for block, single in _USE.findall(work):
            for member in block.split() if block else [single]:
                component.workspace_members.append(member.removeprefix("./"))
    if "go.mod" not in names:
        component.add_language("Go", _version(ws.read_text(prefix + "go.work") or ""))
        return
    text = ws.read_text(prefix + "go.mod")
    if text is None:
        return
    if not _MODULE.search(text):
        ws.report(prefix + "go.mod", "malformed go.mod: no module line")
        return
    component.add_manifest(prefix + "go.mod")
    component.add_language("Go", _version(text))
    component.add_package_manager("go modules")
    required = set(_REQUIRE_LINE.findall(text))
    for block in _REQUIRE_BLOCK.findall(text):
        for line in block.splitlines():
            parts = line.split("//", 1)[0].split()
            if parts:
                required.add(parts[0])
    for label in frameworks(ECOSYSTEM, required):
        component.add_framework(label)
    source = prefix + "go.mod"
    component.offer("install", "go mod download", ECOSYSTEM, CONVENTION, source)
    component.offer("build", "go build ./...", ECOSYSTEM, CONVENTION, source)
    component.offer("test", "go test ./...", ECOSYSTEM, CONVENTION, source)
    config = next((c for c in GOLANGCI_CONFIGS if c in names or ws.exists(c)), None)
    if config:
        component.add_tool("golangci-lint")
        component.offer("lint", "golangci-lint run", ECOSYSTEM, CONVENTION, config)
    else:
        component.add_tool("go vet")
        component.offer("lint", "go vet ./...", ECOSYSTEM, CONVENTION, source)
    component.add_tool("gofmt")
    component.offer("format", "gofmt -w .", ECOSYSTEM, CONVENTION, source)


def _version(text: str) -> str | None:
    match = _GO.search(text)
    return match.group(1) if match else None
