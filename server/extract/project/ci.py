"""CI workflows: the exact lines GitHub Actions and GitLab CI run, and the versions they set up.

Each `run:` / `script:` line is classified (classify.py); a line that tests,
lints, formats, … becomes a CI candidate of the component it runs in
(`working-directory`, `cd DIR &&`, else the component of its ecosystem).
A variable the workflow sets (`env:` of the workflow, job or step; GitLab's
`variables:`) is put in its place (`cargo test "${FEATURES}"` → `cargo test
--all-features`); lines that use CI expressions (`${{ matrix.x }}`) or a
variable nothing here sets are not runnable locally and are skipped;
task-runner calls (`make test`) are the runner's own targets, already offered
by tasks.py.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

import regex
from memory_recall.server.extract.project.classify import classify_line, fix_of
from memory_recall.server.extract.project.facts import ANY_ECOSYSTEM, CI, Component, ProjectReport
from memory_recall.server.extract.project.files import Workspace

GITLAB_FILE = ".gitlab-ci.yml"
GITLAB_RESERVED = frozenset(
    {
        "stages",
        "variables",
        "default",
        "include",
        "workflow",
        "image",
        "services",
        "cache",
        "before_script",
        "after_script",
        "pages",
    }
)
# actions/setup-* inputs → the language whose version they pin.
SETUP_VERSIONS = {
    "python-version": "Python",
    "node-version": "Node.js",
    "go-version": "Go",
    "java-version": "Java",
    "dotnet-version": ".NET SDK",
    "ruby-version": "Ruby",
    "php-version": "PHP",
}
# Actions that run a tool without a `run:` line.
ACTION_COMMANDS = {
    "golangci/golangci-lint-action": ("lint", "golangci-lint run", "go"),
    "pre-commit/action": ("lint", "pre-commit run --all-files", ANY_ECOSYSTEM),
}


# `$NAME` / `${NAME}`, quoted or not (not `$(…)` nor `${{ … }}`).
_VARIABLE = regex.compile(r'"\$\{?([A-Za-z_]\w*)\}?"|\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)')
# Variables a local shell has too.
_LOCAL_VARIABLES = frozenset({"HOME", "PWD", "USER", "PATH", "SHELL", "TMPDIR"})


def _variables(*nodes: Any) -> dict[str, str]:
    """The variables `env:` / `variables:` of these workflow nodes set, the later winning."""
    out: dict[str, str] = {}
    for node in nodes:
        if not isinstance(node, dict):
            continue
        for key in ("env", "variables"):
            table = node.get(key)
            for name, value in table.items() if isinstance(table, dict) else ():
                if isinstance(value, (str, int, float)) and "${{" not in str(value):
                    out[str(name)] = str(value)
    return out


def expand(line: str, variables: Mapping[str, str]) -> str | None:
    """`line` with the variables the workflow sets in place; None when it uses one that
    nothing here sets (it would not run as written)."""
    missing = False

    def put(match: regex.Match[str]) -> str:
        nonlocal missing
        quoted, braced, bare = match.groups()
        name = quoted or braced or bare
        if name in variables:
            value = variables[name]
            return shlex.quote(value) if quoted else value
        if name not in _LOCAL_VARIABLES:
            missing = True
        return match.group()

    expanded = _VARIABLE.sub(put, line)
    return None if missing else expanded


def workflow_files(ws: Workspace) -> list[str]:
    return sorted(
        f for f in ws.files
        if f.startswith(".github/workflows/") and f.endswith((".yml", ".yaml"))
    )  # fmt: skip


def read(ws: Workspace, report: ProjectReport) -> None:
    lines: list[tuple[str, str, str | None, dict[str, str], str]] = []
    for path in workflow_files(ws):
        data = ws.load_yaml(path)
        if data is None:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
            ws.report(path, "not a GitHub Actions workflow: no `jobs:` mapping")
            continue
        report.ci.append(path)
        for line, cwd, variables, job in _github_lines(data):
            lines.append((path, line, cwd, variables, f"{path}:{job}"))
        for action, inputs in _github_actions(data):
            _setup(report, action, inputs)
    # How the jobs that test the project install it is offered first (the first line
    # offered wins a tie): that is how the project is worked on, not how its docs are
    # built or a release is checked.
    testing = {job for _path, line, _cwd, variables, job in lines if _tests(line, variables)}
    lines.sort(key=lambda item: not (item[4] in testing and _does(item[1], item[3], "install")))
    for path, line, cwd, variables, _job in lines:  # (a stable sort: the rest in order)
        _offer(report, line, cwd, path, variables)
    if ws.exists(GITLAB_FILE):
        data = ws.load_yaml(GITLAB_FILE)
        if isinstance(data, dict):
            report.ci.append(GITLAB_FILE)
            for line, variables in _gitlab_lines(data):
                _offer(report, line, None, GITLAB_FILE, variables)
        elif data is not None:
            ws.report(GITLAB_FILE, "not a GitLab CI file: expected a mapping of jobs")


def _tests(line: str, variables: Mapping[str, str]) -> bool:
    """Whether a line tests the project where it was checked out (not a copy elsewhere:
    `cd dist/pkg && bash scripts/test.sh` tests a built package)."""
    return _does(line, variables, "test", here=True)


def _does(line: str, variables: Mapping[str, str], kind: str, *, here: bool = False) -> bool:
    expanded = expand(line, variables) if "${{" not in line else None
    return expanded is not None and any(
        c.kind == kind and (c.cwd is None or not here) for c in classify_line(expanded)
    )


def _github_lines(
    data: dict[str, Any],
) -> Iterator[tuple[str, str | None, dict[str, str], str]]:
    """Each `run:` line with its folder, the variables it sees and its job's name."""
    top = _working_directory(data)
    for name, job in data["jobs"].items():
        if not isinstance(job, dict):
            continue
        job_dir = _working_directory(job) or top
        for step in job.get("steps") or []:
            if not isinstance(step, dict) or not isinstance(step.get("run"), str):
                continue
            cwd = (
                step.get("working-directory")
                if isinstance(step.get("working-directory"), str)
                else job_dir
            )
            variables = _variables(data, job, step)
            for line in _lines(step["run"]):
                yield line, cwd, variables, str(name)


def _github_actions(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for job in data["jobs"].values():
        for step in (job.get("steps") or []) if isinstance(job, dict) else []:
            if isinstance(step, dict) and isinstance(step.get("uses"), str):
                inputs: dict[str, Any] = step["with"] if isinstance(step.get("with"), dict) else {}
                yield step["uses"].split("@", 1)[0], inputs


def _working_directory(node: dict[str, Any]) -> str | None:
    defaults = node.get("defaults")
    run = defaults.get("run") if isinstance(defaults, dict) else None
    value = run.get("working-directory") if isinstance(run, dict) else None
    return value if isinstance(value, str) else None


def _gitlab_lines(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, str]]]:
    for name, job in data.items():
        if name in GITLAB_RESERVED or str(name).startswith(".") or not isinstance(job, dict):
            continue
        variables = _variables(data, job)
        for key in ("before_script", "script"):
            script = job.get(key)
            entries = (
                [script] if isinstance(script, str) else script if isinstance(script, list) else []
            )
            for entry in entries:
                if isinstance(entry, str):
                    yield from ((line, variables) for line in _lines(entry))


# A line that only changes folder.
_CD_ONLY = regex.compile(r"cd\s+[^\s;&|]+")


def _lines(block: str) -> Iterator[str]:
    """The commands of a `run:` block, one per line (continued lines joined); a line that
    only changes folder (`cd dist/pkg`) is said before the lines after it."""
    pending = ""
    moved = ""
    for raw in block.splitlines():
        line = raw.strip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if not line or line.startswith("#"):
            continue
        if _CD_ONLY.fullmatch(line):
            moved = f"{moved} && {line}" if moved else line
            continue
        yield f"{moved} && {line}" if moved else line
    if pending.strip():
        yield f"{moved} && {pending.strip()}" if moved else pending.strip()


def _offer(
    report: ProjectReport,
    line: str,
    cwd: str | None,
    source: str,
    variables: Mapping[str, str],
) -> None:
    if "${{" in line:
        return
    expanded = expand(line, variables)
    if expanded is None:
        return
    for found in classify_line(expanded):
        if found.ecosystem == ANY_ECOSYSTEM:
            continue
        directory = _join(cwd, found.cwd)
        component = _component_for(report, directory, found.ecosystem)
        if component is None:
            continue
        # A formatter in check mode lints only formatting: a real linter on the same
        # CI wins the lint slot.
        authority = CI - 1 if found.format_check else CI
        component.offer(found.kind, found.command, found.ecosystem, authority, source)
        if found.format_check:
            fixed = fix_of(found.command)
            if fixed:
                component.offer("format", fixed, found.ecosystem, CI - 1, f"{source}, check mode")


def _join(base: str | None, more: str | None) -> str:
    parts = [p for p in (base, more) if p]
    joined = posixpath.normpath(posixpath.join(*parts)) if parts else "."
    return joined.removeprefix("./") or "."


def _component_for(report: ProjectReport, directory: str, ecosystem: str) -> Component | None:
    """The component at `directory` if it speaks the ecosystem, else the only one that does."""
    exact = report.component(directory)
    if exact is not None and ecosystem in exact.ecosystems:
        return exact
    speaking = [c for c in report.components if ecosystem in c.ecosystems]
    if len(speaking) == 1:
        return speaking[0]
    return exact if exact is not None and not exact.ecosystems else None


def _setup(report: ProjectReport, action: str, inputs: dict[str, Any]) -> None:
    if action in ACTION_COMMANDS:
        kind, command, ecosystem = ACTION_COMMANDS[action]
        target = (
            report.component(".")
            if ecosystem == ANY_ECOSYSTEM
            else _component_for(report, ".", ecosystem)
        )
        if target is not None:
            target.offer(kind, command, ecosystem, CI, f"{action} action")  # type: ignore[arg-type]
    for key, language in SETUP_VERSIONS.items():
        value = inputs.get(key)
        if not isinstance(value, (str, int, float)) or "${{" in str(value):
            continue
        for component in report.components:
            if language in component.languages and not component.languages[language]:
                component.languages[language] = str(value)
