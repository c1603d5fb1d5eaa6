"""Webhook bodies with answer links (spec J): ``links`` in the json body,
the Slack Block Kit message and its URL buttons (followed and posted), and
Standard Webhooks signatures checked by the ``standardwebhooks`` package."""

from __future__ import annotations

import time
from typing import Any

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from askd.channels import links
from askd.channels.webhook import request as webhook
from askd.channels.retry import Retry
from tests.conftest import SECRET, RunningDaemon, q
from tests.system.links.conftest import PUBLIC_URL, local
from tests.support.receiver import Delivery, Receiver, receiver  # noqa: F401  (the fixture)

HOOK_SECRET = "hook-secret-0123456789abcdef"


@pytest.fixture
def notify_settings() -> dict[str, Any]:
    return {}


@pytest.fixture
def public_url() -> str | None:
    return PUBLIC_URL


@pytest.fixture
def settings_overrides(receiver: Receiver, notify_settings: dict[str, Any], public_url: str | None) -> dict[str, Any]:
    notify = {"webhook_url": receiver.url, "webhook_secret": HOOK_SECRET, **notify_settings}
    return {"public_url": public_url, "notify": notify}


@pytest.fixture(autouse=True)
def fast_retry(daemon: RunningDaemon) -> None:
    assert daemon.daemon.notifier is not None
    daemon.daemon.notifier.retry = Retry(base=0.02, cap=0.05)


def claim(url: str) -> links.LinkClaim | None:
    return links.read(SECRET, url.rsplit("/", 1)[1])


def standard_headers(got: Delivery) -> dict[str, str]:
    return {k.lower(): v for k, v in got.headers.items() if k.lower().startswith("webhook-")}


async def test_json_body_holds_each_recipients_links(daemon: RunningDaemon, receiver: Receiver) -> None:
    await daemon.admin("PUT", "/admin/v1/groups/ops", json={"members": ["bob", "carol"]})
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={"to": ["alice", "group:ops"], "questions": [q("Deploy?", "Yes", "No")]},
        headers=daemon.agent_headers,
    )
    rid = r.json()["requestId"]
    [got] = await receiver.wait_for(1)
    body = got.json()
    assert set(body["links"]) == {"alice", "bob", "carol"}
    for user, mine in body["links"].items():
        assert claim(mine["open"]) == links.LinkClaim("s1", rid, user, None)
        assert [o["label"] for o in mine["options"]] == ["Yes", "No"]
        assert [claim(o["url"]) for o in mine["options"]] == [links.LinkClaim("s1", rid, user, i) for i in (0, 1)]
    # carol's "No" answers as carol
    posted = await daemon.http.post(local(daemon, body["links"]["carol"]["options"][1]["url"]), data={"action": "answer"})
    assert posted.status_code == 200
    result = (await daemon.result("s1", rid)).json()
    assert (result["answers"], result["answeredBy"], result["via"]) == ({"Deploy?": "No"}, "carol", "link")


async def test_an_escalation_body_links_only_the_steps_new_members(daemon: RunningDaemon, receiver: Receiver) -> None:
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={"to": ["alice"], "questions": [q("Deploy?")], "escalate": [{"afterSeconds": 0.3, "to": ["bob"]}], "timeoutSeconds": 30},
        headers=daemon.agent_headers,
    )
    assert r.status_code == 201, r.text
    first, second = [d.json() for d in await receiver.wait_for(2)]
    assert set(first["links"]) == {"alice"} and first["links"]["alice"]["options"] == []  # free text: the form only
    assert set(second["links"]) == {"bob"} and second["users"] == ["alice", "bob"]


@pytest.mark.parametrize("notify_settings", [{"format": "slack"}])
async def test_block_kit_buttons_answer_as_the_one_recipient(daemon: RunningDaemon, receiver: Receiver) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No", header="Release")]))["requestId"]
    [got] = await receiver.wait_for(1)
    body = got.json()
    assert set(body) == {"text", "blocks"} and "Deploy?" in body["text"]
    types = [b["type"] for b in body["blocks"]]
    assert types == ["section", "section", "actions"]
    assert "*Release*: Deploy?" in body["blocks"][1]["text"]["text"]
    buttons = body["blocks"][-1]["elements"]
    assert [(b["type"], b["text"]["text"]) for b in buttons] == [("button", "Yes"), ("button", "No"), ("button", "Open")]
    assert [claim(b["url"]) for b in buttons] == [
        links.LinkClaim("s1", rid, "alice", 0), links.LinkClaim("s1", rid, "alice", 1), links.LinkClaim("s1", rid, "alice", None)
    ]
    page = await daemon.http.get(local(daemon, buttons[0]["url"]))  # Slack's unfurler, then the person
    assert page.status_code == 200 and (await daemon.result("s1", rid)).json()["status"] == "pending"
    assert (await daemon.http.post(local(daemon, buttons[0]["url"]), data={"action": "answer"})).status_code == 200
    result = (await daemon.result("s1", rid)).json()
    assert (result["answers"], result["answeredBy"], result["via"]) == ({"Deploy?": "Yes"}, "alice", "link")


@pytest.mark.parametrize("notify_settings", [{"format": "slack"}])
async def test_block_kit_buttons_of_a_team_name_nobody(daemon: RunningDaemon, receiver: Receiver) -> None:
    labels = [f"option {i}" for i in range(7)]
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={"to": ["alice", "bob"], "questions": [q("Which?", *labels)]},
        headers=daemon.agent_headers,
    )
    rid = r.json()["requestId"]
    [got] = await receiver.wait_for(1)
    blocks = got.json()["blocks"]
    assert all(f"option {i}" in blocks[1]["text"]["text"] for i in range(7))  # every option in the text
    buttons = blocks[-1]["elements"]
    assert [b["text"]["text"] for b in buttons] == [*labels[:5], "Open"]  # at most 5 option buttons
    assert all(claim(b["url"]).user_id is None for b in buttons)  # type: ignore[union-attr]
    await daemon.http.post(local(daemon, buttons[4]["url"]), data={"action": "answer"})
    result = (await daemon.result("s1", rid)).json()
    assert (result["answers"], result["answeredBy"], result["via"]) == ({"Which?": "option 4"}, None, "link")


async def test_standard_webhooks_verifier_accepts_and_refuses_an_old_timestamp(daemon: RunningDaemon, receiver: Receiver) -> None:
    receiver.script = [503, 200]
    await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")])
    first, second = await receiver.wait_for(2)
    verifier = Webhook(webhook.standard_key(HOOK_SECRET))
    for got in (first, second):
        assert verifier.verify(got.body, standard_headers(got)) == got.json()
        assert "x-askd-signature" not in got.header_names  # removed: it replayed forever
    assert standard_headers(first)["webhook-id"] == standard_headers(second)["webhook-id"]  # one delivery, retried
    assert standard_headers(first)["webhook-signature"].startswith("v1,")
    # A replay with its timestamp moved: the signature no longer matches.
    moved = {**standard_headers(first), "webhook-timestamp": str(int(time.time()))}
    if moved["webhook-timestamp"] != standard_headers(first)["webhook-timestamp"]:
        with pytest.raises(WebhookVerificationError):
            verifier.verify(first.body, moved)
    # A replay of an old delivery, signed as it was then: too old.
    old = webhook.headers(first.body, HOOK_SECRET, standard_headers(first)["webhook-id"], at=time.time() - 600)
    with pytest.raises(WebhookVerificationError):
        verifier.verify(first.body, {k.lower(): v for k, v in old.items()})
    with pytest.raises(WebhookVerificationError):
        Webhook(webhook.standard_key(HOOK_SECRET + "x")).verify(first.body, standard_headers(first))


@pytest.mark.parametrize("public_url", [None])
@pytest.mark.parametrize("notify_settings", [{"format": "json"}, {"format": "slack"}])
async def test_without_public_url_no_links_are_made(daemon: RunningDaemon, receiver: Receiver) -> None:
    await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")])
    [got] = await receiver.wait_for(1)
    body = got.json()
    assert "links" not in body and "/a/" not in got.body.decode()
    if "blocks" in body:
        [button] = body["blocks"][-1]["elements"]
        assert button["url"] == f"{daemon.url}/?session=s1"


async def test_links_sent_before_revoke_all_die_and_links_sent_after_work(daemon: RunningDaemon, receiver: Receiver) -> None:
    first = (await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    [before] = await receiver.wait_for(1)
    r = await daemon.admin("POST", "/admin/v1/tokens/revoke-all")
    assert r.status_code == 200, r.text
    second = (await daemon.ask("s2", "alice", [q("Deploy?", "Yes", "No")]))["requestId"]
    _, after = await receiver.wait_for(2)
    old, new = before.json()["links"]["alice"], after.json()["links"]["alice"]
    assert claim(new["open"]).epoch == links.epoch_of(r.json()["notBefore"])  # type: ignore[union-attr]
    assert (await daemon.http.get(local(daemon, old["open"]))).status_code == 404
    assert (await daemon.http.post(local(daemon, old["options"][0]["url"]), data={"action": "answer"})).status_code == 404
    assert (await daemon.http.post(local(daemon, new["options"][0]["url"]), data={"action": "answer"})).status_code == 200
    assert (await daemon.result("s1", first)).json()["status"] == "pending"
    assert (await daemon.result("s2", second)).json()["answers"] == {"Deploy?": "Yes"}
