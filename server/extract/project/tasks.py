"""Task runners the project wrote: Makefile, justfile, Taskfile.yml, a folder of
scripts (`scripts/test`, `script/bootstrap`); and pre-commit.

A target or script whose name says its kind (`test`, `lint`, `fmt`, …; see
classify.NAMES) is the project's own entry point for every ecosystem in its
folder. A lint target whose recipe runs a formatter in check mode also tells
how to format when no format target exists (`ruff format --check x` → `ruff
format x`), with the recipe's variables expanded.
"""

from __future__ import annotations

from typing import Any

import regex
from memory_recall.server.extract.project.classify import (
    NAMES,
    SCRIPT_DIRS,
    classify_line,
    fix_of,
    name_rank,
    script_kind,
)
from memory_recall.server.extract.project.facts import (
    ANY_ECOSYSTEM,
    COMMAND_KINDS,
    SCRIPT,
    TASK_RUNNER,
    CommandKind,
    Component,
)
from memory_recall.server.extract.project.files import Workspace

MAKEFILES = ("GNUmakefile", "Makefile", "makefile")
JUSTFILES = ("justfile", "Justfile", ".justfile")
TASKFILES = ("Taskfile.yml", "Taskfile.yaml", "taskfile.yml")
PRE_COMMIT = ".pre-commit-config.yaml"

_MAKE_VARIABLE = regex.compile(
    r"^(?:export\s+|override\s+)?([A-Za-z_][\w.]*)\s*(?:\?|:|::|\+|!)?=\s*(.*)$"
)
_MAKE_TARGET = regex.compile(r"^([^\t#=:][^#=:]*?)\s*::?(?!=)(.*)$")
_JUST_RECIPE = regex.compile(r"^@?([A-Za-z_][\w\-]*)(?:\s+[^:=]*)?\s*:(?!=)(.*)$")
_JUST_ALIAS = regex.compile(r"^alias\s+([\w\-]+)\s*:=\s*([\w\-]+)\s*$")
_JUST_VARIABLE = regex.compile(r"^(?:export\s+)?([A-Za-z_][\w]*)\s*:=\s*(.*)$")
_REFERENCE = regex.compile(r"\$\(([A-Za-z_][\w.]*)\)|\$\{([A-Za-z_][\w.]*)\}")
_JUST_REFERENCE = regex.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
_TARGET_NAME = regex.compile(r"^[A-Za-z][\w:\-]*$")


def read(ws: Workspace, directory: str, component: Component) -> None:
    names = ws.names_in(directory)
    prefix = "" if directory == "." else directory + "/"
    makefile = next((n for n in MAKEFILES if n in names), None)
    if makefile:
        text = ws.read_text(prefix + makefile)
        if text is not None:
            targets, variables = parse_makefile(text)
            _offer_targets(component, "make", targets, variables, prefix + makefile, _REFERENCE)
    justfile = next((n for n in JUSTFILES if n in names), None)
    if justfile:
        text = ws.read_text(prefix + justfile)
        if text is not None:
            targets, variables = parse_justfile(text)
            _offer_targets(
                component, "just", targets, variables, prefix + justfile, _JUST_REFERENCE
            )
    taskfile = next((n for n in TASKFILES if n in names), None)
    if taskfile:
        data = ws.load_yaml(prefix + taskfile)
        if isinstance(data, dict) and isinstance(data.get("tasks"), dict):
            targets = {str(k): _task_commands(v) for k, v in data["tasks"].items()}
            _offer_targets(component, "task", targets, {}, prefix + taskfile, _REFERENCE)
        elif data is not None:
            ws.report(prefix + taskfile, "no `tasks:` mapping")
    for folder in SCRIPT_DIRS:
        _offer_scripts(ws, component, prefix + folder)
    if directory == "." and PRE_COMMIT in names:
        data = ws.load_yaml(PRE_COMMIT)
        if isinstance(data, dict) and isinstance(data.get("repos"), list):
            component.add_tool("pre-commit")
            for repo in data["repos"]:
                for hook in (repo.get("hooks") or []) if isinstance(repo, dict) else []:
                    if isinstance(hook, dict) and isinstance(hook.get("id"), str):
                        component.add_tool(hook["id"])
            component.offer("lint", "pre-commit run --all-files", ANY_ECOSYSTEM, SCRIPT, PRE_COMMIT)
        elif data is not None:
            ws.report(PRE_COMMIT, "no `repos:` list")


def _offer_scripts(ws: Workspace, component: Component, folder: str) -> None:
    """The shell scripts of `folder` named for a kind, each the best of its name for that
    kind (`test` before `check`), run as CI would: by path when executable, else through
    the shell its first line names."""
    best: dict[CommandKind, tuple[int, str, str]] = {}
    for name in sorted(ws.names_in(folder)):
        relative = f"{folder}/{name}"
        kind = script_kind(relative)
        if kind is None:
            continue
        rank = name_rank(kind, name.split(".")[0])
        if kind in best and best[kind][0] <= rank:
            continue
        best[kind] = (rank, relative, _invocation(ws, relative, component.path))
    for kind, (_rank, relative, command) in best.items():
        component.offer(kind, command, ANY_ECOSYSTEM, TASK_RUNNER, f"script `{relative}`")


def _invocation(ws: Workspace, relative: str, directory: str) -> str:
    """How to run a script from its component's folder."""
    local = relative if directory == "." else relative[len(directory) + 1 :]
    try:
        executable = (ws.root / relative).stat().st_mode & 0o111
    except OSError:
        executable = 0
    if executable:
        return local
    first = (ws.read_text(relative) or "").split("\n", 1)[0]
    return f"{'bash' if 'bash' in first or local.endswith('.bash') else 'sh'} {local}"


def _task_commands(task: Any) -> list[str]:
    if isinstance(task, dict):
        commands = task.get("cmds") or []
    elif isinstance(task, list):
        commands = task
    else:
        return [str(task)] if isinstance(task, str) else []
    return [
        c if isinstance(c, str) else str(c.get("cmd", ""))
        for c in commands
        if isinstance(c, (str, dict))
    ]


def parse_makefile(text: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Targets (named like words, not files or patterns) with their recipes, and variables."""
    targets: dict[str, list[str]] = {}
    variables: dict[str, str] = {}
    current: list[str] = []
    for line in _joined(text):
        if line.startswith("\t"):
            recipe = " ".join(line.strip().lstrip("@-+").split())
            for target in current:
                targets[target].append(recipe)
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        variable = _MAKE_VARIABLE.match(line)
        if variable and ":" not in variable.group(1):
            variables[variable.group(1)] = variable.group(2).strip()
            current = []
            continue
        target = _MAKE_TARGET.match(line)
        if target:
            names = [n for n in target.group(1).split() if _TARGET_NAME.match(n)]
            if target.group(1).strip().startswith("."):
                names = []
            current = names
            for name in names:
                targets.setdefault(name, [])
            inline = target.group(2)
            if ";" in inline:
                for name in names:
                    targets[name].append(inline.split(";", 1)[1].strip())
            continue
        current = []
    return targets, variables


def parse_justfile(text: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    targets: dict[str, list[str]] = {}
    variables: dict[str, str] = {}
    current: str | None = None
    aliases: dict[str, str] = {}
    for line in _joined(text):
        if line[:1] in {" ", "\t"} and current and line.strip():
            targets[current].append(" ".join(line.strip().lstrip("@-").split()))
            continue
        if not line.strip() or line.startswith("#"):
            continue
        alias = _JUST_ALIAS.match(line)
        if alias:
            aliases[alias.group(1)] = alias.group(2)
            current = None
            continue
        variable = _JUST_VARIABLE.match(line)
        if variable:
            variables[variable.group(1)] = variable.group(2).strip().strip("'\"")
            current = None
            continue
        recipe = _JUST_RECIPE.match(line)
        if recipe and not line.startswith(("set ", "import ", "mod ")):
            current = recipe.group(1)
            targets[current] = []
            continue
        current = None
    for alias, target in aliases.items():
        if target in targets and alias not in targets:
            targets[alias] = targets[target]
    return targets, variables


def _joined(text: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for raw in text.replace("\r\n", "\n").split("\n"):
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def expand(text: str, variables: dict[str, str], reference: regex.Pattern[str]) -> str:
    """`$(BIN)/ruff` → `.venv/bin/ruff`, through nested variables; unknown ones stay."""
    for _ in range(8):
        expanded = reference.sub(
            lambda m: variables.get(next(g for g in m.groups() if g), m.group(0)), text
        )
        if expanded == text:
            break
        text = expanded
    return text


def _offer_targets(
    component: Component,
    runner: str,
    targets: dict[str, list[str]],
    variables: dict[str, str],
    source: str,
    reference: regex.Pattern[str],
) -> None:
    chosen: dict[str, str] = {}
    for kind in COMMAND_KINDS:
        names = [t for t in targets if t.lower() in NAMES[kind]]
        if not names:
            continue
        best = min(names, key=lambda t: name_rank(kind, t))
        chosen[kind] = best
        component.offer(
            kind, f"{runner} {best}", ANY_ECOSYSTEM, TASK_RUNNER, f"{source} target `{best}`"
        )
    if "format" in chosen or "lint" not in chosen:
        return
    for recipe in targets[chosen["lint"]]:
        line = expand(recipe, variables, reference)
        for found in classify_line(line):
            fixed = fix_of(found.command) if found.format_check else None
            if fixed:
                component.offer(
                    "format", fixed, found.ecosystem, SCRIPT,
                    f"{source} target `{chosen['lint']}`, check mode",
                )  # fmt: skip
                return
