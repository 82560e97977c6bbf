"""Sync set up as the README says, in three commands, on two machines (issue 34): each
machine its own home (its user memory root and state store), one bare remote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.sync_helpers import bare_remote

COMMAND = [sys.executable, "-m", "memory_recall.server"]


class Home:
    def __init__(self, base: Path, name: str) -> None:
        self.home = base / name
        self.work = self.home / "project"
        self.work.mkdir(parents=True)
        self.env = dict(os.environ)
        self.env.pop("MEMORY_RECALL_STATE_DIR", None)  # the machine's own, under its data dir
        self.env.update(HOME=str(self.home), XDG_DATA_HOME=str(self.home / "data"),
                        XDG_CONFIG_HOME=str(self.home / "config"))  # fmt: skip
        self.memory = self.home / "data" / "memory-recall" / "memory"

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*COMMAND, *args], cwd=self.work, env=self.env, capture_output=True, text=True,
            timeout=180, check=False,
        )  # fmt: skip
        if ok:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done


def test_three_commands_on_each_machine(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    laptop, desktop = Home(tmp_path, "laptop"), Home(tmp_path, "desktop")

    setup = laptop.run("sync", "init", "--remote", str(remote))
    assert "synced" in setup.stdout and "automatic sync: on" in setup.stdout
    laptop.run("remember", "--scope", "user", "I prefer terse answers with code first.")
    pushed = laptop.run("sync")
    assert "pushed" in pushed.stdout

    desktop.run("sync", "init", "--remote", str(remote))
    names = sorted(p.name for p in desktop.memory.glob("*.md"))
    assert "MEMORY.md" in names and len(names) == 2, names
    desktop.run("remember", "--scope", "user", "My timezone is Europe/Berlin.")
    desktop.run("sync")
    laptop.run("sync")
    mine = {p.name: p.read_bytes() for p in laptop.memory.glob("*.md")}
    theirs = {p.name: p.read_bytes() for p in desktop.memory.glob("*.md")}
    assert mine == theirs and len(mine) == 3

    status = laptop.run("sync", "status").stdout
    assert "automatic, idle; 0 ahead, 0 behind" in status
    assert "sync     " in laptop.run("status").stdout

    # The project's own memories may sync too; its team root never does.
    laptop.run("sync", "init", "--scope", "project")
    assert (laptop.work / ".memory" / ".git").is_dir()
    refused = laptop.run("sync", "init", "--scope", "team", ok=False)
    assert refused.returncode == 1 and "project's git" in refused.stderr
    assert not (laptop.work / ".memory" / "team" / ".git").exists()
