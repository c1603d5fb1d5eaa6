"""The one backoff between attempts, for every channel, and the one reading
of a receiver's ``Retry-After``."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime


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


def retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds from now (a number of seconds or
    an HTTP date), or None when there is none or it cannot be read."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
