"""The shared keep-alive timer (askd.server.ws.pinger), with fake peers on a
real event loop: every peer pinged once per interval, spread over the
interval's ticks; a silent one closed once the timeout has passed; nothing
kept for a peer that went away."""

from __future__ import annotations

import asyncio

import pytest

from askd.server.ws.pinger import TIMEOUT_CODE, TIMEOUT_REASON, Pinger


class FakePeer:
    def __init__(self, pinger: Pinger, answers: bool = True) -> None:
        self.pinger, self.answers = pinger, answers
        self.pings: list[float] = []
        self.closed: tuple[int, str] | None = None
        self.closed_at: float | None = None
        self.group = pinger.add(self)

    def ping_peer(self) -> None:
        assert self.closed is None, "pinged after it was closed"
        self.pings.append(asyncio.get_running_loop().time())
        if self.answers:  # the pong comes back a moment later, as over a socket
            asyncio.get_running_loop().call_soon(self.pinger.answered, self)

    def close_peer(self, code: int, reason: str) -> None:
        self.closed, self.closed_at = (code, reason), asyncio.get_running_loop().time()
        self.pinger.discard(self, self.group)


def test_groups_and_grace_follow_the_settings() -> None:
    default = Pinger(20.0, 20.0)
    assert (default.slots, default.tick, default.grace) == (20, 1.0, 20)
    assert Pinger(20.0, 5.0).grace == 5
    assert Pinger(20.0, 4.5).grace == 5  # rounded up: never closes before the timeout
    assert Pinger(0.2, 0.2).slots == 1
    assert Pinger(3600.0, 3600.0).slots == 60
    with pytest.raises(ValueError):
        Pinger(10.0, 20.0)


async def test_every_peer_is_pinged_once_per_interval_and_the_work_is_spread() -> None:
    pinger = Pinger(0.5, 0.5, tick=0.1)  # 5 groups, a tick every 0.1 s
    loop = asyncio.get_running_loop()
    ticks: list[int] = []
    real_tick = pinger._on_tick

    def counting_tick() -> None:
        before = sum(len(p.pings) for p in peers)
        real_tick()
        ticks.append(sum(len(p.pings) for p in peers) - before)

    pinger._on_tick = counting_tick  # type: ignore[method-assign]
    peers = [FakePeer(pinger) for _ in range(50)]
    start = loop.time()
    await asyncio.sleep(1.75)
    pinger.stop()
    for p in peers:
        assert len(p.pings) in (2, 3, 4), p.pings  # 1.75 s at one ping per 0.5 s (3 or 4; 2 if the loop lags)
        gaps = [b - a for a, b in zip(p.pings, p.pings[1:])]
        assert all(0.45 < g < 0.75 for g in gaps), gaps
        assert p.pings[0] - start <= 0.55
        assert p.closed is None  # they answer
    # No tick pinged more than its group: 50 peers over 5 groups.
    assert max(ticks) == 10 and len(ticks) >= 15


async def test_a_silent_peer_is_closed_after_the_timeout_and_a_live_one_is_not() -> None:
    pinger = Pinger(0.4, 0.2, tick=0.1)
    silent = FakePeer(pinger, answers=False)
    live = FakePeer(pinger)
    await asyncio.sleep(1.0)
    assert silent.closed == (TIMEOUT_CODE, TIMEOUT_REASON)
    assert silent.closed_at is not None
    assert 0.19 <= silent.closed_at - silent.pings[0] <= 0.5  # the timeout (0.2 s), rounded up to a tick
    assert len(silent.pings) == 1  # never pinged again once closed
    assert live.closed is None and len(live.pings) >= 2
    assert len(pinger) == 1 and silent not in pinger._unanswered
    pinger.stop()


async def test_nothing_is_kept_for_a_peer_that_went_away_and_the_timer_stops() -> None:
    pinger = Pinger(0.2, 0.2, tick=0.1)
    peers = [FakePeer(pinger, answers=False) for _ in range(4)]
    await asyncio.sleep(0.15)  # some pinged, none answered yet
    for p in peers:
        pinger.discard(p, p.group)
        pinger.discard(p, p.group)  # twice is harmless
    assert len(pinger) == 0 and not pinger._unanswered
    assert all(not g for g in pinger._groups)
    await asyncio.sleep(0.3)
    assert pinger._timer is None  # no connection: no wake-ups
    assert all(p.closed is None for p in peers)
    # It starts again with the next connection.
    again = FakePeer(pinger)
    await asyncio.sleep(0.25)
    assert again.pings
    pinger.stop()
