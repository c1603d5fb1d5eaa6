"""The delivery worker with a channel plugged in (askd.channels.channel):
what a new channel (issue 35: reminders, Slack updates, Teams cards) can
count on. One claim per delivery, before its first attempt; retries on the
channel's backoff; the still-pending check; the bound; the stop."""

from __future__ import annotations

import asyncio
from typing import Any

from askd.channels.channel import ASKED, ENDED, Channel, OnceKey, Delivery, Notice, Outcome
from askd.channels.retry import Retry
from askd.channels.sample import sample_request
from askd.channels.worker import Worker
from tests.conftest import eventually

FAST = Retry(attempts=3, base=0.01, cap=0.02)


class Fake(Channel):
    """Two deliveries per notice (``a`` and ``b``); attempts answer from ``script``."""

    name = "fake"

    def __init__(self, script: list[Any] | None = None, max_held: int = 10) -> None:
        super().__init__(FAST, max_held)
        self.script = list(script or [])
        self.attempted: list[str] = []
        self.events: list[tuple[str, str | None, dict[str, Any]]] = []

    def prepare(self, notice: Notice) -> list[Delivery] | None:
        if notice.kind != ASKED:
            return None
        req = notice.req
        return [Delivery(req.session_id, req.request_id, who, OnceKey.of("fake", req, 0, who)) for who in ("a", "b")]

    async def attempt(self, delivery: Delivery) -> Outcome:
        self.attempted.append(delivery.payload)
        answer = self.script.pop(0) if self.script else "ok"
        if answer == "hang":
            await asyncio.Event().wait()
        return Outcome(answer == "ok", retryable=answer == "again")

    def report(self, event: str, delivery: Delivery | None, notice: Notice, got: Outcome | None = None, **fields: Any) -> None:
        self.events.append((event, delivery.payload if delivery else None, fields))


def notice(kind: str = ASKED) -> Notice:
    return Notice(sample_request("alice", 60), ["alice"], ["alice"], kind)


class Claims:
    def __init__(self, lost: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.keys: list[str] = []
        self.lost = lost

    async def __call__(self, c: OnceKey) -> bool:
        self.keys.append(c.key)
        return c.user not in self.lost


async def test_each_delivery_is_claimed_once_and_retried_until_it_succeeds() -> None:
    claims = Claims()
    worker = Worker(claim=claims, still_pending=lambda s, r: True)
    fake = worker.add(Fake(script=["again", "again", "ok"]))
    n = notice()
    assert fake.submit(n)
    await eventually(lambda: fake.held() == 0, what="both delivered")
    rid = n.req.request_id
    assert sorted(claims.keys) == [f"fake:{rid}:0:a", f"fake:{rid}:0:b"]  # once each, retries included
    assert sorted(e for e, _, _ in fake.events) == ["delivered", "delivered", "retry", "retry"]
    assert all(0 < f["retryIn"] <= FAST.cap for e, _, f in fake.events if e == "retry")


async def test_a_lost_claim_sends_nothing() -> None:
    worker = Worker(claim=Claims(lost={"b"}), still_pending=lambda s, r: True)
    fake = worker.add(Fake())
    fake.submit(notice())
    await eventually(lambda: fake.held() == 0, what="done")
    assert fake.attempted == ["a"]


async def test_attempts_stop_when_they_run_out_or_the_question_ends() -> None:
    pending = [True]
    worker = Worker(claim=Claims(), still_pending=lambda s, r: pending[0])
    fake = worker.add(Fake(script=["again"] * 10))
    fake.submit(notice())
    await eventually(lambda: fake.held() == 0, what="failed")
    assert [e for e, _, _ in fake.events].count("failed") == 2 and len(fake.attempted) == 2 * FAST.attempts
    pending[0] = False
    fake.events.clear()
    fake.submit(notice())
    await eventually(lambda: fake.held() == 0, what="skipped")
    assert [(e, f["reason"]) for e, _, f in fake.events] == [("skipped", "question ended")] * 2


async def test_a_full_channel_drops_and_a_stopped_one_takes_nothing() -> None:
    worker = Worker(claim=Claims(), still_pending=lambda s, r: True)
    fake = worker.add(Fake(script=["hang", "hang"], max_held=1))
    assert fake.submit(notice())
    assert not fake.submit(notice())
    assert [(e, f) for e, _, f in fake.events] == [("dropped", {"held": 1})]
    assert fake.submit(notice("reminder"))  # nothing to send: not held, not dropped
    await eventually(lambda: len(fake.attempted) == 2, what="both hanging")
    await asyncio.wait_for(fake.aclose(), 1)
    assert fake.held() == 0
    assert not fake.submit(notice())


class Ender(Fake):
    """Edits after the end: one delivery per ``ENDED`` notice, not pending-only."""

    def prepare(self, notice: Notice) -> list[Delivery] | None:
        if notice.kind != ENDED:
            return None
        req = notice.req
        return [Delivery(req.session_id, req.request_id, "edit", OnceKey.of("edit", req, 0), only_pending=False)]


async def test_a_delivery_about_the_end_is_attempted_though_nothing_is_pending() -> None:
    worker = Worker(claim=Claims(), still_pending=lambda s, r: False)
    ender = worker.add(Ender(script=["again", "ok"]))
    assert ender.submit(notice(ENDED))
    await eventually(lambda: ender.held() == 0, what="edited")
    assert ender.attempted == ["edit", "edit"]  # retried too, with nothing pending
    fake = worker.add(Fake())
    fake.submit(notice())
    await eventually(lambda: fake.held() == 0, what="skipped")
    assert fake.attempted == []  # a pending-only delivery still waits for nothing


class Loud(Fake):
    """Deliveries named by recipient; each answers from its own script, with a reason."""

    def __init__(self, scripts: dict[str, list[str]], max_held: int = 10) -> None:
        super().__init__(max_held=max_held)
        self.scripts = scripts

    def prepare(self, notice: Notice) -> list[Delivery] | None:
        req = notice.req
        return [Delivery(req.session_id, req.request_id, who, OnceKey.of("loud", req, 0, who), recipient=who) for who in self.scripts]

    async def attempt(self, delivery: Delivery) -> Outcome:
        answer = self.scripts[delivery.payload].pop(0)
        if answer == "hang":
            await asyncio.Event().wait()
        if answer == "raise":
            raise RuntimeError("Rotate the production keys?")  # an exception quoting question text
        return Outcome(answer == "ok", retryable=answer == "again", reason=None if answer == "ok" else f"said {answer}")


async def test_every_outcome_and_failure_is_in_the_delivery_status() -> None:
    worker = Worker(claim=Claims(), still_pending=lambda s, r: True)
    loud = worker.add(Loud({"a": ["again", "hang"], "b": ["raise"], "c": ["no"], "d": ["ok"]}, max_held=1))
    n, late = notice(), notice()
    assert loud.submit(n)
    assert not loud.submit(late)  # one held at once: this one is dropped
    rid = n.req.request_id
    await eventually(lambda: len(worker.book.of(rid)) == 4, what="four outcomes")
    got = {d["recipient"]: (d["status"], d.get("reason"), d["attempts"]) for d in worker.book.of(rid)}
    assert got == {
        "a": ("retrying", "said again", 1),
        "b": ("failed", "an error inside askd (RuntimeError); its traceback is in the log", 1),
        "c": ("failed", "said no", 1),
        "d": ("sent", None, 1),
    }
    assert ("error", "b", {"reason": "an error inside askd (RuntimeError); its traceback is in the log"}) in loud.events
    [dropped] = worker.book.of(late.req.request_id)
    assert (dropped["channel"], dropped["recipient"], dropped["status"], dropped["attempts"]) == ("fake", None, "failed", 0)
    assert dropped["reason"] == "dropped: the channel held 1 notices already"
    await asyncio.wait_for(loud.aclose(), 1)
