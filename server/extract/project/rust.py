"""Rust: Cargo.toml (package or workspace), rust-toolchain, clippy and rustfmt configs."""

from __future__ import annotations

from typing import Any

from memory_recall.server.extract.project.deps import frameworks
from memory_recall.server.extract.project.facts import CONVENTION, Component
from memory_recall.server.extract.project.files import Workspace

ECOSYSTEM = "rust"


def applies(names: set[str]) -> bool:
    return "Cargo.toml" in names


def read(ws: Workspace, directory: str, component: Component) -> None:
    prefix = "" if directory == "." else directory + "/"
    data = ws.load_toml(prefix + "Cargo.toml")
    if data is None:
        return
    component.add_manifest(prefix + "Cargo.toml")
    names = ws.names_in(directory)
    package: dict[str, Any] = data["package"] if isinstance(data.get("package"), dict) else {}
    workspace: dict[str, Any] = data["workspace"] if isinstance(data.get("workspace"), dict) else {}
    shared: dict[str, Any] = (
        workspace["package"] if isinstance(workspace.get("package"), dict) else {}
    )
    version = _plain(package.get("rust-version")) or _plain(shared.get("rust-version"))
    version = version or _toolchain(ws, prefix, names)
    edition = _plain(package.get("edition")) or _plain(shared.get("edition"))
    label = version
    if edition:
        label = f"{version}, edition {edition}" if version else f"edition {edition}"
    component.add_language("Rust", label)
    component.add_package_manager("cargo")
    members = workspace.get("members")
    if isinstance(members, list):
        component.workspace_members.extend(m for m in members if isinstance(m, str))
    deps: set[str] = set()
    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
        deps.update(_keys(data.get(table)))
    deps.update(_keys(workspace.get("dependencies")))
    for label_ in frameworks(ECOSYSTEM, deps):
        component.add_framework(label_)
    source = prefix + "Cargo.toml"
    for tool in ("clippy", "rustfmt"):
        component.add_tool(tool)
    # rustup installs clippy and rustfmt with the toolchain: every Rust project has them.
    component.offer("build", "cargo build", ECOSYSTEM, CONVENTION, source)
    component.offer("test", "cargo test", ECOSYSTEM, CONVENTION, source)
    component.offer("lint", "cargo clippy", ECOSYSTEM, CONVENTION, source)
    component.offer("format", "cargo fmt", ECOSYSTEM, CONVENTION, source)
    if package.get("name") and (ws.exists(prefix + "src/main.rs") or "bin" in data):
        component.offer("run", "cargo run", ECOSYSTEM, CONVENTION, source)


def _toolchain(ws: Workspace, prefix: str, names: set[str]) -> str | None:
    if "rust-toolchain.toml" in names:
        data = ws.load_toml(prefix + "rust-toolchain.toml") or {}
        channel = (data.get("toolchain") or {}).get("channel")
        return str(channel) if channel else None
    if "rust-toolchain" in names:
        text = (ws.read_text(prefix + "rust-toolchain") or "").strip()
        return text.split()[0] if text else None
    return None


def _plain(value: Any) -> str | None:
    """A string value; `{workspace = true}` (inherited from the workspace) is not one."""
    return str(value) if isinstance(value, (str, int, float)) else None


def _keys(table: Any) -> set[str]:
    return {str(k) for k in table} if isinstance(table, dict) else set()
