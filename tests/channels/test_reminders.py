"""A reminder (protocol section 20) through the channels' parts: its claims
are its own (one per reminder, apart from the question's and its steps'),
its bodies and mails say it is a reminder, and the webhook and mail channels
make one delivery of it for the people it is about."""

from __future__ import annotations

import itertools
import json
from email.headerregistry import Address
from typing import Any

from askd.channels.event import event
from askd.channels.mail import message as mail
from askd.channels.mail.smtp import smtp_target
from askd.channels.slack.message import slack_blocks, slack_text
from askd.channels.webhook import request
from askd.channels.channel import ASKED, REMINDER, OnceKey, Notice
from askd.channels.mail.channel import MailChannel
from askd.channels.webhook.channel import WebhookChannel
from tests.support.registry_steps import StepRegistry

QS = [{"question": "Deploy?", "header": "Release", "options": [{"label": "Yes"}, {"label": "No"}]}]


def asked() -> Any:
    ids = itertools.count(1)
    reg = StepRegistry(clock=lambda: 1_800_000_000.0, new_id=lambda: f"r{next(ids)}")
    req, _ = reg.ask("s1", "", QS, to=("alice", "bob"), remind=(60.0, 3))
    return req


def test_each_reminder_has_claims_of_its_own() -> None:
    req = asked()
    assert OnceKey.of("notify", req, 0).key == "notify:r1:0"
    assert OnceKey.of("remind", req, 0, reminder=2).key == "remind:r1:r2"
    assert OnceKey.of("mail", req, 0, "bob", reminder=2).key == "mail:r1:r2:bob"
    assert OnceKey.of("mail", req, 0, "bob").key == "mail:r1:0:bob"


def test_bodies_and_subjects_say_reminder() -> None:
    req = asked()
    body = event(req.describe(), "https://askd.example/?session=s1", ["alice", "bob"], reminder=2)
    assert body["reminder"] == 2
    assert "reminder" not in event(req.describe(), "https://askd.example/?session=s1", ["alice", "bob"])
    assert slack_text(body).startswith("Reminder: An agent is waiting for *alice, bob*")
    assert slack_blocks(body, None)["blocks"][0]["text"]["text"].startswith("Reminder: ")
    card = json.loads(request.render("teams", body))["attachments"][0]["content"]
    assert card["body"][0]["text"].startswith("Reminder: An agent is waiting")
    composed = mail.compose(req.describe(), inbox="https://askd.example/?session=s1")
    again = mail.reminder(composed, "en")
    assert again.subject == "Reminder: A question for you: Release"
    assert (again.text, again.html) == (composed.text, composed.html)
    assert mail.reminder(composed, "zh-CN").subject.startswith("提醒：")


async def test_the_channels_make_one_delivery_of_a_reminder_for_those_it_is_about() -> None:
    req = asked()
    hook = WebhookChannel(
        url="https://hooks.example/x", fmt="json", secret=None, timeout=1, link_base="https://askd.example/",
        metrics=None, delivered=lambda sid, rid: None,  # type: ignore[arg-type]
    )
    [d] = hook.prepare(Notice(req, ["alice", "bob"], ["bob"], kind=REMINDER, reminder=1))
    body, msg_id = d.payload
    assert json.loads(body)["reminder"] == 1
    assert (msg_id, d.claim.key) == ("msg_r1_r1", "remind:r1:r1")  # type: ignore[union-attr]
    [first] = hook.prepare(Notice(req, ["alice", "bob"], ["alice", "bob"], kind=ASKED))
    assert (first.payload[1], first.claim.key) == ("msg_r1_0", "notify:r1:0")  # type: ignore[union-attr]
    await hook.aclose()

    async def addresses(users: Any) -> dict[str, str]:
        return {u: f"{u}@example.com" for u in users}

    mailer = MailChannel(
        target=smtp_target("smtp://127.0.0.1:1"), sender=Address("askd", addr_spec="askd@example.com"),
        timeout=1, link_base="https://askd.example/", addresses=addresses, metrics=None,  # type: ignore[arg-type]
    )
    notice = Notice(req, ["alice", "bob"], ["bob"], kind=REMINDER, reminder=3)
    [m] = await mailer.deliveries(mailer.prepare(notice), notice)
    assert (m.payload.user, m.claim.key) == ("bob", "mail:r1:r3:bob")  # type: ignore[union-attr]
    assert m.payload.content.subject == "Reminder: A question for you: Release"
