"""UserClient against a real daemon: events, answers, and above all what
happens when the link drops in the middle of things."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from askd.client import (
    AuthError,
    CancelledEvent,
    Event,
    InvalidAnswer,
    QuestionEvent,
    SnapshotEvent,
    UserClient,
)
from askd.client.backoff import Backoff
from askd.client.events import ENDED_WHILE_AWAY
from askd.core.selectors import Selector
from tests.client.proxy import TcpForwarder
from tests.client.waiting import eventually
from tests.conftest import SECRET, RunningDaemon, q


class Recorder:
    """The application: every event the client hands it, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def question_ids(self) -> list[str]:
        return [e.request_id for e in self.of(QuestionEvent)]


@pytest.fixture
async def link(daemon: RunningDaemon) -> AsyncIterator[TcpForwarder]:
    """A network path to the daemon that the test can cut and keep down."""
    fwd = await TcpForwarder(daemon.daemon.port).start()
    yield fwd
    await fwd.stop()


@pytest.fixture
async def make_user(daemon: RunningDaemon) -> AsyncIterator[Callable[..., Any]]:
    clients: list[UserClient] = []

    async def make(user: str = "alice", url: str | None = None, **kw: Any) -> UserClient:
        kw.setdefault("backoff_base", 0.02)
        kw.setdefault("backoff_cap", 0.1)
        client = UserClient(url or daemon.url, daemon.token("user", user), **kw)
        clients.append(client)
        await client.start()
        await client.wait_connected(5)
        return client

    yield make
    for c in clients:
        await c.close()


def drop_link_during_next_answer(daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch, *, taken: bool) -> None:
    """Abort alice's connections (admin ``abort``: no close handshake) while
    askd handles the next answer frame: after it took the answer but before
    the ack went out (``taken``), or before it took it (the frame is lost)."""
    hub = daemon.daemon.hub
    real = hub.answer

    def drop() -> None:
        hub.connections.drop(hub.connections.matching(Selector(user_id="alice")), "abort")

    async def answer_once(*args: Any, **kw: Any) -> Any:
        monkeypatch.setattr(hub, "answer", real)
        if not taken:
            drop()
            return None
        kw["before_flush"] = drop  # instead of writing the ack
        return await real(*args, **kw)

    monkeypatch.setattr(hub, "answer", answer_once)


async def test_questions_arrive_and_an_answer_reaches_the_agent(daemon: RunningDaemon, make_user: Any) -> None:
    app = Recorder()
    user = await make_user(on_event=app)
    asked = await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")], metadata={"m": 1})
    await eventually(lambda: app.of(QuestionEvent), what="the question")
    [event] = app.of(QuestionEvent)
    assert (event.session_id, event.request_id, event.metadata) == ("s1", asked["requestId"], {"m": 1})
    assert [o.label for o in event.questions[0].options or []] == ["yes", "no"]
    assert user.pending == [event]

    assert await user.answer(event, {"Deploy?": "yes"}) is True
    result = (await daemon.result("s1", asked["requestId"])).json()
    assert result["answers"] == {"Deploy?": "yes"}
    await eventually(lambda: app.of(CancelledEvent), what="the cancelled event")
    assert app.of(CancelledEvent) == [CancelledEvent("s1", asked["requestId"], "answered", "alice", "ws")]
    assert user.pending == []


async def test_a_late_answer_is_not_accepted(daemon: RunningDaemon, make_user: Any) -> None:
    user = await make_user()
    asked = await daemon.ask("s1", "alice", [q("Deploy?")])
    await eventually(lambda: user.pending, what="the question")
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{asked['requestId']}/answer", json={"answers": {"Deploy?": "x"}})
    assert r.status_code == 200
    assert await user.answer(asked["requestId"], {"Deploy?": "y"}, session_id="s1") is False


async def test_invalid_answers_are_refused_before_sending(daemon: RunningDaemon, make_user: Any) -> None:
    user = await make_user()
    await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")])
    [event] = await eventually(lambda: user.pending, what="the question")
    with pytest.raises(InvalidAnswer):
        await user.answer(event, {"Deploy?": ["yes", "no"]})  # a list for a single-choice question
    with pytest.raises(InvalidAnswer):
        await user.answer(event, {"Nope?": "x"})
    assert (await daemon.result("s1", event.request_id)).json()["status"] == "pending"


@pytest.mark.parametrize("taken", [True, False], ids=["ack-lost", "frame-lost"])
async def test_abort_in_the_middle_of_an_answer(
    daemon: RunningDaemon, make_user: Any, monkeypatch: pytest.MonkeyPatch, taken: bool
) -> None:
    app = Recorder()
    user = await make_user(on_event=app)
    first = await daemon.ask("s1", "alice", [q("Deploy?")])
    second = await daemon.ask("s1", "alice", [q("Rollback?")])  # stays pending: re-pushed on reconnect
    await eventually(lambda: len(app.of(QuestionEvent)) == 2, what="both questions")
    repushed_before = daemon.daemon.hub.registry.stats()["repushed"]

    drop_link_during_next_answer(daemon, monkeypatch, taken=taken)
    accepted = await asyncio.wait_for(user.answer(app.of(QuestionEvent)[0], {"Deploy?": "yes"}), 5)

    # The answer arrived exactly once and the agent has it.
    result = (await daemon.result("s1", first["requestId"])).json()
    assert (result["status"], result["answers"]) == ("answered", {"Deploy?": "yes"})
    stats = (await daemon.admin("GET", "/admin/v1/stats")).json()
    assert stats["answered"] == 1 and stats["pending"] == 1
    # The client reconnected and re-subscribed: askd re-pushed the second question...
    assert daemon.daemon.hub.registry.stats()["repushed"] > repushed_before
    conns = (await daemon.admin("GET", "/admin/v1/connections")).json()["connections"]
    assert [c["subscriptions"] for c in conns] == [["*"]]
    # ...and the application saw each question once, and the first one end once.
    assert app.question_ids() == [first["requestId"], second["requestId"]]
    [ended] = app.of(CancelledEvent)
    assert ended.request_id == first["requestId"]
    # A resend that askd had taken already is answered not_pending (the
    # ack went down with the link): see UserClient.answer.
    assert accepted is (not taken)
    assert ended.reason == (ENDED_WHILE_AWAY if taken else "answered")
    assert [e.request_id for e in user.pending] == [second["requestId"]]


async def test_an_answer_given_while_disconnected_is_sent_on_reconnect(
    daemon: RunningDaemon, make_user: Any, link: TcpForwarder
) -> None:
    user = await make_user(url=link.url)
    asked = await daemon.ask("s1", "alice", [q("Deploy?")])
    [event] = await eventually(lambda: user.pending, what="the question")
    link.cut()  # and it stays down
    await eventually(lambda: not user.connected, what="the drop")
    answering = asyncio.create_task(user.answer(event, {"Deploy?": "later"}))
    await asyncio.sleep(0.1)
    assert not answering.done()
    assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "pending"
    link.down = False
    assert await asyncio.wait_for(answering, 5) is True
    assert (await daemon.result("s1", asked["requestId"])).json()["answers"] == {"Deploy?": "later"}


async def test_a_question_that_ended_while_away_is_reported_ended(
    daemon: RunningDaemon, make_user: Any, link: TcpForwarder
) -> None:
    app = Recorder()
    user = await make_user(url=link.url, on_event=app)
    asked = await daemon.ask("s1", "alice", [q("Deploy?")])
    await eventually(lambda: user.pending, what="the question")
    link.cut()
    await eventually(lambda: not user.connected, what="the drop")
    await daemon.admin("POST", "/admin/v1/sessions/s1/cancel")  # the client cannot hear of it
    link.down = False
    await eventually(lambda: user.connected, what="the reconnect")
    assert app.of(CancelledEvent) == [CancelledEvent("s1", asked["requestId"], ENDED_WHILE_AWAY)]
    assert user.pending == []


async def test_iterator_starts_with_what_is_pending_and_never_repeats(daemon: RunningDaemon, make_user: Any) -> None:
    connects: list[int] = []
    user = await make_user(sessions=["s1"], on_connect=lambda: connects.append(1))
    first = await daemon.ask("s1", "alice", [q("One?")])
    await eventually(lambda: user.pending, what="the first question")
    seen: list[Event] = []

    async def consume() -> None:
        async for event in user:
            seen.append(event)

    consumer = asyncio.create_task(consume())
    for n in (2, 3):  # two drops: two replays of the first question
        await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice"})
        await eventually(lambda: len(connects) == n, what=f"connection {n}")
    second = await daemon.ask("s1", "alice", [q("Two?")])
    await eventually(lambda: len([e for e in seen if isinstance(e, QuestionEvent)]) == 2, what="the second question")
    await user.close()
    await asyncio.wait_for(consumer, 5)  # the iterator ends when the client closes
    questions = [e.request_id for e in seen if isinstance(e, QuestionEvent)]
    assert questions == [first["requestId"], second["requestId"]]
    assert len([e for e in seen if isinstance(e, SnapshotEvent)]) == 2  # one per re-subscribe to s1


async def test_async_callbacks_may_answer(daemon: RunningDaemon, make_user: Any) -> None:
    results: list[bool] = []
    holder: dict[str, UserClient] = {}

    async def on_question(event: QuestionEvent) -> None:
        results.append(await holder["user"].answer(event, {event.questions[0].question: "auto"}))

    holder["user"] = await make_user(on_question=on_question)
    asked = await daemon.ask("s1", "alice", [q("Deploy?")])
    r = await daemon.result("s1", asked["requestId"], wait=5)
    assert r.json()["answers"] == {"Deploy?": "auto"}
    await eventually(lambda: results == [True], what="the callback's answer")


async def test_a_refused_token_stops_the_client(daemon: RunningDaemon) -> None:
    client = UserClient(daemon.url, daemon.token("agent"), backoff_base=0.02, backoff_cap=0.1)
    await client.start()
    with pytest.raises(AuthError) as err:
        await client.wait_connected(5)
    assert err.value.status == 403
    await client.close()


async def test_mints_its_token_from_the_local_secret(daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKD_AUTH__SECRET", SECRET)
    async with UserClient(user="alice") as client:  # url from askd.json
        await client.wait_connected(5)
        assert client.url == daemon.ws_url
        conns = (await daemon.admin("GET", "/admin/v1/connections")).json()["connections"]
        assert [c["userId"] for c in conns] == ["alice"]


def test_backoff_is_capped_exponential_with_full_jitter() -> None:
    top = Backoff(base=0.5, cap=4.0, rand=lambda: 1.0)
    assert [top.next() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    top.reset()
    assert top.next() == 0.5
    assert Backoff(base=0.5, cap=4.0, rand=lambda: 0.0).next() == 0.0
    spread = Backoff(base=1.0, cap=1.0)
    delays = [spread.next() for _ in range(200)]
    assert all(0 <= d <= 1.0 for d in delays) and max(delays) - min(delays) > 0.5
