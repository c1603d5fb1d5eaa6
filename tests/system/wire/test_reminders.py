"""Reminders (protocol section 20) through the wire: a real daemon (one, or
two nodes on Redis), the test webhook receiver and the real SMTP server.

``everySeconds`` is at least 60 for everyone, so these tests move the core's
clock instead of waiting (``Daemon(clock=...)``): ``jump`` shifts it and
re-arms the deadline timer, as if the time had passed."""

from __future__ import annotations

import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from askd.server.app import Daemon
from tests.conftest import QUIET, RunningDaemon, eventually, q
from tests.support.mailbox import Mailbox, mailbox  # noqa: F401  (the fixture)
from tests.support.receiver import Receiver, receiver  # noqa: F401  (the fixture)
from tests.system.wire.conftest import TwoNodes, daemon_on
from tests.system.wire.test_groups import ask_to

SENDER = "askd@example.com"
REMIND = {"everySeconds": 60, "times": 2}


class Clock:
    """The core's clock: real time, shifted by ``jump``."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def notify_settings() -> dict[str, Any]:
    """Parametrize this name to change the notify section of one test."""
    return {}


@pytest.fixture
def settings_overrides(receiver: Receiver, mailbox: Mailbox, notify_settings: dict[str, Any]) -> dict[str, Any]:
    return {"notify": {"webhook_url": receiver.url, "smtp_url": mailbox.url, "email_from": f"askd <{SENDER}>", **notify_settings}}


@pytest.fixture(params=["sqlite", "memory", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    if request.param == "redis" and shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    return str(request.param)


@pytest.fixture
async def daemon(tmp_path: Path, kind: str, settings_overrides: dict[str, Any], clock: Clock) -> AsyncIterator[RunningDaemon[Daemon]]:
    async with daemon_on(tmp_path, kind, settings_overrides, clock=clock) as running:
        yield running


def nodes(daemon: RunningDaemon[Daemon]) -> tuple[Daemon, ...]:
    return daemon.nodes if isinstance(daemon, TwoNodes) else (daemon.daemon,)


def jump(daemon: RunningDaemon[Daemon], clock: Clock, seconds: float) -> None:
    """As if ``seconds`` passed: the clock moves, each node's deadline
    timer is armed again for it (and fires what came due)."""
    clock.offset += seconds
    for node in nodes(daemon):
        node.hub.clock.close()
        node.hub.flush()


async def addresses(daemon: RunningDaemon, **emails: str) -> None:
    for user, email in emails.items():
        r = await daemon.admin("PUT", f"/admin/v1/users/{user}", json={"email": email})
        assert r.status_code == 200, r.text


def reminders(receiver: Receiver) -> list[dict[str, Any]]:
    return [d.json() for d in receiver.got if "reminder" in d.json()]


def reminder_mails(box: Mailbox) -> list[tuple[str, str]]:
    return sorted((m.to, m.message["Subject"]) for m in box.got if m.message["Subject"].startswith("Reminder: "))


async def has_tab(node: Daemon, user: str) -> bool:
    """Whether the node lists a tab of the user (on any node)."""
    return any(c["userId"] == user for c in await node.hub.connections.listing())


async def test_the_members_with_no_tab_are_reminded_on_every_channel_once_per_reminder(
    daemon: RunningDaemon[Daemon], receiver: Receiver, mailbox: Mailbox, clock: Clock
) -> None:
    await addresses(daemon, alice="alice@example.com", bob="bob@example.com")
    bob = await daemon.connect("bob")
    await bob.subscribe("*")
    for node in nodes(daemon):  # bob's tab is on one node: another learns of it through the store
        await eventually(lambda node=node: has_tab(node, "bob"), what="bob's tab listed on every node")
    asked = await ask_to(daemon, "s1", ["alice", "bob"], remind=REMIND, timeoutSeconds=600)
    rid = asked["requestId"]
    await receiver.wait_for(1)
    await mailbox.wait_for(2)  # the ask's own: to both
    await receiver.quiet(QUIET, 1)
    assert reminders(receiver) == [] and reminder_mails(mailbox) == []

    jump(daemon, clock, 60)
    await receiver.wait_for(2)
    await mailbox.wait_for(3)
    [first] = reminders(receiver)
    assert (first["event"], first["requestId"], first["reminder"], first["users"]) == ("question.asked", rid, 1, ["alice", "bob"])
    assert reminder_mails(mailbox) == [("alice@example.com", "Reminder: A question for you: Deploy?")]  # bob has a tab
    deliveries = [d for d in receiver.got if "reminder" in d.json()]
    assert deliveries[0].headers["Webhook-Id"] == f"msg_{rid}_r1"

    jump(daemon, clock, 60)
    await receiver.wait_for(3)
    await mailbox.wait_for(4)
    assert [r["reminder"] for r in reminders(receiver)] == [1, 2]
    assert len(reminder_mails(mailbox)) == 2

    jump(daemon, clock, 60)  # two times only
    await receiver.quiet(QUIET, 3)
    assert len(mailbox.got) == 4


async def test_a_question_that_ended_sends_none(
    daemon: RunningDaemon[Daemon], receiver: Receiver, mailbox: Mailbox, clock: Clock
) -> None:
    await addresses(daemon, alice="alice@example.com")
    asked = await daemon.ask("s1", "alice", [q("Deploy?")], remind=REMIND)
    await receiver.wait_for(1)
    await mailbox.wait_for(1)
    r = await daemon.http.delete(f"{daemon.url}/v1/sessions/s1/questions/{asked['requestId']}", headers=daemon.agent_headers)
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    jump(daemon, clock, 60)
    jump(daemon, clock, 60)
    await receiver.quiet(QUIET, 1)
    assert len(mailbox.got) == 1


@pytest.mark.parametrize("notify_settings", [{"remind_every_seconds": 60, "remind_times": 1}])
async def test_the_daemons_default_and_null_for_none(
    daemon: RunningDaemon[Daemon], receiver: Receiver, mailbox: Mailbox, clock: Clock
) -> None:
    await daemon.ask("s1", "alice", [q("Deploy?")])  # the default: once, after 60 s
    await daemon.ask("s2", "alice", [q("Deploy?")], remind=None)  # none
    await daemon.ask("s3", "alice", [q("Deploy?")], remind={"everySeconds": 120, "times": 1})  # its own
    await receiver.wait_for(3)
    jump(daemon, clock, 60)
    await receiver.wait_for(4)
    jump(daemon, clock, 60)
    await receiver.wait_for(5)
    jump(daemon, clock, 60)
    await receiver.quiet(QUIET, 5)
    assert [(r["sessionId"], r["reminder"]) for r in reminders(receiver)] == [("s1", 1), ("s3", 1)]


@pytest.mark.parametrize("notify_settings", [{"format": "slack"}])
async def test_a_slack_body_says_reminder(daemon: RunningDaemon[Daemon], receiver: Receiver, clock: Clock) -> None:
    await daemon.ask("s1", "alice", [q("Deploy?")], remind=REMIND)
    await receiver.wait_for(1)
    jump(daemon, clock, 60)
    [_, got] = await receiver.wait_for(2)
    assert got.json()["text"].startswith("Reminder: An agent is waiting for *alice*")
    assert not receiver.got[0].json()["text"].startswith("Reminder")


@pytest.mark.parametrize("kind", ["sqlite"])  # the model's checks: the same on every store
async def test_bad_remind_is_a_clear_400(daemon: RunningDaemon[Daemon]) -> None:
    cases: list[tuple[Any, str]] = [
        ({"everySeconds": 59, "times": 1}, "remind.everySeconds"),
        ({"everySeconds": 60, "times": 0}, "remind.times"),
        ({"everySeconds": 60, "times": 11}, "remind.times"),
        ({"everySeconds": 60, "times": 1.5}, "remind.times"),
        ({"everySeconds": "60", "times": 1}, "remind.everySeconds"),
        ({"everySeconds": True, "times": 1}, "remind.everySeconds"),
        ({"times": 1}, "remind.everySeconds"),
        ({"everySeconds": 60, "times": 1, "at": 3}, "remind.at"),
        ([60, 1], "remind"),
    ]
    for remind, loc in cases:
        r = await daemon.http.post(
            f"{daemon.url}/v1/sessions/s1/questions",
            json={"userId": "alice", "questions": [q("Deploy?")], "remind": remind},
            headers=daemon.agent_headers,
        )
        assert r.status_code == 400, (remind, r.text)
        error = r.json()["error"]
        assert error["code"] == "invalid_request" and error["details"][0]["loc"] == loc, (remind, error)


@pytest.mark.parametrize("kind", ["sqlite"])
async def test_a_restart_sends_the_latest_missed_reminder_once(
    tmp_path: Path, kind: str, settings_overrides: dict[str, Any], receiver: Receiver, mailbox: Mailbox, clock: Clock
) -> None:
    async with daemon_on(tmp_path, kind, settings_overrides, clock=clock) as daemon:
        await addresses(daemon, alice="alice@example.com")
        asked = await daemon.ask("s1", "alice", [q("Deploy?")], remind={"everySeconds": 60, "times": 4}, timeoutSeconds=900)
        await receiver.wait_for(1)
        jump(daemon, clock, 60)
        await receiver.wait_for(2)
        await mailbox.wait_for(2)
    clock.offset += 130  # down through reminders 2 (120 s) and 3 (180 s)
    async with daemon_on(tmp_path, kind, settings_overrides, clock=clock) as daemon:
        await receiver.wait_for(3)
        await mailbox.wait_for(3)
        assert [r["reminder"] for r in reminders(receiver)] == [1, 3]
        assert [m.message["Subject"].startswith("Reminder: ") for m in mailbox.got] == [False, True, True]
    async with daemon_on(tmp_path, kind, settings_overrides, clock=clock) as daemon:  # reminder 3 was sent: its claim holds
        await receiver.quiet(QUIET, 3)
        assert len(mailbox.got) == 3
        jump(daemon, clock, 60)  # 250 s: reminder 4 (240 s)
        await receiver.wait_for(4)
        assert [r["reminder"] for r in reminders(receiver)] == [1, 3, 4]
        r = await daemon.result("s1", asked["requestId"])
        assert r.json()["status"] == "pending"
