"""A question whose deadline passed while no daemon ran has ended by the
time the hub's start returns, before the daemon serves its listeners: no
tab subscribing in the first moment is shown it, and a client that rode
through the restart hears of the end on its return (``ended``), not as a
live ``timeout``. The daemon serves only after ``Hub.start``; the wire
side is tests/system/restart/test_matrix.py."""

from __future__ import annotations

from pathlib import Path

from askd.core import AskInput, Limits, Status
from askd.server.hub.hub import Hub
from askd.store.sqlite.store import SqliteStore

NOW = 1_800_000_000.0


async def test_the_start_stores_the_end_of_what_is_overdue_before_it_returns(tmp_path: Path) -> None:
    now = [NOW]
    path = tmp_path / "askd.db"
    first = Hub(Limits(), SqliteStore(path, clock=lambda: now[0]), clock=lambda: now[0])
    await first.load()
    await first.start()
    late, _ = await first.ask(AskInput("late", "erin", [{"question": "Ship it?"}], timeout=60))
    kept, _ = await first.ask(AskInput("kept", "erin", [{"question": "Roll back?"}], timeout=3600))
    first.shutdown()
    await first.store.aclose()

    now[0] = NOW + 61  # down past the first deadline
    store = SqliteStore(path, clock=lambda: now[0])
    hub = Hub(Limits(), store, clock=lambda: now[0])
    await hub.load()
    assert hub.counts()["pending"] == 2  # both came back; the start ends one
    await hub.start()
    ended = hub.registry.get("late", late.request_id)
    assert ended is not None and ended.status is Status.TIMEOUT
    assert [r.request_id for r in hub.registry.pending(user_id="erin")] == [kept.request_id]
    hub.shutdown()
    await store.aclose()

    # The end was stored, not only applied: a third start reads it so.
    again = Hub(Limits(), SqliteStore(path, clock=lambda: now[0]), clock=lambda: now[0])
    await again.load()
    reread = again.registry.get("late", late.request_id)
    assert reread is not None and reread.status is Status.TIMEOUT
    again.shutdown()
    await again.store.aclose()
