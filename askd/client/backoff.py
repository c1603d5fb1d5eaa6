"""Capped exponential backoff with full jitter (a random delay between 0
and ``min(cap, base * 2**attempt)``), so clients that lost the daemon at the
same moment do not all come back at the same moment."""

from __future__ import annotations

import random
from collections.abc import Callable


class Backoff:
    def __init__(self, base: float = 0.2, cap: float = 10.0, rand: Callable[[], float] = random.random) -> None:
        if base <= 0 or cap < base:
            raise ValueError("backoff needs 0 < base <= cap")
        self.base, self.cap, self._rand = base, cap, rand
        self.attempt = 0

    def next(self) -> float:
        ceiling = min(self.cap, self.base * 2.0 ** min(self.attempt, 32))
        self.attempt += 1
        return self._rand() * ceiling

    def reset(self) -> None:
        self.attempt = 0
