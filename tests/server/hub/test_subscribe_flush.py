"""A subscribe handled between the clock's firing and the write of what
came due must not swallow the webhooks that came due with it: the
subscribe's re-push goes out through the hub's one flush, which hands
webhooks on and wakes waiters, instead of draining the registry itself."""

from __future__ import annotations

from typing import Any

from askd.core import AskInput, Limits, NotifyPolicy
from askd.core.records import Request
from askd.server.hub.hub import Hub

NOW = 1_800_000_000.0


class Tab:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send_frame(self, frame: bytes) -> None:
        self.frames.append(frame)

    def close_peer(self, code: int, reason: str) -> None: ...

    def abort_peer(self) -> None: ...


async def test_a_subscribe_between_the_clocks_fire_and_its_write_keeps_the_webhook_due() -> None:
    now = [NOW]
    hub = Hub(Limits(), clock=lambda: now[0], notify=NotifyPolicy(after=10.0))
    await hub.load()
    told: list[Any] = []
    hub.webhooks.due = told.extend  # type: ignore[method-assign]  # what the notifier is handed
    held: list[Any] = []
    hub.commits.defer = held.extend  # type: ignore[method-assign]  # the clock's write, not yet run

    notified, _ = await hub.ask(AskInput("s1", "alice", [{"question": "Ship it?"}], timeout=3600))
    expiring, _ = await hub.ask(AskInput("s2", "alice", [{"question": "Roll back?"}], timeout=10))
    assert told == []

    now[0] = NOW + 10  # the first question's notify and the second's timeout, at one instant
    hub.clock._fire()
    assert held, "the timeout came due and waits for its write"
    assert told == []  # the webhook waits for the flush after the write

    tab = Tab()
    conn = hub.connect(tab, "alice", "127.0.0.1")
    assert hub.subscribe(conn, "s1") == 1  # a re-push in between
    assert tab.frames  # the snapshot and the question went out
    assert notified.request_id in [r.request_id for r in told if isinstance(r, Request)]
    assert expiring.pending  # its end is the held write's
    hub.clock.close()
