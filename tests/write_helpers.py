"""Helpers the write-side tests of every tier share."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """Make `directory` refuse new files, also for root (who ignores permissions):
    `chmod 555` for a normal user, the immutable attribute (`chattr +i`) for root."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: cannot make a folder read-only")
    made = subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"chattr +i not supported here: {made.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def memory_text(title: str, body: str, *, type: str = "project", **extra: str) -> str:
    lines = ["---", f"name: {title}", f"description: {body[:60]}", f"type: {type}"]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    return "\n".join([*lines, "---", "", body, ""])
