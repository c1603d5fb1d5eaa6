"""An action to approve by e-mail through a real SMTP server (protocol
sections 12 and 17): the action's name, summary and preview (Markdown
source in the text part, rendered safely in the HTML), its arguments as
JSON, and the recipient's *Approve*, *Deny* and *Open* links: buttons in
the HTML part, links in the text part, each opening a page that decides
nothing until its form is sent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from askd.channels import links
from askd.channels.retry import Retry
from tests.conftest import QUIET, SECRET, RunningDaemon
from tests.system.links.conftest import PUBLIC_URL, local
from tests.support.mailbox import Mailbox, mailbox  # noqa: F401  (the fixture)

ACTION = {
    "name": "deploy",
    "arguments": {"env": "prod", "replicas": 3},
    "summary": "Ship **v2** <img src=https://tracker.example/x.png>",
    "preview": "```diff\n-v1\n+v2\n```",
}


@pytest.fixture
def settings_overrides(mailbox: Mailbox) -> dict[str, Any]:
    notify = {"smtp_url": mailbox.url, "email_from": "askd <askd@example.com>", "timeout_seconds": 0.8}
    return {"public_url": PUBLIC_URL, "notify": notify}


@pytest.fixture(autouse=True)
def fast_retry(daemon: RunningDaemon) -> None:
    assert daemon.daemon.mailer is not None
    daemon.daemon.mailer.retry = Retry(attempts=3, base=0.02, cap=0.05)


async def test_each_recipient_gets_approve_deny_open(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    for user in ("alice", "bob"):
        r = await daemon.admin("PUT", f"/admin/v1/users/{user}", json={"email": f"{user}@example.com"})
        assert r.status_code == 200, r.text
    body = {"to": ["alice", "bob"], "action": ACTION, "quorum": 2}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    rid = r.json()["requestId"]
    got = await mailbox.wait_for(2)
    await mailbox.quiet(QUIET, 2)
    by_user = {m.rcpt_tos[0].split("@")[0]: m for m in got}
    assert set(by_user) == {"alice", "bob"}
    for user, m in by_user.items():
        assert m.message["Subject"] == "Approve an action: deploy"
        text, html = m.part("plain"), m.part("html")
        assert "Ship **v2**" in text and "+v2" in text and '"replicas": 3' in text and "0 of 2 approvals" in text
        assert "<strong>v2</strong>" in html and 'class="diff-add"' in html  # rendered as the link page renders it
        assert "<img" not in html and "&quot;replicas&quot;: 3" in html
        found = re.findall(r"^(Approve|Deny|Answer in your browser): (\S+)$", text, re.M)
        assert [label for label, _ in found] == ["Approve", "Deny", "Answer in your browser"]
        claims = [links.read(SECRET, url.rsplit("/", 1)[1]) for _, url in found]
        assert claims == [
            links.LinkClaim("s1", rid, user, links.APPROVE),
            links.LinkClaim("s1", rid, user, links.DENY),
            links.LinkClaim("s1", rid, user, None),
        ]
        buttons = re.findall(r'<a href="([^"]+)" style="[^"]*background:#0969da[^"]*">([^<]+)</a>', html)
        assert [(label, url) for url, label in buttons] == [(label, url) for label, url in found]
    # Opening a mailed link (a mail scanner) decides nothing; each user's form does.
    approve = {u: local(daemon, re.findall(r"^Approve: (\S+)$", m.part("plain"), re.M)[0]) for u, m in by_user.items()}
    for url in approve.values():
        assert (await daemon.http.get(url)).status_code == 200
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    for user in ("alice", "bob"):
        assert (await daemon.http.post(approve[user], data={"action": "approve"})).status_code == 200
    result = (await daemon.result("s1", rid)).json()
    assert result["approved"] is True and [(a["by"], a["via"]) for a in result["approvals"]] == [("alice", "link"), ("bob", "link")]


def test_a_chinese_mail_says_approve_and_deny_in_chinese() -> None:
    from askd.channels.mail import message as mail

    description = {
        "sessionId": "s<1>", "requestId": "r1", "expiresAt": "2026-12-02T12:00:00Z", "quorum": 1, "approvals": [],
        "action": {"name": "deploy <now>", "arguments": {"env": "prod"}},
    }
    made = {"open": "https://a/o", "options": [], "approve": "https://a/y", "deny": "https://a/n"}
    composed = mail.compose(description, inbox="https://a/", links=made, lang="zh-CN")
    assert "批准: https://a/y" in composed.text and "拒绝: https://a/n" in composed.text
    assert "会话 s<1>" in composed.text and "12:00 UTC" in composed.text
    assert "s&lt;1&gt;" in composed.html and "deploy &lt;now&gt;" in composed.html and "<now>" not in composed.html
