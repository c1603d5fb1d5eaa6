"""``askd serve`` settles the cyclic collector once started (see
``askd.server.gc_tuning.settle_gc``): what exists then is frozen and full
collections run less often."""

from __future__ import annotations

import gc

from askd.server.gc_tuning import GC_THRESHOLDS, settle_gc


def test_settle_gc_freezes_the_started_heap_and_spaces_full_collections() -> None:
    saved = gc.get_threshold()
    kept = object.__new__(type("Kept", (), {}))  # a tracked object alive at start
    try:
        settle_gc()
        assert gc.get_threshold() == GC_THRESHOLDS
        assert GC_THRESHOLDS[2] > saved[2]  # full collections rarer than CPython's default
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())  # frozen: the collector no longer walks it
    finally:
        gc.unfreeze()
        gc.set_threshold(*saved)
