"""An action to approve (protocol section 17) goes through the notification
channels: the webhook's ``json`` body names the action, Slack's and the
mail say that an agent waits, with the links to open (their Approve and
Deny buttons: tests/system/links/test_approval_*.py)."""

from __future__ import annotations

import itertools

from askd.channels import links
from askd.channels.event import event
from askd.channels.mail import message as mail
from askd.channels.slack.message import slack_text
from askd.channels.webhook import request
from tests.support.registry_steps import StepRegistry

ACTION = {"name": "deploy", "arguments": {"env": "prod"}, "summary": "Ship it"}


def test_an_action_is_described_notified_and_linked_without_questions() -> None:
    ids = itertools.count(1)
    reg = StepRegistry(clock=lambda: 1_800_000_000.0, new_id=lambda: f"r{next(ids)}")
    req, _ = reg.ask("s1", "", None, to=("alice", "bob"), action=ACTION, quorum=2)
    description = req.describe()
    body = event(description, "https://askd.example/#s1", ["alice", "bob"])
    assert (body["action"], body["quorum"], body["approvals"]) == (ACTION, 2, []) and "questions" not in body
    for fmt in ("json", "slack", "text"):
        assert request.render(fmt, body)
    assert "alice" in slack_text(body)
    made = links.link_set("https://askd.example/", "secret-0123456789abcdef-0123456789", req, "alice")
    assert made["options"] == [] and made["open"].startswith("https://askd.example/")
    composed = mail.compose(description, inbox="https://askd.example/#s1", links=made)
    assert composed is not None
