"""The installed release, for `--version` and every face's server info (a leaf: it imports
nothing of the daemon, so reading it costs no start-up time)."""

from __future__ import annotations

PACKAGE = "memory-recall"


def version() -> str:
    """The installed release; `0+unknown` in a source tree that was never installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(PACKAGE)
    except PackageNotFoundError:
        return "0+unknown"
