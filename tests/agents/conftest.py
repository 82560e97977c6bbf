"""The real-agents tier runs only under `make agents` (it installs the agents from npm and
runs them in a loopback-only network namespace); `make test` never collects it."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("MEMORY_RECALL_AGENTS") else ["test_*.py"]
