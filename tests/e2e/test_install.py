"""What an install really puts on a machine, and what `serve` really imports."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from memory_recall.protocol.framing import frame

REPO = Path(__file__).resolve().parents[2]


def _clean_source(into: Path) -> Path:
    """The files a fresh clone would have (with this checkout's changes), without the
    build artifacts a previous build left in build/: what the wheel is built from."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO, capture_output=True, check=True, timeout=60,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


def test_the_wheel_adds_no_top_level_server_or_protocol(tmp_path: Path) -> None:
    source = _clean_source(tmp_path / "source")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
        timeout=300,
        cwd=tmp_path,
    )
    (wheel,) = tmp_path.glob("memory_recall-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"memory_recall"}
    assert "memory_recall/protocol/schema/protocol.schema.json" in names
    assert "memory_recall/server/lsp/server.py" in names
    # what `memory-recall demo` reads when no path is given
    assert "memory_recall/fixtures/demo-memory/project/deploy-freeze.md" in names
    # no evaluation, benchmark or labelled set: those are the developers', in the source tree
    assert not [n for n in names if n.startswith("memory_recall/server/dev/")]
    assert not [n for n in names if n.startswith("memory_recall/fixtures/eval/")]
    assert not [n for n in names if n.startswith("memory_recall/fixtures/") and "/gate/" in n]


_SERVE_AND_REPORT = """
import os, sys, json
real_exit = os._exit
def report_and_exit(code):
    loaded = sorted(m for m in sys.modules if m.startswith("memory_recall.server.dev"))
    sys.stderr.write("LOADED " + json.dumps(loaded) + "\\n")
    sys.stderr.flush()
    real_exit(code)
os._exit = report_and_exit
from memory_recall.server.cli.main import main
main(["serve"])
"""


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return frame(body)


def test_serve_starts_without_importing_any_dev_tool(tmp_path: Path) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": None, "capabilities": {},
            "initializationOptions": {"roots": [{"path": str(tmp_path), "scope": "project"}]},
        }},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "memory/recall", "params": {"query": "deploy"}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _SERVE_AND_REPORT],
        input=b"".join(_frame(m) for m in messages),
        capture_output=True,
        timeout=60,
        env={"MEMORY_RECALL_CACHE_DIR": "off", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    report = [line for line in done.stderr.decode().splitlines() if line.startswith("LOADED ")]
    assert report, done.stderr.decode()
    assert json.loads(report[-1][len("LOADED ") :]) == []
    assert b'"requestId": 2' in done.stdout  # the recall ran to its end
