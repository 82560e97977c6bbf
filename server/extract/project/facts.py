"""What a workspace's files say about a project: components, their stack and commands.

A reader adds facts to the `Component` of the folder its file lives in; the
resolution of competing commands (`Component.resolved`) is one rule, here:

- a task runner the project wrote at that folder (Makefile, justfile,
  Taskfile) answers for every ecosystem: its target is the only command of
  that kind;
- otherwise one command per ecosystem, the most authoritative source first:
  a script the project named (package.json, composer.json, tox, nox,
  pre-commit) > the exact line its CI runs > the ecosystem's convention for
  the tools its configs declare.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CommandKind = Literal["install", "build", "test", "lint", "format", "typecheck", "run"]
COMMAND_KINDS: tuple[CommandKind, ...] = (
    "install",
    "build",
    "test",
    "lint",
    "format",
    "typecheck",
    "run",
)

# Who said it, most authoritative first. A task-runner target is the project's
# own entry point (it usually wraps the tools); a named script comes next; CI
# shows the exact flags the project runs with; a convention is our inference
# from the tools a config declares.
TASK_RUNNER = 40
SCRIPT = 30
CI = 20
CONVENTION = 10

# The ecosystem a task runner's targets belong to: all of them.
ANY_ECOSYSTEM = "*"


@dataclass(frozen=True)
class Command:
    """One way to do `kind` in a component, and who said so."""

    kind: CommandKind
    command: str
    ecosystem: str  # python, javascript, rust, go, jvm, dotnet, ruby, php, or ANY_ECOSYSTEM
    authority: int
    source: str  # e.g. "Makefile target `test`", ".github/workflows/ci.yml", "pyproject.toml"


@dataclass
class Component:
    """One folder of the workspace that holds at least one manifest."""

    path: str  # relative to the workspace, "." for its root
    languages: dict[str, str | None] = field(default_factory=dict)  # name → version requirement
    frameworks: list[str] = field(default_factory=list)
    package_managers: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)  # linters, formatters, type checkers
    manifests: list[str] = field(default_factory=list)  # files read, relative to the workspace
    candidates: list[Command] = field(default_factory=list)
    workspace_members: list[str] = field(default_factory=list)  # declared monorepo members
    ecosystems: list[str] = field(default_factory=list)  # the readers that found a manifest

    def add_language(self, name: str, version: str | None = None) -> None:
        if version or name not in self.languages:
            self.languages[name] = version or self.languages.get(name)

    def add_framework(self, name: str) -> None:
        if name not in self.frameworks:
            self.frameworks.append(name)

    def add_package_manager(self, name: str) -> None:
        if name not in self.package_managers:
            self.package_managers.append(name)

    def add_tool(self, name: str) -> None:
        if name not in self.tools:
            self.tools.append(name)

    def add_manifest(self, relative: str) -> None:
        if relative not in self.manifests:
            self.manifests.append(relative)

    def offer(
        self, kind: CommandKind, command: str, ecosystem: str, authority: int, source: str
    ) -> None:
        """A candidate command; `resolved()` decides which candidates stand."""
        command = " ".join(command.split())
        if command:
            self.candidates.append(Command(kind, command, ecosystem, authority, source))

    def has_candidate(self, kind: CommandKind, ecosystem: str) -> bool:
        return any(c.kind == kind and c.ecosystem == ecosystem for c in self.candidates)

    def resolved(self) -> dict[CommandKind, list[Command]]:
        """One command per kind and ecosystem, or the task runner's alone (module docstring)."""
        result: dict[CommandKind, list[Command]] = {}
        for kind in COMMAND_KINDS:
            offered = [c for c in self.candidates if c.kind == kind]
            if not offered:
                continue
            runner = [c for c in offered if c.ecosystem == ANY_ECOSYSTEM]
            if runner:
                result[kind] = [max(runner, key=lambda c: c.authority)]
                continue
            best: dict[str, Command] = {}
            for candidate in offered:  # first offered wins a tie: readers offer best first
                held = best.get(candidate.ecosystem)
                if held is None or candidate.authority > held.authority:
                    best[candidate.ecosystem] = candidate
            result[kind] = list(best.values())
        return result

    @property
    def is_empty(self) -> bool:
        return not (self.languages or self.candidates or self.package_managers)


@dataclass(frozen=True)
class Problem:
    """A file that could not be read as what its name says; skipped, never fatal."""

    path: str
    reason: str


@dataclass
class ProjectReport:
    """Everything `projectInit` read from one workspace."""

    workspace: str
    components: list[Component]
    services: list[str] = field(default_factory=list)  # from compose files: "postgres 16"
    containers: list[str] = field(default_factory=list)  # Dockerfile base images
    ci: list[str] = field(default_factory=list)  # CI files read
    problems: list[Problem] = field(default_factory=list)
    files_seen: int = 0
    truncated_walk: bool = False  # the walk stopped at its bound
    elapsed_ms: float = 0.0

    def component(self, path: str) -> Component | None:
        return next((c for c in self.components if c.path == path), None)
