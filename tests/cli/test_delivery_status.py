"""Channels fail loudly (protocol section 6): a mail the email package
cannot build, or one the mail server refuses, is logged with its reason
and shown as ``failed`` in the question's delivery status, in the admin
listing and in ``askd pending show``. A real daemon, a real SMTP server."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from askd.channels.mail import message as mail
from askd.channels.retry import Retry
from tests.cli.test_commands import askd, local  # noqa: F401 (fixture)
from tests.conftest import RunningDaemon, eventually, log_text, q  # noqa: F401 (fixture)
from tests.support.mailbox import Mailbox, mailbox  # noqa: F401 (fixture)

SECRET_TEXT = "Rotate the production keys?"


@pytest.fixture
def settings_overrides(mailbox: Mailbox) -> dict[str, Any]:  # noqa: F811
    return {"notify": {"smtp_url": mailbox.url, "email_from": "askd <askd@example.com>", "timeout_seconds": 2}}


@pytest.fixture(autouse=True)
def fast_retry(daemon: RunningDaemon) -> None:
    assert daemon.daemon.mailer is not None
    daemon.daemon.mailer.retry = Retry(attempts=3, base=0.02, cap=0.05)


async def ask_alice(daemon: RunningDaemon) -> str:
    r = await daemon.admin("PUT", "/admin/v1/users/alice", json={"email": "alice@example.com"})
    assert r.status_code == 200, r.text
    asked = await daemon.ask("s1", "alice", [q(SECRET_TEXT, "Yes", "No")])
    return str(asked["requestId"])


async def deliveries(daemon: RunningDaemon, rid: str, status: str, session: str = "s1") -> list[dict[str, Any]]:
    """The question's delivery status once every entry is ``status``."""

    async def settled() -> list[dict[str, Any]] | None:
        r = await daemon.admin("GET", "/admin/v1/pending", params={"sessionId": session})
        [item] = [p for p in r.json()["pending"] if p["requestId"] == rid]
        found: list[dict[str, Any]] = item.get("deliveries") or []
        return found if found and all(d["status"] == status for d in found) else None

    found: list[dict[str, Any]] = await eventually(settled, what=f"deliveries {status}")
    return found


def shown(stdout: str) -> str:
    return " ".join(stdout.split())  # the terminal's width wraps lines


async def test_a_mail_that_cannot_be_built_is_failed_with_its_reason(
    local: RunningDaemon,  # noqa: F811
    mailbox: Mailbox,  # noqa: F811
    log_text: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A Subject the email package refuses, planted below every validation of the ask.
    compose = mail.compose
    monkeypatch.setattr(mail, "compose", lambda *a, **kw: replace(compose(*a, **kw), subject="Hi\r\nBcc: eve@example.com"))
    rid = await ask_alice(local)
    [d] = await deliveries(local, rid, "failed")
    reason = "the mail could not be built: its Subject header was refused (ValueError)"
    assert (d["channel"], d["recipient"], d["reason"], d["attempts"]) == ("email", "alice", reason, 1)
    assert d["at"].endswith("Z") and mailbox.got == []

    [line] = [json.loads(x) for x in log_text.getvalue().splitlines() if '"email.failed"' in x]
    assert (line["requestId"], line["userId"], line["reason"]) == (rid, "alice", reason)
    assert SECRET_TEXT not in log_text.getvalue()

    r = await askd("pending", "show", "s1", rid)
    assert r.exit_code == 0, r.stderr
    assert f"email alice failed at {d['at']}, attempts 1: {reason}" in shown(r.stdout)
    r = await askd("pending", "show", "s1", rid, "--json")
    assert json.loads(r.stdout)["deliveries"] == [d]


async def test_a_mail_the_server_refuses_is_failed_and_one_it_takes_is_sent(
    local: RunningDaemon,  # noqa: F811
    mailbox: Mailbox,  # noqa: F811
) -> None:
    mailbox.script = ["451 4.3.0 try later", "550 5.1.1 no such mailbox"]
    rid = await ask_alice(local)
    [d] = await deliveries(local, rid, "failed")
    assert (d["recipient"], d["attempts"]) == ("alice", 2)
    assert d["reason"].startswith("the server answered 550")
    r = await askd("pending", "show", "s1", rid)
    assert "email alice failed" in shown(r.stdout) and "the server answered 550" in shown(r.stdout)

    other = await local.ask("s2", "alice", [q("Another?")])  # the server takes this one
    [d] = await deliveries(local, other["requestId"], "sent", session="s2")
    assert (d["recipient"], d["attempts"]) == ("alice", 1) and "reason" not in d
