"""What a store kept, as it hands it over at start (``Loaded``), and the one
place that restores it into a registry (``restore``).

A store reads; only the core restores: no store module touches the
registry (so the way in is one place, and stores stay below the core). The registry is typed here only for the reader, not
imported at run time, so a store may import this module without loading the
engine.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from askd.core.records import Request

if TYPE_CHECKING:  # pragma: no cover
    from askd.core.registry import Registry


class SessionRow(NamedTuple):
    """A kept session: its owner, the parent it names, and the sub of the
    agent token that first asked in it (None: a token without one)."""

    session_id: str
    owner: str
    parent_session_id: str | None
    agent: str | None


@dataclass
class Loaded:
    """Everything a store kept, in the order to restore it: groups, aways, then
    sessions in the order they were made, then every kept question, pending
    or ended, oldest first.

    A shared store's follower starts handing on the changes made after this
    snapshot at the caller's next ``await``: restore it before awaiting
    anything else."""

    groups: dict[str, list[str]] = field(default_factory=dict)
    aways: dict[str, tuple[float, list[str]]] = field(default_factory=dict)  # user -> (until, delegates)
    sessions: list[SessionRow] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)


def restore(loaded: Loaded, registry: Registry) -> int:
    """Restore ``loaded`` into a fresh ``registry``, with no events; returns
    how many questions it holds."""
    # The restore makes objects and keeps them all, with no cycle among
    # them: the cyclic collector would only walk the growing heap again and
    # again (docs/performance.md, the start
    # with 100,000 questions in the store), so it waits, as during the store's read.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for name, members in loaded.groups.items():
            registry.restore_group(name, members)
        for user, (until, delegates) in loaded.aways.items():
            registry.restore_away(user, until, delegates)
        for row in loaded.sessions:
            registry.restore_session(row.session_id, row.owner, row.parent_session_id, row.agent)
        for req in loaded.requests:
            registry.restore(req)
    finally:
        if collecting:
            gc.enable()
    return len(loaded.requests)
