"""Files the developer tools ship with: the demo's memory tree, the eval corpus.

They live in the repository's `fixtures/` and are installed as package data
under `memory_recall/fixtures/`, so `memory-recall demo` and `delivery` work
from a clone and from an installed package alike.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

DEMO_MEMORY = "demo-memory"
DELIVERY_CORPUS = "eval/corpus.json"


def bundled(relative: str) -> Path:
    """The installed (or, in a clone, the repository's) copy of a fixture.

    Raises FileNotFoundError naming what is missing and how to get it.
    """
    spec = importlib.util.find_spec("memory_recall.fixtures")
    # A namespace package: its search path also holds the editable install's
    # path-hook entry, which is not a folder.
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / relative
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"the bundled fixture {relative!r} is not installed; reinstall memory-recall "
        f"from a clone (pip install .) or pass a path explicitly"
    )
