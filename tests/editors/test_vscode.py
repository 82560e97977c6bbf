"""The VS Code extension's own checks against this daemon (design: docs/editor-tests.md):
protocol types regenerated from protocol/schema and diffed, `tsc --noEmit`, each node test
file as its own item (the wire layer and the extension in a stand-in `vscode`), `npm test`
without a daemon, and a .vsix packaged with the network cut off, then activated."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.editors import suites
from tests.editors.suites import VSCODE

TEST_FILES = suites.vscode_test_files()
if not TEST_FILES:
    raise RuntimeError(f"no node test files in {VSCODE / 'test'}")


def _check(finished: suites.Finished) -> str:
    if not finished.ok:
        pytest.fail(finished.describe(), pytrace=False)
    return finished.output


def test_vscode_protocol_types_match_the_schema(npm: str) -> None:
    """src/protocol.generated.ts is what json-schema-to-typescript makes of protocol/schema."""
    _check(suites.run([npm, "run", "--silent", "check:protocol"], VSCODE, suites.environment()))


def test_vscode_typecheck(npm: str) -> None:
    _check(suites.run([npm, "run", "--silent", "typecheck"], VSCODE, suites.environment()))


@pytest.mark.parametrize("name", TEST_FILES)
def test_vscode_node_tests(name: str, vscode_tests_built: Path, tmp_path: Path) -> None:
    """One test file under node's test runner; every test in it passes, none is skipped."""
    test_file = vscode_tests_built / f"{name}.test.js"
    command = ["node", "--test", "--test-reporter=spec", str(test_file)]
    output = _check(suites.run(command, VSCODE, suites.environment(tmp_path)))
    counts = suites.NodeCounts.parse(output)
    print(f"editors/vscode/test/{name}.test.ts: {counts['pass']}/{counts['tests']} passed")
    assert counts["tests"] > 0, output
    assert counts["pass"] == counts["tests"], output
    # A skipped or to-do test would hide a regression behind a green item.
    assert counts["skipped"] == counts["todo"] == counts["cancelled"] == 0, output


def test_vscode_npm_test_without_a_daemon_fails_once_saying_how_to_get_one(
    npm: str, tmp_path: Path
) -> None:
    missing = json.dumps(["/nonexistent/python", "-m", "memory_recall.server", "serve"])
    env = suites.environment(tmp_path, MEMORY_RECALL_SERVER=missing)
    finished = suites.run([npm, "test"], VSCODE, env)
    output = finished.output
    assert finished.returncode not in (0, None), output
    assert "make test" in output and "MEMORY_RECALL_SERVER" in output, output
    assert output.count("ENOENT") == 1 and "ℹ tests" not in output, output


def _offline_prefix() -> list[str]:
    """`unshare -rn` (no network) when this machine allows it."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn"]
    return []


def test_vscode_vsix_packages_offline(npm: str, vscode_tests_built: Path, tmp_path: Path) -> None:
    vsix = tmp_path / "memory-recall.vsix"
    env = suites.environment(tmp_path / "xdg", npm_config_offline="true")
    package = [*_offline_prefix(), npm, "run", "--silent", "package", "--", "--out", str(vsix)]
    packaged = suites.run(package, VSCODE, env)
    # Packaging leaves the minified production bundle in out/: back to the development one.
    rebuilt = suites.run([npm, "run", "--silent", "build"], VSCODE, env)
    _check(packaged)
    _check(rebuilt)
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
    activate = VSCODE / "out" / "vsix" / "activate.js"
    output = _check(suites.run(["node", str(activate), str(unpacked)], VSCODE, env))
    assert "vsix activated: protocol v2" in output, output
