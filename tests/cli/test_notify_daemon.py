"""``askd notify test`` with a daemon running (issue 30.4): the daemon was
started with its notification settings in its own environment; the command,
run from another terminal's clean environment, has the daemon send the
sample through the daemon's channels (``POST /admin/v1/notify/test``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.askd_process import Service
from tests.conftest import RunningDaemon
from tests.support.mailbox import Mailbox, mailbox  # noqa: F401  (the fixture)
from tests.support.receiver import Receiver, receiver  # noqa: F401  (the fixture)

HOOK_SECRET = "whsec-daemon-0123456789"


async def second_terminal(state_dir: Path, *args: str) -> tuple[int, str, str]:
    """``askd notify test ARGS`` in a process of its own whose environment
    names no notification setting (only where askd keeps its state)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env["ASKD_STATE_DIR"] = str(state_dir)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "askd.cli.main", "notify", "test", *args,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.fixture
async def served(tmp_path: Path, receiver: Receiver, mailbox: Mailbox):  # noqa: ANN201
    """``ASKD_NOTIFY__WEBHOOK_URL=... askd serve``, as the README shows."""
    service = Service(
        tmp_path / "served",
        env={
            "ASKD_NOTIFY__WEBHOOK_URL": receiver.url,
            "ASKD_NOTIFY__WEBHOOK_SECRET": HOOK_SECRET,
            "ASKD_NOTIFY__SMTP_URL": mailbox.url,
            "ASKD_NOTIFY__EMAIL_FROM": "askd <askd@example.com>",
            "ASKD_PUBLIC_URL": "https://askd.example.com/",
        },
    )
    await service.start()
    try:
        yield service
    finally:
        await service.close()


async def test_the_running_daemon_sends_the_sample_through_its_own_channels(
    served: Service, receiver: Receiver, mailbox: Mailbox
) -> None:
    code, out, err = await second_terminal(served.state_dir, "--user", "alice", "--email", "alice@example.com")
    assert code == 0, (out, err)
    assert out.splitlines()[0] == f"The daemon at {served.admin_url} sent the sample through its own channels:"
    [got] = receiver.got
    assert got.signed_with(HOOK_SECRET)  # the daemon's secret: this terminal has none
    body = got.json()
    assert body["test"] is True and body["userId"] == "alice" and body["url"] == "https://askd.example.com/?session=askd-notify-test"
    assert f"Sent a sample question (json, signed) to http://127.0.0.1:{receiver.port}/…" in out
    [m] = mailbox.got
    assert m.rcpt_tos == ["alice@example.com"] and "This is a test from `askd notify test`" in m.part("plain")
    assert "s3cr3tpath" not in out + err


async def test_json_says_the_daemon_sent_it(served: Service, receiver: Receiver) -> None:
    code, out, err = await second_terminal(served.state_dir, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["via"] == "daemon" and report["ok"] is True and report["status"] == 200
    assert report["payload"] == receiver.got[0].json()
    assert report["email"]["sent"] is False  # "you" has no address kept: composed, not sent


async def test_a_refusing_receiver_is_exit_1_with_one_line(served: Service, receiver: Receiver) -> None:
    receiver.script = [404]
    code, out, err = await second_terminal(served.state_dir)
    assert code == 1
    assert err.strip() == f"askd: the webhook at http://127.0.0.1:{receiver.port}/… answered 404 Not Found: 'error 404'"


# ---- the admin call itself, on the in-process daemon ------------------------


@pytest.fixture
def settings_overrides(mailbox: Mailbox) -> dict[str, object]:
    return {"notify": {"smtp_url": mailbox.url, "email_from": "askd <askd@example.com>"}}


async def test_the_admin_call_mails_the_users_kept_address(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    r = await daemon.admin("PUT", "/admin/v1/users/bob", json={"email": "bob@example.com"})
    assert r.status_code == 200, r.text
    r = await daemon.admin("POST", "/admin/v1/notify/test", json={"user": "bob"})
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["url"] is None and report["ok"] is True  # no webhook configured
    assert (report["email"]["sent"], report["email"]["to"]) == (True, "bob@example.com")
    [m] = mailbox.got
    assert m.rcpt_tos == ["bob@example.com"]
    pending = await daemon.admin("GET", "/admin/v1/pending")
    assert pending.json()["pending"] == []  # the sample never entered the registry
    r = await daemon.admin("POST", "/admin/v1/notify/test", json={"user": "bob", "email": "ops@corp.local"})
    assert r.status_code == 200 and r.json()["email"]["to"] == "ops@corp.local", r.text  # an intranet domain, as a user's address
    await mailbox.wait_for(2)
    assert mailbox.got[1].rcpt_tos == ["ops@corp.local"]


async def test_the_admin_call_is_for_admins_and_checks_its_body(daemon: RunningDaemon, mailbox: Mailbox) -> None:
    url = f"{daemon.admin_url}/admin/v1/notify/test"
    assert (await daemon.http.post(url, json={})).status_code == 401
    for bad in ({"user": ""}, {"email": "nope"}, {"url": "http://evil.example/"}, []):
        r = await daemon.admin("POST", "/admin/v1/notify/test", json=bad)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", (bad, r.text)
    assert mailbox.got == []


async def test_a_daemon_without_channels_says_so_even_if_this_terminal_has_one(tmp_path: Path, receiver: Receiver) -> None:
    service = Service(tmp_path / "bare")
    await service.start()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
        env.update(ASKD_STATE_DIR=str(service.state_dir), ASKD_NOTIFY__WEBHOOK_URL=receiver.url)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "askd.cli.main", "notify", "test",
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        await service.close()
    assert proc.returncode == 2, (out, err)
    assert err.decode().strip() == (
        f"askd: nothing to test: the daemon at {service.admin_url} has no notify.webhook_url and no notify.smtp_url "
        "(set them where it starts, e.g. ASKD_NOTIFY__WEBHOOK_URL=... askd serve, and restart it)"
    )
    assert receiver.got == []  # this terminal's webhook is not the daemon's
