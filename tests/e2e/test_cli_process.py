"""The installed command as a shell user runs it: pipes, and tools away from the clone."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.memory_files import write_memory

COMMAND = [sys.executable, "-m", "memory_recall.server"]


def test_recall_into_a_pipe_that_closes_early_ends_quietly(tmp_path: Path) -> None:
    for i in range(40):
        write_memory(tmp_path, f"m{i}.md", title=f"Deploy note {i}", description="deploy rules")
    with subprocess.Popen(
        [*COMMAND, "recall", "deploy", "--root", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # what `| head -1` does after its line
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_demo_and_delivery_run_from_any_folder_with_their_bundled_data(tmp_path: Path) -> None:
    demo = subprocess.run(
        [*COMMAND, "demo", "--model-delay-ms", "20"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert demo.returncode == 0, demo.stderr
    assert "memories in 2 roots" in demo.stdout and " 0 memories" not in demo.stdout
    assert "nothing matched" in demo.stdout  # the demo's question with no answer
    # plurals (issue 13): "1 doc", "2 docs", whatever each phase delivered
    counts = re.findall(r" (\d+) (docs?)\b", demo.stdout)
    assert counts and all((n == "1") == (word == "doc") for n, word in counts), counts
    delivery = subprocess.run(
        [*COMMAND, "dev", "delivery", "--latency", "40"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert delivery.returncode == 0, delivery.stderr
    assert "first-turn" in delivery.stdout


def test_recall_on_a_new_folder_of_hand_written_memories(tmp_path: Path) -> None:
    folder = tmp_path / "my memories"
    write_memory(folder, "tz.md", title="時區", description="我在上海，使用 UTC+8", type="user")
    write_memory(folder, "ci.md", title="CI", description="GitHub Actions runs make test")
    shutil.copy(folder / "ci.md", folder / "copy.txt")  # not a memory: ignored
    done = subprocess.run(
        [*COMMAND, "recall", "上海 時區", "--root", f"{folder}:user"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "時區" in done.stdout and "2 documents in 1 root," in done.stdout
