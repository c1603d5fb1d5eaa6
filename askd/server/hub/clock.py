"""What happens when a deadline comes, of any kind.

The timer (``timer.py``) sits at ``registry.next_deadline()``. When it
fires, whatever the registry's deadline kinds decide (``Registry.due``) goes
to the commit path like any change; a kind that only reports (a webhook
due) comes out in the flush. A new kind of deadline needs nothing here.
"""

from __future__ import annotations

from askd.core.registry import Registry
from askd.server.hub.commits import Commits
from askd.server.hub.flush import Flush
from askd.server.hub.timer import DeadlineTimer


class DeadlineClock:
    """What a deadline's coming does; it takes the timer's firing."""

    def __init__(self, registry: Registry, commits: Commits, flush: Flush, timer: DeadlineTimer) -> None:
        self._registry, self._commits, self._flush, self._timer = registry, commits, flush, timer
        timer.attach(self._fire)

    def _fire(self) -> None:
        due = self._registry.due()
        if due:
            self._commits.defer(due)  # its write flushes (and re-arms) when done
        else:
            self._flush()  # notifications that came due; re-arms the timer

    def close(self) -> None:
        self._timer.close()
