"""What happens when a deadline comes, of any kind.

The timer (``timer.py``) sits at ``registry.next_deadline()``. When it
fires, whatever the registry's deadline kinds decide (``Registry.due``) goes
to the commit path like any change; a kind that only reports (a webhook
due) comes out in the flush. A new kind of deadline needs nothing here.

A deadline whose kind raised is left out by the registry and tried again
later with a backoff; each failure is logged here with its question's ids,
and ``/healthz`` reports those still failing (``failing``; protocol section 6).
"""

from __future__ import annotations

from askd.core.deadlines import DeadlineFailure
from askd.core.records import Request
from askd.core.registry import Registry
from askd.server.hub.commits import Commits
from askd.server.hub.flush import Flush
from askd.server.hub.timer import DeadlineTimer
from askd.server.logs import get_logger

log = get_logger("askd.hub")


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
        for failure in self._registry.drain_deadline_failures():  # after: what came due is on its way
            _log_failure(failure)

    def failing(self) -> list[DeadlineFailure]:
        """The deadlines that failed and are still retried, oldest first."""
        return self._registry.failing_deadlines()

    def close(self) -> None:
        self._timer.close()


def _log_failure(failure: DeadlineFailure) -> None:
    key = failure.key
    ids = {"sessionId": key.session_id, "requestId": key.request_id} if isinstance(key, Request) else {"userId": key}
    err = failure.error
    log.error(
        "deadline.failed", kind=failure.kind, attempt=failure.attempts,
        retryInSeconds=DeadlineFailure.backoff(failure.attempts),
        exc_info=(type(err), err, err.__traceback__), **ids,
    )
