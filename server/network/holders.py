"""The memories a key or keyword names, kept small: one memory's path, or a set of paths
from the second memory on.

Most keys and keywords of the memory network are one memory's, and a set of one path is
~200 bytes: kept as sets, the network's maps from keys and keywords to memories were a
third of its size at 10,000 memories (docs/network.md). Every read goes through `held`,
so no caller iterates a lone path's characters.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

Holders = str | set[str]


def held(index: Mapping[Any, Holders], key: object) -> Collection[str]:
    """The memories `index` holds under `key` (empty when none)."""
    holders = index.get(key)
    if holders is None:
        return ()
    return (holders,) if isinstance(holders, str) else holders


def size(holders: Holders) -> int:
    return 1 if isinstance(holders, str) else len(holders)


def hold(index: dict[Any, Holders], key: object, path: str) -> None:
    """Add `path` under `key`: the path itself when it is the first, a set from the second."""
    holders = index.get(key)
    if holders is None:
        index[key] = path
    elif isinstance(holders, str):
        if holders != path:
            index[key] = {holders, path}
    else:
        holders.add(path)


def release(index: dict[Any, Holders], key: object, path: str) -> None:
    """Remove `path` from under `key`: back to the lone path when one is left, the key
    gone when none is."""
    holders = index.get(key)
    if holders is None:
        return
    if isinstance(holders, str):
        if holders == path:
            del index[key]
        return
    holders.discard(path)
    if len(holders) == 1:
        index[key] = next(iter(holders))
    elif not holders:
        del index[key]
