"""The daemon's long-lived objects, collected once when quiet and then frozen (server/core/heap.py)."""

from __future__ import annotations

import gc
import weakref

from memory_recall.server.core.heap import collector_paused, freeze_young, settle_if_grown


class _Node:
    other: _Node | None = None


def test_a_grown_heap_is_collected_in_full_then_its_survivors_frozen():
    frozen = gc.get_freeze_count()
    try:
        assert settle_if_grown(grown=10**9) is None  # not worth it: nothing done
        assert gc.get_freeze_count() == frozen
        kept = [{n} for n in range(60_000)]  # what the start-up work builds after ready
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        dropped = weakref.ref(a)
        gc.collect()  # the cycle is old when it becomes garbage
        del a, b
        assert dropped() is not None
        assert settle_if_grown(grown=len(kept)) is not None
        assert dropped() is None  # collected, never frozen
        assert gc.get_freeze_count() >= frozen + len(kept)
        oldest = gc.get_objects(generation=2)
        assert not any(o is kept for o in oldest) and not any(o is kept[0] for o in oldest)
        kept.append({-1})  # frozen objects still change and are freed as before
        del kept
    finally:
        gc.unfreeze()


def test_a_build_under_a_paused_collector_is_frozen_young_and_its_garbage_freed():
    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    try:
        with collector_paused():
            with collector_paused():  # nested: only the outermost pause resumes it
                built = [{n} for n in range(20_000)]
            assert not gc.isenabled()
            a, b = _Node(), _Node()
            a.other, b.other = b, a
            dropped = weakref.ref(a)
            del a, b  # a cycle the build made and let go of
            freeze_young()
        assert gc.isenabled()
        assert dropped() is None
        assert gc.get_freeze_count() >= frozen + len(built)
        assert not any(o is built for o in gc.get_objects(generation=2))
    finally:
        gc.unfreeze()
