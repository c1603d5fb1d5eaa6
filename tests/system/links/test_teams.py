"""The ``teams`` webhook format against a real daemon (protocol section 20):
the receiver gets a Teams message with one Adaptive Card whose
``Action.OpenUrl`` buttons are the answer links (followed and posted here as
Teams would open them), Approve/Deny/Open for an action, and only *Open*
for a shared channel's free-text question."""

from __future__ import annotations

import json
from typing import Any

import pytest

from askd.channels import links
from tests.conftest import RunningDaemon, q
from tests.system.links.conftest import PUBLIC_URL, claim, local
from tests.support.receiver import Receiver, receiver  # noqa: F401  (the fixture)

CARD = "application/vnd.microsoft.card.adaptive"


pytestmark = pytest.mark.usefixtures("fast_webhook_retry")


@pytest.fixture
def settings_overrides(receiver: Receiver) -> dict[str, Any]:
    return {"public_url": PUBLIC_URL, "notify": {"webhook_url": receiver.url, "format": "teams"}}


def card(body: dict[str, Any]) -> dict[str, Any]:
    assert body["type"] == "message" and [a["contentType"] for a in body["attachments"]] == [CARD]
    content: dict[str, Any] = body["attachments"][0]["content"]
    assert content["type"] == "AdaptiveCard" and tuple(map(int, content["version"].split("."))) >= (1, 4)
    assert all(a["type"] == "Action.OpenUrl" for a in content["actions"])
    return content


async def test_the_card_buttons_answer_as_the_one_recipient(daemon: RunningDaemon, receiver: Receiver) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No", header="Release")]))["requestId"]
    [got] = await receiver.wait_for(1)
    assert got.headers["Content-Type"] == "application/json"
    c = card(got.json())
    assert "Deploy?" in json.dumps(c["body"]) and "Release" in json.dumps(c["body"])
    actions = c["actions"]
    assert [a["title"] for a in actions] == ["Yes", "No", "Open"]
    assert [claim(a["url"]) for a in actions] == [
        links.LinkClaim("s1", rid, "alice", 0), links.LinkClaim("s1", rid, "alice", 1), links.LinkClaim("s1", rid, "alice", None)
    ]
    page = await daemon.http.get(local(daemon, actions[1]["url"]))  # opening decides nothing
    assert page.status_code == 200 and (await daemon.result("s1", rid)).json()["status"] == "pending"
    assert (await daemon.http.post(local(daemon, actions[1]["url"]), data={"action": "answer"})).status_code == 200
    result = (await daemon.result("s1", rid)).json()
    assert (result["answers"], result["answeredBy"], result["via"]) == ({"Deploy?": "No"}, "alice", "link")


async def test_an_action_has_approve_deny_open(daemon: RunningDaemon, receiver: Receiver) -> None:
    body = {"to": ["alice"], "action": {"name": "deploy", "arguments": {"env": "prod"}, "summary": "Ship it"}}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    rid = r.json()["requestId"]
    [got] = await receiver.wait_for(1)
    actions = card(got.json())["actions"]
    assert [(a["title"], a.get("style")) for a in actions] == [("Approve", "positive"), ("Deny", "destructive"), ("Open", None)]
    assert [claim(a["url"]) for a in actions] == [
        links.LinkClaim("s1", rid, "alice", links.APPROVE),
        links.LinkClaim("s1", rid, "alice", links.DENY),
        links.LinkClaim("s1", rid, "alice", None),
    ]


async def test_a_free_text_question_of_two_people_has_only_open(daemon: RunningDaemon, receiver: Receiver) -> None:
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions", json={"to": ["alice", "bob"], "questions": [q("Why?")]}, headers=daemon.agent_headers
    )
    rid = r.json()["requestId"]
    [got] = await receiver.wait_for(1)
    [open_] = card(got.json())["actions"]
    assert open_["title"] == "Open" and claim(open_["url"]) == links.LinkClaim("s1", rid, None, None)  # a shared channel: nobody named


async def test_a_quorum_of_two_card_has_only_the_inbox(daemon: RunningDaemon, receiver: Receiver) -> None:
    """A card everyone in the channel sees fills no quorum seat (protocol section 17)."""
    body = {"to": ["alice", "bob"], "quorum": 2, "action": {"name": "deploy", "arguments": {"env": "prod"}}}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    [got] = await receiver.wait_for(1)
    assert [(a["title"], a["url"]) for a in card(got.json())["actions"]] == [("Open the askd inbox", f"{PUBLIC_URL}?session=s1")]
