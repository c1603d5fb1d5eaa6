"""Where askd keeps its state, behind one small interface (``Store``): a
change log plus three small parts (``parts.py``).

The core decides each change and a store makes it durable before the daemon
applies it or answers anyone (acknowledged means durable). ``open_store``
picks the adapter from the ``store`` setting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from askd.store.base import Store, StoreError, StoreUnavailable
from askd.store.memory import MemoryStore

DB_FILE = "askd.db"


def open_store(
    url: str, state_dir: Path, node_id: str = "local", node_ttl: float = 30.0, clock: Callable[[], float] = time.time
) -> Store:
    """The store the ``store`` setting names, its once keys and posts on ``clock``.
    Raises :class:`StoreError` (one line naming the file) for a file that
    cannot be askd's."""
    if url == "memory":
        return MemoryStore(clock)
    if url == "sqlite" or url.startswith("sqlite:///"):
        from askd.store.sqlite import SqliteStore

        path = state_dir / DB_FILE if url == "sqlite" else Path(url[len("sqlite://") :])
        return SqliteStore(path, clock)
    if url.startswith(("redis://", "rediss://")):
        from askd.store.redis import RedisStore

        return RedisStore(url, node_id, node_ttl, clock)
    raise StoreError(f"store {url.split('://')[0]}:// is not supported by this askd")


__all__ = ["Store", "StoreError", "StoreUnavailable", "open_store"]
