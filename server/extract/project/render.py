"""A `ProjectReport` as one project memory (docs/memory-files.md format, docs/writing.md keys).

The title is fixed, so running `projectInit` again finds the same memory and
updates it. Everything fits the gate's limits: the body lists the root first,
then the other components, and says how many it left out when it would not.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_recall.server.extract.project.facts import (
    COMMAND_KINDS,
    Command,
    CommandKind,
    Component,
    ProjectReport,
)

TITLE = "Project stack and commands"
CATEGORY = "project/stack"
DESCRIPTION_LIMIT = 300
BODY_LIMIT = 4_000  # the gate's default body limit (docs/writing.md)
# Kinds the one-line description names, in this order.
SUMMARY_KINDS: tuple[CommandKind, ...] = ("build", "test", "lint", "format")


@dataclass(frozen=True)
class ProjectMemory:
    """The memory `projectInit` writes: front matter fields and body."""

    title: str
    description: str
    type: str
    category: str
    body: str

    def markdown(self) -> str:
        """The file's text, front matter and body (what a writer would put on disk)."""
        return (
            f"---\nname: {self.title}\ndescription: {self.description}\n"
            f"type: {self.type}\ncategory: {self.category}\n---\n{self.body}\n"
        )


def render(report: ProjectReport) -> ProjectMemory:
    return ProjectMemory(TITLE, describe(report), "project", CATEGORY, body(report))


def _languages(component: Component) -> str:
    parts = []
    for name, version in component.languages.items():
        parts.append(f"{name} {version}" if version else name)
    return ", ".join(parts)


def _stack_line(component: Component) -> str:
    languages = ", ".join(n for n in component.languages if n not in {"Node.js", ".NET SDK"})
    managers = ", ".join(component.package_managers)
    return f"{languages} ({managers})" if managers else languages


def describe(report: ProjectReport) -> str:
    stacks = [s for s in (_stack_line(c) for c in report.components) if s]
    unique = list(dict.fromkeys(stacks))
    head = "; ".join(unique[:3]) + (f" and {len(unique) - 3} more" if len(unique) > 3 else "")
    # The root's commands; in a repository without one, the first component's, with its folder.
    first = report.component(".") or (report.components[0] if report.components else None)
    commands = first.resolved() if first else {}
    where = "" if first is None or first.path == "." else f"in {first.path}/: "
    named = [
        f"{kind} `{' / '.join(c.command for c in commands[kind])}`"
        for kind in SUMMARY_KINDS
        if kind in commands
    ]
    if named:
        named[0] = where + named[0]
    text = " — ".join(x for x in [head, ", ".join(named)] if x) or "no manifest found"
    if len(text) > DESCRIPTION_LIMIT:
        text = text[: DESCRIPTION_LIMIT - 1].rstrip() + "…"
    return text


def _command_lines(commands: dict[CommandKind, list[Command]]) -> list[str]:
    lines = []
    for kind in COMMAND_KINDS:
        for command in commands.get(kind, []):
            lines.append(f"- {kind}: `{command.command}` ({command.source})")
    return lines


def _component_section(component: Component, heading: str) -> list[str]:
    lines = [heading]
    if component.languages:
        lines.append(f"- languages: {_languages(component)}")
    if component.package_managers:
        lines.append(f"- package manager: {', '.join(component.package_managers)}")
    if component.frameworks:
        lines.append(f"- frameworks: {', '.join(component.frameworks)}")
    if component.tools:
        lines.append(f"- tools: {', '.join(component.tools)}")
    lines.extend(_command_lines(component.resolved()))
    return lines


def body(report: ProjectReport) -> str:
    intro = (
        "Read by projectInit from the workspace's manifests, task runners, CI and lint/format "
        "configs (no model). Commands run from the folder named in each heading."
    )
    blocks: list[list[str]] = []
    ordered = sorted(report.components, key=lambda c: c.path != ".")
    for component in ordered:
        where = "the workspace root" if component.path == "." else f"`{component.path}/`"
        blocks.append(_component_section(component, f"## {where}"))
    extra: list[str] = []
    if report.services:
        extra.append(f"- services (compose): {', '.join(report.services)}")
    if report.containers:
        extra.append(f"- container base images: {', '.join(report.containers)}")
    if report.ci:
        extra.append(f"- CI: {', '.join(report.ci)}")
    tail: list[str] = []
    if report.problems:
        tail.append("## Skipped files")
        tail.extend(f"- {p.path}: {p.reason}" for p in report.problems[:10])
        if len(report.problems) > 10:
            tail.append(f"- … and {len(report.problems) - 10} more")
    if report.truncated_walk:
        tail.append(
            f"The walk stopped after {report.files_seen} files; deeper folders were not read."
        )
    text = _assemble(intro, blocks, extra, tail)
    return text


def _assemble(intro: str, blocks: list[list[str]], extra: list[str], tail: list[str]) -> str:
    def join(kept: list[list[str]], dropped: list[list[str]]) -> str:
        parts = [intro]
        parts.extend("\n".join(b) for b in kept)
        if extra:
            parts.append("\n".join(["## Around the code", *extra]))
        if dropped:
            paths = ", ".join(b[0].removeprefix("## ").strip("`") for b in dropped)
            parts.append(f"Not listed for lack of space ({len(dropped)}): {paths}")
        if tail:
            parts.append("\n".join(tail))
        return "\n\n".join(parts)

    kept = list(blocks)
    dropped: list[list[str]] = []
    text = join(kept, dropped)
    while len(text) > BODY_LIMIT and len(kept) > 1:
        dropped.insert(0, kept.pop())
        text = join(kept, dropped)
    if len(text) > BODY_LIMIT:
        text = text[: BODY_LIMIT - 1].rstrip() + "…"
    return text
