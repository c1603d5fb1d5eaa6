"""How ``askd serve`` tunes CPython's garbage collector once started."""

from __future__ import annotations

import gc

# CPython's cyclic collector walks every tracked object on a full
# collection, and a daemon's heap is mostly long-lived: modules, pending
# questions, open connections. Full collections ten times rarer than
# CPython's default cut the reconnect storm's CPU by about a third
# (docs/performance.md, the storm of 5,000 users); cycles (a closed connection's handler objects)
# are still collected, later.
GC_THRESHOLDS = (700, 10, 100)


def settle_gc() -> None:
    """Once started: what exists now (imports, restored questions) lives as
    long as the process, so the collector stops walking it, and full
    collections run less often. Process-wide: only ``serve`` calls it."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
