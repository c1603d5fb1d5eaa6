"""The ``teams`` webhook body (protocol section 20, docs/notify.md): a Teams
message with one Adaptive Card (version 1.4 or later) holding the question
as TextBlocks and an ``Action.OpenUrl`` per one-tap answer, Approve and Deny
for an action, and *Open*; without answer links, one button opens the inbox."""

from __future__ import annotations

import itertools
import json
from typing import Any

from askd.channels import links
from askd.channels.event import event
from askd.channels.webhook import request
from askd.core import Request
from tests.conftest import q
from tests.support.registry_steps import StepRegistry

PUBLIC = "https://askd.example/"
KEY = "secret-0123456789abcdef-0123456789"
INBOX = "https://askd.example/?session=s1"


def asked(questions: list[dict[str, Any]] | None = None, **kw: Any) -> Request:
    ids = itertools.count(1)
    reg = StepRegistry(clock=lambda: 1_800_000_000.0, new_id=lambda: f"r{next(ids)}")
    req, _ = reg.ask("s1", "" if "to" in kw else "alice", questions or [], **kw)
    return req


def card_of(body: bytes) -> dict[str, Any]:
    """The one Adaptive Card, after checking the message around it."""
    message = json.loads(body)
    assert message["type"] == "message"
    [attachment] = message["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive" and attachment["contentUrl"] is None
    card: dict[str, Any] = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["$schema"] == "http://adaptivecards.io/schemas/adaptive-card.json"
    assert tuple(int(n) for n in card["version"].split(".")) >= (1, 4)
    assert all(b["type"] == "TextBlock" and b["wrap"] is True and b["text"] for b in card["body"])
    assert all(a["type"] == "Action.OpenUrl" and a["title"] and a["url"].startswith("https://") for a in card["actions"])
    return card


def buttons(card: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["title"], a["url"]) for a in card["actions"]]


def texts(card: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in card["body"])


def test_one_question_has_an_answer_button_per_option_and_open() -> None:
    req = asked([q("Deploy to **prod**?", "Yes", "No", header="Release")])
    channel = links.link_set(PUBLIC, KEY, req, "alice")
    card = card_of(request.render("teams", event(req.describe(), INBOX, ["alice"]), channel))
    assert buttons(card) == [("Yes", channel["options"][0]["url"]), ("No", channel["options"][1]["url"]), ("Open", channel["open"])]
    assert [links.read(KEY, url.rsplit("/", 1)[1]) for _, url in buttons(card)] == [
        links.LinkClaim("s1", req.request_id, "alice", 0),
        links.LinkClaim("s1", req.request_id, "alice", 1),
        links.LinkClaim("s1", req.request_id, "alice", None),
    ]
    shown = texts(card)
    assert "**alice**" in shown and "session s1" in shown and "Release" in shown and "Deploy to **prod**?" in shown


def test_at_most_five_option_buttons_every_option_in_the_text() -> None:
    labels = [f"option {i}" for i in range(7)]
    req = asked([q("Which?", *labels)])
    channel = links.link_set(PUBLIC, KEY, req, None)
    card = card_of(request.render("teams", event(req.describe(), INBOX, ["alice"]), channel))
    assert [title for title, _ in buttons(card)] == [*labels[:5], "Open"]
    assert all(label in texts(card) for label in labels)


def test_several_questions_or_free_text_only_open() -> None:
    for questions in ([q("Deploy?", "Yes", "No"), q("Why?")], [q("Why?")]):
        req = asked(questions)
        channel = links.link_set(PUBLIC, KEY, req, "alice")
        card = card_of(request.render("teams", event(req.describe(), INBOX, ["alice"]), channel))
        assert buttons(card) == [("Open", channel["open"])]
        assert all(x["question"] in texts(card) for x in questions)


def test_an_action_has_approve_deny_and_open() -> None:
    action = {"name": "deploy", "arguments": {"env": "prod"}, "summary": "Ship it", "preview": "`make deploy`"}
    req = asked(to=("alice", "bob"), action=action, quorum=2)
    channel = links.link_set(PUBLIC, KEY, req, None)
    card = card_of(request.render("teams", event(req.describe(), INBOX, ["alice", "bob"]), channel))
    assert buttons(card) == [("Approve", channel["approve"]), ("Deny", channel["deny"]), ("Open", channel["open"])]
    assert [a.get("style") for a in card["actions"]] == ["positive", "destructive", None]
    shown = texts(card)
    assert "to approve an action" in shown and "deploy" in shown and "Ship it" in shown and '"env": "prod"' in shown
    assert "0 of 2 approvals" in shown


def test_without_answer_links_one_button_opens_the_inbox() -> None:
    req = asked([q("Deploy?", "Yes", "No")])
    card = card_of(request.render("teams", event(req.describe(), INBOX, ["alice"])))
    assert buttons(card) == [("Open the askd inbox", INBOX)]
