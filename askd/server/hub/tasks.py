"""Background work the hub starts and does not wait for."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any


class Tasks:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        task = asyncio.ensure_future(fn())
        self._tasks.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._tasks.discard)
