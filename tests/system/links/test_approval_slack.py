"""An action to approve through a Slack-format webhook (protocol sections
12 and 17) against a real daemon: Block Kit with the action's name,
summary, preview and arguments, and URL buttons *Approve*, *Deny*, *Open*
whose pages decide nothing until their form is sent; the json body holds
each recipient's approve and deny links."""

from __future__ import annotations

import json
from typing import Any

import pytest

from askd.channels import links
from askd.channels.event import inbox_url
from askd.channels.slack.message import SECTION_CHARS, slack_blocks
from askd.channels.retry import Retry
from askd.receipts import verify
from tests.conftest import SECRET, RunningDaemon
from tests.system.links.conftest import PUBLIC_URL, local
from tests.receipts.test_wire import jwks
from tests.support.receiver import Receiver, receiver  # noqa: F401  (the fixture)

ACTION = {"name": "deploy", "arguments": {"env": "prod"}, "summary": "Ship the **release**", "preview": "`make deploy`"}


@pytest.fixture
def notify_settings() -> dict[str, Any]:
    return {"format": "slack"}


@pytest.fixture
def settings_overrides(receiver: Receiver, notify_settings: dict[str, Any]) -> dict[str, Any]:
    return {"public_url": PUBLIC_URL, "notify": {"webhook_url": receiver.url, **notify_settings}}


@pytest.fixture(autouse=True)
def fast_retry(daemon: RunningDaemon) -> None:
    assert daemon.daemon.notifier is not None
    daemon.daemon.notifier.retry = Retry(base=0.02, cap=0.05)


def claim(url: str) -> links.LinkClaim | None:
    return links.read(SECRET, url.rsplit("/", 1)[1])


async def ask_action(daemon: RunningDaemon, to: list[str], quorum: int = 1) -> str:
    body = {"to": to, "action": ACTION, "quorum": quorum}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


def check_block_kit(body: dict[str, Any]) -> None:
    """Block Kit's rules the message keeps (what Slack refuses otherwise)."""
    assert set(body) == {"text", "blocks"} and isinstance(body["text"], str) and body["text"]
    for block in body["blocks"]:
        if block["type"] == "section":
            assert block["text"]["type"] == "mrkdwn" and 0 < len(block["text"]["text"]) <= SECTION_CHARS
        else:
            assert block["type"] == "actions" and 0 < len(block["elements"]) <= 25
            for b in block["elements"]:
                assert b["type"] == "button" and b["text"]["type"] == "plain_text" and len(b["text"]["text"]) <= 75
                assert b["url"].startswith("https://") and b.get("style") in (None, "primary", "danger")
                assert len(b["action_id"]) <= 255
    ids = [b["action_id"] for blk in body["blocks"] if blk["type"] == "actions" for b in blk["elements"]]
    assert len(ids) == len(set(ids))


async def test_block_kit_approve_deny_open_as_the_one_recipient(daemon: RunningDaemon, receiver: Receiver) -> None:
    rid = await ask_action(daemon, ["alice"])
    [got] = await receiver.wait_for(1)
    body = got.json()
    check_block_kit(body)
    texts = "\n".join(b["text"]["text"] for b in body["blocks"] if b["type"] == "section")
    assert "to approve an action" in texts and "*deploy*: Ship the *release*" in texts
    assert "`make deploy`" in texts and '"env": "prod"' in texts
    buttons = body["blocks"][-1]["elements"]
    assert [(b["text"]["text"], b.get("style")) for b in buttons] == [("Approve", "primary"), ("Deny", "danger"), ("Open", None)]
    assert [claim(b["url"]) for b in buttons] == [
        links.LinkClaim("s1", rid, "alice", links.APPROVE),
        links.LinkClaim("s1", rid, "alice", links.DENY),
        links.LinkClaim("s1", rid, "alice", None),
    ]
    for b in buttons:  # Slack's unfurler fetches each: nothing is decided
        assert (await daemon.http.get(local(daemon, b["url"]))).status_code == 200
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    assert (await daemon.http.post(local(daemon, buttons[0]["url"]), data={"action": "approve"})).status_code == 200
    result = (await daemon.result("s1", rid)).json()
    assert (result["approved"], result["answeredBy"], result["via"]) == (True, "alice", "link")


async def test_a_channel_message_fills_no_quorum_seat_and_own_links_fill_their_persons(
    daemon: RunningDaemon, receiver: Receiver
) -> None:
    """A quorum counts people (protocol section 17): everyone in the channel
    sees its message, so it carries no Approve button, only the inbox; a link
    bound to nobody is refused a seat; each person's own link fills theirs."""
    rid = await ask_action(daemon, ["alice", "bob"], quorum=2)
    [got] = await receiver.wait_for(1)
    body = got.json()
    check_block_kit(body)
    assert any("0 of 2 approvals" in b["text"]["text"] for b in body["blocks"] if b["type"] == "section")
    [button] = body["blocks"][-1]["elements"]
    assert (button["text"]["text"], button["url"]) == ("Open the askd inbox", inbox_url(PUBLIC_URL, "s1"))
    shared = local(daemon, PUBLIC_URL + "a/" + links.mint(SECRET, "s1", rid, None, links.APPROVE))
    opened = await daemon.http.get(shared)  # its page offers no Approve, only the way to one's own inbox
    assert opened.status_code == 200 and "This link is shared" in opened.text
    assert 'value="approve"' not in opened.text and 'value="decline"' in opened.text
    page = await daemon.http.post(shared, data={"action": "approve"})
    assert page.status_code == 403 and "This link is shared" in page.text
    assert (await daemon.result("s1", rid)).json()["approvals"] == []
    for user in ("alice", "bob"):  # their DMs' or e-mails' links
        own = local(daemon, PUBLIC_URL + "a/" + links.mint(SECRET, "s1", rid, user, links.APPROVE))
        assert (await daemon.http.post(own, data={"action": "approve"})).status_code == 200
    result = (await daemon.result("s1", rid)).json()
    assert result["status"] == "answered"
    assert [(a["by"], a["via"]) for a in result["approvals"]] == [("alice", "link"), ("bob", "link")]
    claims = verify(result["receipt"], await jwks(daemon))
    assert (claims["approvals"], claims["approvalsVia"]) == (["alice", "bob"], ["link", "link"])


async def test_a_channel_message_may_end_a_quorum_of_one_naming_nobody(daemon: RunningDaemon, receiver: Receiver) -> None:
    rid = await ask_action(daemon, ["alice", "bob"])
    [got] = await receiver.wait_for(1)
    buttons = got.json()["blocks"][-1]["elements"]
    assert [b["text"]["text"] for b in buttons] == ["Approve", "Deny", "Open"]
    assert all(claim(b["url"]).user_id is None for b in buttons)  # type: ignore[union-attr]
    assert (await daemon.http.post(local(daemon, buttons[0]["url"]), data={"action": "approve"})).status_code == 200
    result = (await daemon.result("s1", rid)).json()
    assert (result["status"], result["answeredBy"], result["via"]) == ("answered", None, "link")
    claims = verify(result["receipt"], await jwks(daemon))
    assert (claims["by"], claims["approvals"], claims["approvalsVia"]) == (None, [], [])


@pytest.mark.parametrize("notify_settings", [{"format": "json"}])
async def test_json_body_holds_approve_and_deny_links(daemon: RunningDaemon, receiver: Receiver) -> None:
    rid = await ask_action(daemon, ["alice", "bob"])
    [got] = await receiver.wait_for(1)
    body = got.json()
    assert body["action"] == ACTION and set(body["links"]) == {"alice", "bob"}
    for user, made in body["links"].items():
        assert made["options"] == []
        assert claim(made["approve"]) == links.LinkClaim("s1", rid, user, links.APPROVE)
        assert claim(made["deny"]) == links.LinkClaim("s1", rid, user, links.DENY)
        assert claim(made["open"]) == links.LinkClaim("s1", rid, user, None)
    assert json.loads(got.body) == body


def test_long_arguments_are_cut_inside_their_code_block() -> None:
    ev = {
        "sessionId": "s1", "requestId": "r1", "to": ["alice"], "users": ["alice"], "expiresAt": "2026-12-02T12:00:00Z",
        "url": "https://askd.example/?session=s1", "quorum": 1, "approvals": [],
        "action": {"name": "deploy", "arguments": {"script": "<@U123> " + "x" * 10_000}},
    }
    body = slack_blocks(ev, {"open": "https://a/o", "options": [], "approve": "https://a/y", "deny": "https://a/n"})
    check_block_kit(body)
    code = body["blocks"][2]["text"]["text"]
    assert code.startswith("```\n") and code.endswith("…\n```") and "<@U123>" not in code  # no mention either
