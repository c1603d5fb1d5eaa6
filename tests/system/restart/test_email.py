"""E-mail across a restart of a real ``askd serve`` on SQLite (spec J): a
mail sent is never sent again, whether the daemon was killed (-9) or
stopped; a mail still due when it went down is sent once it is back."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import QUIET, q
from tests.support.mailbox import Mailbox, mailbox  # noqa: F401  (the fixture)
from tests.system.restart import HOW, epoch, restart, running

AFTER = 1.0  # notify.after_seconds of the second test


def mail_settings(box: Mailbox, **more: str) -> dict[str, str]:
    return {"ASKD_NOTIFY__SMTP_URL": box.url, "ASKD_NOTIFY__EMAIL_FROM": "askd@example.com", **more}


@pytest.mark.parametrize("how", HOW)
async def test_a_mail_sent_is_not_sent_again_after_a_restart(how: str, tmp_path: Path, mailbox: Mailbox) -> None:
    async with running(tmp_path, **mail_settings(mailbox)) as d:
        for user in ("alice", "bob"):
            r = await d.admin("PUT", f"/admin/v1/users/{user}", json={"email": f"{user}@example.com"})
            assert r.status_code == 200
        r = await d.http.post(
            f"{d.url}/v1/sessions/s1/questions", json={"to": ["alice", "bob"], "questions": [q("Kept?")]}, headers=d.agent_headers
        )
        assert r.status_code == 201
        await mailbox.wait_for(2)
        process = await restart(d.daemon, how)
        await mailbox.quiet(1.0, 2)  # the restart found the question pending and due: no mail again
        assert (await d.admin("GET", "/admin/v1/users/bob")).json()["email"] == "bob@example.com"  # kept
        assert process.named("email.sent") == []


@pytest.mark.parametrize("how", HOW)
async def test_a_mail_due_while_down_is_sent_once_after_the_start(how: str, tmp_path: Path, mailbox: Mailbox) -> None:
    async with running(tmp_path, **mail_settings(mailbox, ASKD_NOTIFY__AFTER_SECONDS=str(AFTER))) as d:
        assert (await d.admin("PUT", "/admin/v1/users/alice", json={"email": "alice@example.com"})).status_code == 200
        asked = await d.ask("s1", "alice", [q("Later?")], timeoutSeconds=60)
        assert time.time() < epoch(asked["createdAt"]) + AFTER - 0.3, "the machine was too slow to go down before the mail"
        process = await restart(d.daemon, how, down_until=epoch(asked["createdAt"]) + AFTER + 0.2)
        [m] = await mailbox.wait_for(1)
        await mailbox.quiet(QUIET, 1)
        assert m.rcpt_tos == ["alice@example.com"] and "Later?" in m.part("plain")
        assert len(process.named("email.sent")) == 1
