"""The Slack app (spec R) against a real daemon and a local fake of Slack's
Web API, through Slack's own SDK: one post in the channel and one direct
message per member with a Slack id; every message edited once when the
question ends, saying how; escalation steps and reminders in the channel
message's thread; retries that honour Retry-After and post nothing twice;
and no Slack can delay or fail an ask."""

from __future__ import annotations

import asyncio
import io
import time
from typing import Any

import pytest

from askd.channels import links
from askd.channels.channel import REMINDER, Notice
from tests.conftest import QUIET, SECRET, RunningDaemon, log_text, q  # noqa: F401  (log_text: the fixture)
from tests.system.links.conftest import PUBLIC_URL, local
from tests.channels.slack.conftest import slack_ids
from tests.support.slack_api import SLOW, TOKEN, ApiCall, FakeSlack
from tests.system.wire.test_groups import ask_to

# The asks let the asking process's own host relay: _answer and _decline do (protocol section 5).
HOST_KEY = "the-asking-process-own-host-key-0123456789"

QUESTION = q("Ship v2?", "Yes", "No")


def link_user(url: str) -> str | None:
    claim = links.read(SECRET, url.rsplit("/", 1)[1])
    assert claim is not None, url
    return claim.user_id


def where(c: ApiCall) -> tuple[str, str]:
    assert c.answered is not None
    return c.answered["channel"], c.answered["ts"]


async def posted(daemon: RunningDaemon, fake: FakeSlack, n: int) -> list[ApiCall]:
    """``n`` posts, and no more."""
    got = await fake.wait_for("chat.postMessage", n)
    await fake.quiet(QUIET, "chat.postMessage", n)
    return got


async def test_one_post_in_the_channel_and_one_direct_message_per_member_with_an_id(daemon: RunningDaemon, fake_slack: FakeSlack) -> None:
    await slack_ids(daemon, alice="U0ALICE", bob="U0BOB")  # carol has none
    await ask_to(daemon, "s1", ["alice", "bob", "carol"], questions=[QUESTION], hostKey=HOST_KEY)
    got = {c.args["channel"]: c for c in await posted(daemon, fake_slack, 3)}
    assert set(got) == {"C0ASKD", "U0ALICE", "U0BOB"}
    for to, c in got.items():
        assert "Ship v2?" in c.text and "thread_ts" not in c.args
        assert [b["text"]["text"] for b in c.buttons] == ["Yes", "No", "Open"]
        # The channel is shared: its links name no one; a direct message's name its reader.
        expected = {"C0ASKD": None, "U0ALICE": "alice", "U0BOB": "bob"}[to]
        assert {link_user(b["url"]) for b in c.buttons} == {expected}
    assert got["U0ALICE"].answered is not None and got["U0ALICE"].answered["channel"] == "D0ALICE"
    assert (await daemon.admin("GET", "/admin/v1/users/alice")).json() == {"user": "alice", "email": None, "slack": "U0ALICE"}


async def _answer(d: RunningDaemon, rid: str) -> None:
    body = {"answers": {"Ship v2?": "Yes"}, "answeredBy": "alice", "hostKey": HOST_KEY}
    r = await d.http.post(f"{d.url}/v1/sessions/s1/questions/{rid}/answer", json=body, headers=d.agent_headers)
    assert r.status_code == 200, r.text


async def _decline(d: RunningDaemon, rid: str) -> None:
    body = {"reason": "not today", "answeredBy": "bob", "hostKey": HOST_KEY}
    r = await d.http.post(f"{d.url}/v1/sessions/s1/questions/{rid}/decline", json=body, headers=d.agent_headers)
    assert r.status_code == 200, r.text


async def _withdraw(d: RunningDaemon, rid: str) -> None:
    r = await d.http.delete(f"{d.url}/v1/sessions/s1/questions/{rid}", headers=d.agent_headers)
    assert r.status_code == 200, r.text


async def _time_out(d: RunningDaemon, rid: str) -> None:
    return None  # asked with a one-second timeout


ENDS: dict[str, Any] = {
    "answered": (_answer, ["*Answered* by *alice*:", "• *Ship v2?*: Yes"]),
    "declined": (_decline, ["*Declined* by *bob*: not today"]),
    "withdrawn": (_withdraw, ["*Withdrawn* by the agent."]),
    "timeout": (_time_out, ["*Timed out* with no answer."]),
}


@pytest.mark.parametrize("end", list(ENDS))
async def test_every_message_is_edited_once_when_the_question_ends(daemon: RunningDaemon, fake_slack: FakeSlack, end: str) -> None:
    await slack_ids(daemon, alice="U0ALICE", bob="U0BOB")
    how, says = ENDS[end]
    asked = await ask_to(daemon, "s1", ["alice", "bob"], questions=[QUESTION], hostKey=HOST_KEY, timeoutSeconds=1 if end == "timeout" else 60)
    posts = await fake_slack.wait_for("chat.postMessage", 3)
    await how(daemon, asked["requestId"])
    updates = await fake_slack.wait_for("chat.update", 3)
    await fake_slack.quiet(QUIET, "chat.update", 3)
    assert sorted(map(where, updates)) == sorted(map(where, posts))  # each message once
    for u in updates:
        assert u.buttons == [] and "Ship v2?" in u.text, u.args  # the question stays, its buttons go
        for line in says:
            assert line in u.text, (line, u.text)
    assert len(fake_slack.posts) == 3


async def test_a_post_that_lands_after_the_end_edits_itself(daemon: RunningDaemon, fake_slack: FakeSlack) -> None:
    fake_slack.script = [(SLOW, 0.6)]
    asked = await ask_to(daemon, "s1", ["alice"], questions=[QUESTION], hostKey=HOST_KEY)
    await asyncio.sleep(0.2)  # the post is on its way
    await _answer(daemon, asked["requestId"])
    [post] = await fake_slack.wait_for("chat.postMessage", 1)
    [update] = await fake_slack.wait_for("chat.update", 1)
    assert where(update) == where(post) and "*Answered* by *alice*" in update.text
    await fake_slack.quiet(QUIET, "chat.update", 1)


async def test_an_escalation_step_replies_in_the_thread_and_messages_its_newcomers(daemon: RunningDaemon, fake_slack: FakeSlack) -> None:
    await slack_ids(daemon, alice="U0ALICE", bob="U0BOB")
    asked = await ask_to(daemon, "s1", ["alice"], questions=[QUESTION], hostKey=HOST_KEY, escalate=[{"afterSeconds": 0.5, "to": ["bob"]}])
    first = await fake_slack.wait_for("chat.postMessage", 2)
    root = next(c for c in first if c.args["channel"] == "C0ASKD")
    got = await posted(daemon, fake_slack, 4)
    reply = next(c for c in got[2:] if c.args["channel"] == "C0ASKD")
    assert reply.args["thread_ts"] == where(root)[1]
    assert "Escalated (step 1): now also asking *bob*." in reply.text
    [dm] = [c for c in got[2:] if c.args["channel"] == "U0BOB"]
    assert "Ship v2?" in dm.text and {link_user(b["url"]) for b in dm.buttons} == {"bob"}
    await _answer(daemon, asked["requestId"])
    updates = await fake_slack.wait_for("chat.update", 4)
    assert sorted(map(where, updates)) == sorted(map(where, got))


async def test_a_reminder_replies_in_the_thread_and_messages_the_reminded(daemon: RunningDaemon, fake_slack: FakeSlack) -> None:
    await slack_ids(daemon, alice="U0ALICE", bob="U0BOB")
    asked = await ask_to(daemon, "s1", ["alice", "bob"], questions=[QUESTION], hostKey=HOST_KEY)
    first = await fake_slack.wait_for("chat.postMessage", 3)
    root = next(c for c in first if c.args["channel"] == "C0ASKD")
    req = daemon.daemon.hub.get("s1", asked["requestId"])
    assert req is not None and daemon.daemon.slack is not None
    assert daemon.daemon.slack.submit(Notice(req, ["alice", "bob"], ["bob"], REMINDER, reminder=1))
    got = await posted(daemon, fake_slack, 5)
    later = got[3:]
    reply = next(c for c in later if c.args["channel"] == "C0ASKD")
    assert reply.args["thread_ts"] == where(root)[1] and "Reminder 1: still waiting for an answer from *bob*." in reply.text
    [dm] = [c for c in later if c.args["channel"] != "C0ASKD"]
    assert dm.args["channel"] == "U0BOB" and "Reminder 1" in dm.text and "Ship v2?" in dm.text
    await _answer(daemon, asked["requestId"])
    updates = await fake_slack.wait_for("chat.update", 5)
    assert sorted(map(where, updates)) == sorted(map(where, got))


async def test_a_rate_limit_waits_its_retry_after_and_posts_once(daemon: RunningDaemon, fake_slack: FakeSlack) -> None:
    fake_slack.script = [(429, 1), "internal_error"]
    await ask_to(daemon, "s1", ["alice"], questions=[QUESTION], hostKey=HOST_KEY)
    await fake_slack.wait_for("chat.postMessage", 1, timeout=8)
    await fake_slack.quiet(QUIET, "chat.postMessage", 1)
    assert len(fake_slack.calls) == 3  # the 429, the error Slack says to try again after, the post
    assert fake_slack.calls[1].at - fake_slack.calls[0].at >= 0.95  # Retry-After: 1


async def test_an_error_slack_will_not_change_is_not_tried_again(daemon: RunningDaemon, fake_slack: FakeSlack) -> None:
    fake_slack.script = ["channel_not_found"]
    await ask_to(daemon, "s1", ["alice"], questions=[QUESTION], hostKey=HOST_KEY)
    await asyncio.sleep(QUIET * 2)
    assert [c.method for c in fake_slack.calls] == ["chat.postMessage"] and fake_slack.posts == []


@pytest.mark.parametrize("notify_settings", [{"slack_api_url": "http://127.0.0.1:9/api/"}], indirect=True)
async def test_no_slack_delays_or_fails_an_ask(daemon: RunningDaemon, log_text: io.StringIO) -> None:  # noqa: F811
    started = time.monotonic()
    asked = await ask_to(daemon, "s1", ["alice"], questions=[QUESTION], hostKey=HOST_KEY)
    assert time.monotonic() - started < 1.0
    await _answer(daemon, asked["requestId"])
    assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "answered"
    await asyncio.sleep(QUIET)
    assert "slack.retry" in log_text.getvalue() or "slack.failed" in log_text.getvalue()


async def test_the_token_is_never_logged(daemon: RunningDaemon, fake_slack: FakeSlack, log_text: io.StringIO) -> None:  # noqa: F811
    fake_slack.script = ["invalid_auth"]
    asked = await ask_to(daemon, "s1", ["alice"], questions=[QUESTION], hostKey=HOST_KEY)
    await fake_slack.wait_for("chat.postMessage", 0)
    await asyncio.sleep(QUIET)
    await _answer(daemon, asked["requestId"])
    await asyncio.sleep(QUIET)
    text = log_text.getvalue()
    assert "slack.failed" in text and TOKEN not in text and TOKEN.split("-")[-1] not in text


async def test_an_action_to_approve_has_its_buttons_and_says_who_approved(daemon: RunningDaemon, fake_slack: FakeSlack) -> None:
    await slack_ids(daemon, alice="U0ALICE")
    body = {"to": ["alice"], "action": {"name": "deploy", "arguments": {"env": "prod"}, "summary": "Ship it"}, "hostKey": HOST_KEY}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    posts = await posted(daemon, fake_slack, 2)
    for c in posts:
        assert [b["text"]["text"] for b in c.buttons] == ["Approve", "Deny", "Open"] and "*deploy*: Ship it" in c.text
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions/{r.json()['requestId']}/approve",
        json={"answeredBy": "alice", "hostKey": HOST_KEY},
        headers=daemon.agent_headers,
    )
    assert r.status_code == 200, r.text
    updates = await fake_slack.wait_for("chat.update", 2)
    assert all(u.buttons == [] and "*Approved* by *alice*." in u.text for u in updates)



async def test_a_quorum_of_two_has_no_buttons_in_the_channel_and_each_dm_fills_its_persons_seat(
    daemon: RunningDaemon, fake_slack: FakeSlack
) -> None:
    """A quorum counts people (protocol section 17): the channel's message,
    which everyone there sees, only opens the inbox; each direct message's
    links name their reader and fill that person's seat."""
    await slack_ids(daemon, alice="U0ALICE", bob="U0BOB")
    body = {"to": ["alice", "bob"], "quorum": 2, "action": {"name": "deploy", "arguments": {"env": "prod"}}}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    rid = r.json()["requestId"]
    got = {c.args["channel"]: c for c in await posted(daemon, fake_slack, 3)}
    assert [(b["text"]["text"], b["url"]) for b in got["C0ASKD"].buttons] == [("Open the askd inbox", f"{PUBLIC_URL}?session=s1")]
    for to, user in (("U0ALICE", "alice"), ("U0BOB", "bob")):
        approve = got[to].buttons[0]
        assert approve["text"]["text"] == "Approve" and link_user(approve["url"]) == user
        assert (await daemon.http.post(local(daemon, approve["url"]), data={"action": "approve"})).status_code == 200
    done = (await daemon.result("s1", rid)).json()
    assert [(a["by"], a["via"]) for a in done["approvals"]] == [("alice", "link"), ("bob", "link")] and done["approved"] is True
