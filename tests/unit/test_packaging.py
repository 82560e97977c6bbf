"""Packaging: every folder of the daemon is installed, under the memory_recall namespace."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project's own fallback on 3.10 (pyproject: tomli)
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    mapping = config["tool"]["setuptools"]["package-dir"]
    # fixtures/ is a data-only namespace package (the demo's memories): no __init__.py
    on_disk = {"memory_recall.fixtures"}
    for name, folder in mapping.items():
        for init in (REPO / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(REPO / folder).parts
            on_disk.add(".".join((name, *parts)))
    # The developers' evaluations and benchmarks stay out of the runtime wheel.
    assert on_disk - {DEV_TOOLS} == listed, "list every package folder in [tool.setuptools]"
    assert DEV_TOOLS not in listed


DEV_TOOLS = "memory_recall.server.dev"


def test_nothing_installs_a_top_level_server_or_protocol_package() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    tops = {name.split(".")[0] for name in config["tool"]["setuptools"]["packages"]}
    assert tops == {"memory_recall"}
