"""The one backoff between attempts, for every channel."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Retry:
    """At most ``attempts`` tries; the n-th wait is drawn from ``[d/2, d]``
    with ``d = min(cap, base * 2**(n-1))`` (half jitter: spread, but never
    an immediate hammering). Each channel has its own attempts (webhooks
    10, e-mail 5); tests shorten ``base``."""

    attempts: int = 10
    base: float = 1.0
    cap: float = 120.0

    def delay(self, failed: int, retry_after: float | None = None) -> float:
        """The wait after ``failed`` attempts; a receiver's longer
        ``Retry-After`` is honoured, up to ``cap``."""
        d = min(self.cap, self.base * 2 ** (failed - 1))
        wait = d / 2 + random.uniform(0, d / 2)
        return wait if retry_after is None else max(wait, min(retry_after, self.cap))
