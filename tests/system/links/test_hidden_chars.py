"""Characters a person cannot see, wherever askd sends a question or an
action out (protocol sections 12, 17 and 20), against a real daemon: the
answer-link page, the Slack and Teams webhook messages, and the e-mail
through a real SMTP server each show a "Trojan Source" command's
bidirectional controls as marks (``⟨U+2067⟩``) under a warning line, and
hold none of the characters themselves; the buttons stay what they were."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from askd.channels.retry import Retry
from askd.protocol.visible import HIDDEN
from tests.conftest import QUIET, RunningDaemon
from tests.system.links.conftest import PUBLIC_URL, link, local
from tests.support.mailbox import Mailbox, mailbox  # noqa: F401  (the fixture)
from tests.support.receiver import Receiver, receiver  # noqa: F401  (the fixture)

RLI, PDI, ZWSP = "\u2067", "\u2069", "\u200b"
TROJAN = f"cat README.md {RLI}; echo PWNED #{PDI}"
SHOWN = "cat README.md ⟨U+2067⟩; echo PWNED #⟨U+2069⟩"
ACTION = {"name": "Bash", "arguments": {"command": TROJAN}, "preview": TROJAN}
WARNING = "This text has hidden or reordering characters: each is shown as a ⟨U+…⟩ mark."
BADGE = '<span class="hidden-char">{}</span>'


def holds_hidden(text: str) -> bool:
    return any(ord(c) in HIDDEN for c in text)


@pytest.fixture
def notify_format() -> str:
    return "json"


@pytest.fixture
def settings_overrides(mailbox: Mailbox, receiver: Receiver, notify_format: str) -> dict[str, Any]:
    notify = {
        "smtp_url": mailbox.url,
        "email_from": "askd <askd@example.com>",
        "timeout_seconds": 0.8,
        "webhook_url": receiver.url,
        "format": notify_format,
    }
    return {"public_url": PUBLIC_URL, "notify": notify}


@pytest.fixture(autouse=True)
def fast_retry(daemon: RunningDaemon) -> None:
    assert daemon.daemon.mailer is not None and daemon.daemon.notifier is not None
    daemon.daemon.mailer.retry = Retry(attempts=3, base=0.02, cap=0.05)
    daemon.daemon.notifier.retry = Retry(base=0.02, cap=0.05)


async def ask(daemon: RunningDaemon, body: dict[str, Any]) -> str:
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json={"userId": "alice", **body}, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


async def test_the_approval_link_page_shows_the_controls_as_badges(daemon: RunningDaemon) -> None:
    rid = await ask(daemon, {"action": {**ACTION, "name": f"Bash{ZWSP}"}})
    page = await daemon.http.get(link(daemon, "s1", rid))
    assert page.status_code == 200
    html = page.text
    assert not holds_hidden(html)
    assert f'<p class="hidden-warning" role="note">{WARNING}</p>' in html
    assert f"<h2>Bash{BADGE.format('⟨U+200B⟩')}</h2>" in html
    command = f"cat README.md {BADGE.format('⟨U+2067⟩')}; echo PWNED #{BADGE.format('⟨U+2069⟩')}"
    assert f'<div class="md preview"><p>{command}</p>' in html  # the preview
    assert f"&quot;command&quot;: &quot;{command}&quot;" in html  # the arguments
    zh = await daemon.http.get(link(daemon, "s1", rid), headers={"Accept-Language": "zh-CN"})
    assert "此文本含有隐藏字符或改变文字方向的字符" in zh.text
    # Approving through the page approves the arguments as asked.
    assert (await daemon.http.post(link(daemon, "s1", rid), data={"action": "approve"})).status_code == 200
    assert (await daemon.result("s1", rid)).json()["arguments"] == {"command": TROJAN}


async def test_the_question_link_page_shows_them_in_a_question_and_its_options(daemon: RunningDaemon) -> None:
    question = {"question": f"Run `{TROJAN}`?", "header": f"Re{ZWSP}lease", "options": [{"label": "Yes", "description": f"go{PDI}"}, {"label": "No"}]}
    rid = await ask(daemon, {"questions": [question]})
    html = (await daemon.http.get(link(daemon, "s1", rid))).text
    assert not holds_hidden(html)
    assert 'class="hidden-warning"' in html
    assert f"<legend>Re{BADGE.format('⟨U+200B⟩')}lease</legend>" in html
    assert f"<code>cat README.md {BADGE.format('⟨U+2067⟩')}; echo PWNED #{BADGE.format('⟨U+2069⟩')}</code>" in html
    assert f"go{BADGE.format('⟨U+2069⟩')}" in html
    plain = (await daemon.http.get(link(daemon, "s1", await ask(daemon, {"questions": [{"question": "Deploy?"}]})))).text
    assert "hidden-warning" not in plain and "hidden-char" not in plain


async def test_the_mail_shows_them_marked_in_both_parts(daemon: RunningDaemon, mailbox: Mailbox, receiver: Receiver) -> None:
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": "alice@example.com"})
    assert r.status_code == 200, r.text
    await ask(daemon, {"action": {**ACTION, "name": f"Bash{RLI}x"}})
    [m] = await mailbox.wait_for(1)
    await mailbox.quiet(QUIET, 1)
    assert m.message["Subject"] == "Approve an action: Bash⟨U+2067⟩x"
    text, html = m.part("plain"), m.part("html")
    assert not holds_hidden(text) and not holds_hidden(html)
    assert f"! {WARNING}" in text and f">{WARNING}</p>" in html
    assert SHOWN in text and f'"command": "{SHOWN}"' in text
    assert SHOWN in html and f"&quot;command&quot;: &quot;{SHOWN}&quot;" in html


@pytest.mark.parametrize("notify_format", ["slack"])
async def test_the_slack_message_shows_them_marked(daemon: RunningDaemon, receiver: Receiver) -> None:
    await ask(daemon, {"action": ACTION})
    [got] = await receiver.wait_for(1)
    body = got.json()
    assert not holds_hidden(got.body.decode())
    sections = [b["text"]["text"] for b in body["blocks"] if b["type"] == "section"]
    assert sections[1] == f":warning: *{WARNING}*"  # under the intro, above the action
    assert f"*Bash*" in sections[2] and SHOWN in "\n".join(sections[2:])
    assert f'"command": "{SHOWN}"' in "\n".join(sections)
    assert f":warning: *{WARNING}*" in body["text"]
    assert [b["text"]["text"] for b in body["blocks"][-1]["elements"]] == ["Approve", "Deny", "Open"]


@pytest.mark.parametrize("notify_format", ["teams"])
async def test_the_teams_card_shows_them_marked(daemon: RunningDaemon, receiver: Receiver) -> None:
    await ask(daemon, {"questions": [{"question": f"Run {TROJAN}?", "options": [{"label": "Yes", "description": f"go{ZWSP}"}, {"label": "No"}]}]})
    [got] = await receiver.wait_for(1)
    card = got.json()["attachments"][0]["content"]
    assert not holds_hidden(got.body.decode())
    texts = [b["text"] for b in card["body"]]
    assert {"type": "TextBlock", "text": WARNING, "wrap": True, "weight": "Bolder", "color": "Attention"} == card["body"][1]
    assert f"Run {SHOWN}?" in texts and "- **Yes**: go⟨U+200B⟩\n- **No**" in texts
    assert [a["title"] for a in card["actions"]] == ["Yes", "No", "Open"]


async def test_a_plain_question_gets_no_warning(daemon: RunningDaemon, mailbox: Mailbox, receiver: Receiver) -> None:
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": "alice@example.com"})
    assert r.status_code == 200, r.text
    await ask(daemon, {"questions": [{"question": "Deploy?", "options": [{"label": "Yes"}]}]})
    [m] = await mailbox.wait_for(1)
    assert "hidden" not in m.part("plain") and "hidden" not in m.part("html")
    [got] = await receiver.wait_for(1)
    assert "hidden" not in json.dumps(got.json())
    assert re.search(r"⟨U\+", json.dumps(got.json(), ensure_ascii=False)) is None
