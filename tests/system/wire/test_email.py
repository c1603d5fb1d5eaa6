"""E-mail notifications through a real SMTP server (spec J): one mail per
recipient with an address, per question and escalation step; the
webhook's rules; the mail's parts; and no mail server can slow, fail or
change an ask. Runs on each local store (their claims differ)."""

from __future__ import annotations

import asyncio
import io
import re
import time
from typing import Any
from urllib.parse import quote

import pytest

from askd.channels.retry import Retry
from tests.conftest import QUIET, RunningDaemon, eventually, log_text, q  # noqa: F401  (log_text: the fixture)
from tests.support.mailbox import HANG, PASSWORD, USER, Mailbox, mailbox  # noqa: F401  (the fixture)
from tests.system.links.conftest import PUBLIC_URL, local
from tests.system.wire.test_groups import ask_to
from tests.system.wire.test_webhooks import metric

SENDER = "askd@example.com"
TIMEOUT = 0.8  # one attempt's limit, for the server that hangs


@pytest.fixture
def notify_settings(request: pytest.FixtureRequest, mailbox: Mailbox) -> dict[str, Any]:
    """Parametrize this name to change the notify section of one test
    (indirectly with ``"login"``: the server's URL with a user and password;
    this server has no TLS, so the login in plain text is opted into: the
    TLS forms are tests/system/wire/test_email_tls.py's)."""
    if getattr(request, "param", None) == "login":
        return {"smtp_url": f"smtp://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{mailbox.port}", "smtp_login_without_tls": True}
    return {}


@pytest.fixture
def top_settings() -> dict[str, Any]:
    """Parametrize this name for settings outside the notify section."""
    return {}


@pytest.fixture
def settings_overrides(mailbox: Mailbox, notify_settings: dict[str, Any], top_settings: dict[str, Any]) -> dict[str, Any]:
    notify = {"smtp_url": mailbox.url, "email_from": f"askd <{SENDER}>", "timeout_seconds": TIMEOUT, **notify_settings}
    return {"notify": notify, **top_settings}


@pytest.fixture(autouse=True)
def fast_retry(daemon: RunningDaemon) -> Retry:
    assert daemon.daemon.mailer is not None
    retry = daemon.daemon.mailer.retry = Retry(attempts=3, base=0.02, cap=0.05)
    return retry


async def addresses(daemon: RunningDaemon, **emails: str) -> None:
    for user, email in emails.items():
        r = await daemon.admin("PUT", f"/admin/v1/users/{user}", json={"email": email})
        assert r.status_code == 200, r.text


async def test_one_mail_per_recipient_with_an_address(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com", bob="bob@example.com")  # carol has none
    asked = await ask_to(daemon, "s1", ["alice", "bob", "carol"], questions=[q("Ship **v2** today?", "Yes", "No", header="Release")])
    got = await mailbox.wait_for(2)
    await mailbox.quiet(QUIET, 2)
    assert sorted(m.rcpt_tos[0] for m in got) == ["alice@example.com", "bob@example.com"]
    for m in got:
        assert [m.to] == m.rcpt_tos and m.mail_from == SENDER
        assert m.message["From"] == f"askd <{SENDER}>"
        assert m.message["Subject"] == "A question for you: Release"
        assert m.message["Auto-Submitted"] == "auto-generated"
        text, html = m.part("plain"), m.part("html")
        assert "Ship **v2** today?" in text and "  - Yes" in text and "  - No" in text  # the Markdown source
        assert "<strong>v2</strong>" in html and "**" not in html  # rendered
        inbox = f"{daemon.url}/?session=s1"
        assert f"Open your askd inbox: {inbox}" in text and f'href="{inbox}"' in html
    assert await metric(daemon, "askd_emails_total", result="sent") == 2
    assert asked["requestId"]


async def test_the_mail_is_styled_names_the_session_and_its_subject_is_plain(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    """Issue 30.5 and 30.6, through the real SMTP server: the Subject is the
    question's first sentence without Markdown; the HTML part is styled
    inline and names the session as the Slack message does."""
    await addresses(daemon, alice="alice@example.com")
    question = "Ship **release 2.4** tonight? See [the notes](https://notes.example/2.4)"
    await daemon.ask("deploy-42", "alice", [q(question, "Yes", "No")])
    [m] = await mailbox.wait_for(1)
    assert m.message["Subject"] == "A question for you: Ship release 2.4 tonight?"
    html = m.part("html")
    assert "<title>A question for you: Ship release 2.4 tonight?</title>" in html
    assert re.search(r'<body style="[^"]+"><div style="[^"]*font-family:[^"]*sans-serif', html), html
    assert re.search(r'\(session <span style="[^"]+">deploy-42</span>, until \d\d:\d\d UTC\)', html), html
    assert "(session deploy-42, until " in m.part("plain")


async def test_the_html_part_never_carries_markup_from_the_question(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com")
    hostile = '<script>alert(1)</script> <img src="https://evil.example/x.png"> [x](javascript:alert(1))'
    await daemon.ask("s1", "alice", [q(hostile, '<b onclick="x">Yes</b>', header="<i>H</i>")])
    [m] = await mailbox.wait_for(1)
    html = m.part("html")
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "<b onclick" not in html and "&lt;b onclick" in html and "<i>H" not in html


@pytest.mark.parametrize("top_settings", [{"public_url": PUBLIC_URL}])
async def test_the_links_in_each_mail_answer_as_its_recipient(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com", bob="bob@example.com")
    asked = await ask_to(daemon, "s1", ["alice", "bob"], questions=[q("Deploy?", "Yes", "No")])
    await mailbox.wait_for(2)
    [to_alice], [to_bob] = mailbox.to("alice@example.com"), mailbox.to("bob@example.com")

    def found(pattern: str, text: str) -> str:
        match = re.search(pattern, text)
        assert match is not None, (pattern, text)
        return match.group(1)

    text, html = to_alice.part("plain"), to_alice.part("html")
    yes, no = found(r"  - Yes: (\S+)", text), found(r"  - No: (\S+)", text)
    whole = found(r"Answer in your browser: (\S+)", text)
    for url in (yes, no, whole):
        assert url.startswith(PUBLIC_URL + "a/") and f'href="{url}"' in html
    assert yes != found(r"  - Yes: (\S+)", to_bob.part("plain"))  # each names its recipient
    rid = asked["requestId"]
    assert (await daemon.http.get(local(daemon, yes))).status_code == 200
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"  # a GET (a mail scanner) changes nothing
    r = await daemon.http.post(local(daemon, yes))
    assert r.status_code == 200, r.text
    result = (await daemon.result("s1", rid)).json()
    assert (result["status"], result["answers"], result["answeredBy"], result["via"]) == ("answered", {"Deploy?": "Yes"}, "alice", "link")


async def test_without_public_url_the_mail_has_no_answer_links(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com")
    await daemon.ask("s1", "alice", [q("Deploy?", "Yes", "No")])
    [m] = await mailbox.wait_for(1)
    assert "/a/" not in m.part("plain") + m.part("html") and "Answer in your browser" not in m.part("plain")


@pytest.mark.parametrize("notify_settings", [{"after_seconds": 0.4}])
async def test_after_seconds_waits_and_skips_what_was_answered_meanwhile(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com")
    tab = await daemon.connect("alice")
    await tab.subscribe("*")
    answered = await daemon.ask("s1", "alice", [q("Fast?")])
    await tab.expect("ask_user_questions")
    assert (await tab.answer("s1", answered["requestId"], {"Fast?": "yes"}))["payload"]["accepted"]
    started = time.monotonic()
    await daemon.ask("s2", "alice", [q("Slow?")])
    [m] = await mailbox.wait_for(1)
    assert time.monotonic() - started >= 0.35
    assert "Slow?" in m.part("plain")
    await mailbox.quiet(QUIET, 1)


@pytest.mark.parametrize("notify_settings", [{"only_offline": True}])
async def test_only_offline_mails_nobody_while_the_user_has_a_tab(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com", bob="bob@example.com")
    tab = await daemon.connect("alice")
    await tab.subscribe("*")
    await daemon.ask("s1", "alice", [q("Seen?")])
    await daemon.ask("s2", "bob", [q("Away?")])
    [m] = await mailbox.wait_for(1)
    await mailbox.quiet(QUIET, 1)
    assert m.rcpt_tos == ["bob@example.com"] and "Away?" in m.part("plain")


async def test_an_escalation_step_mails_only_its_new_members(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com", bob="bob@example.com")
    await daemon.ask("s1", "alice", [q("Deploy?")], escalate=[{"afterSeconds": 0.3, "to": ["alice", "bob"]}])
    [first] = await mailbox.wait_for(1)
    assert first.rcpt_tos == ["alice@example.com"]
    got = await mailbox.wait_for(2)
    await mailbox.quiet(QUIET, 2)
    assert got[1].rcpt_tos == ["bob@example.com"]  # alice was told already


async def test_an_address_set_clears_and_normalizes(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="Alice@EXAMPLE.com")
    r = await daemon.admin("GET", "/admin/v1/users/alice")
    assert r.json() == {"user": "alice", "email": "Alice@example.com", "slack": None}
    assert (await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": None})).json() == {"user": "alice", "email": None, "slack": None}
    await daemon.ask("s1", "alice", [q("Anyone?")])
    await mailbox.quiet(QUIET, 0)


async def test_a_refused_mail_is_not_retried_and_a_temporary_refusal_is(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com", bob="bob@example.com")
    mailbox.script = ["550 no such user"]
    await daemon.ask("s1", "alice", [q("One?")])
    await eventually(lambda: metric(daemon, "askd_emails_total", result="failed"), what="failed counted")
    mailbox.script = ["451 try again later"]
    await daemon.ask("s2", "bob", [q("Two?")])
    [m] = await mailbox.wait_for(1)  # the second attempt
    assert m.rcpt_tos == ["bob@example.com"]
    await mailbox.quiet(QUIET, 1)
    assert await metric(daemon, "askd_emails_total", result="sent") == 1
    assert await metric(daemon, "askd_emails_total", result="failed") == 1


async def test_a_mail_server_that_hangs_changes_nothing_for_the_ask(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com")
    mailbox.script = [HANG, HANG, HANG]
    took, asked = [], []
    for i in range(6):  # while the sender waits on a hung server, each ask answers at once
        started = time.monotonic()
        asked.append(await daemon.ask(f"s{i + 1}", "alice", [q("Now?")]))
        took.append(time.monotonic() - started)
    assert max(took) < TIMEOUT, took
    first = asked[0]
    tab = await daemon.connect("alice")
    assert [f["type"] for f in await tab.subscribe("s1")] == ["session_snapshot", "ask_user_questions"]
    assert (await tab.answer("s1", first["requestId"], {"Now?": "yes"}))["payload"]["accepted"]
    result = (await daemon.result("s1", first["requestId"])).json()
    assert result["status"] == "answered" and result["via"] == "ws"


@pytest.mark.parametrize("notify_settings", [{"smtp_url": "smtp://127.0.0.1:9"}])
async def test_an_unreachable_mail_server_changes_nothing_for_the_ask(daemon: RunningDaemon) -> None:
    await addresses(daemon, alice="alice@example.com")
    started = time.monotonic()
    asked = await daemon.ask("s1", "alice", [q("Here?")], timeoutSeconds=30)
    assert time.monotonic() - started < TIMEOUT
    await eventually(lambda: metric(daemon, "askd_emails_total", result="failed"), what="failed after its retries")
    assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "pending"


@pytest.mark.parametrize("notify_settings", ["login"], indirect=True)
async def test_the_login_is_used_and_its_password_never_logged(
    daemon: RunningDaemon, mailbox: Mailbox, log_text: io.StringIO
) -> None:
    await addresses(daemon, alice="alice@example.com")
    await daemon.ask("s1", "alice", [q("Logged in?")])
    [m] = await mailbox.wait_for(1)
    assert mailbox.logins == [USER]
    await eventually(lambda: "email.sent" in log_text.getvalue(), what="email.sent logged")
    logged = log_text.getvalue()
    assert PASSWORD not in logged and quote(PASSWORD, safe="") not in logged and USER not in logged
    assert f"smtp://127.0.0.1:{mailbox.port}" in logged


async def test_a_stop_while_mails_wait_leaves_nothing_running(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    await addresses(daemon, alice="alice@example.com")
    mailbox.script = [HANG]
    await daemon.ask("s1", "alice", [q("Stop?")])
    mailer = daemon.daemon.mailer
    assert mailer is not None
    await eventually(lambda: mailer.held() == 1, what="a mail in flight")
    await asyncio.wait_for(mailer.aclose(), 1)
    assert mailer.held() == 0
