"""``askd notify test`` against a real receiver: what it sends, what it
prints, and its exit codes."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from urllib.parse import quote

import pytest
import trustme

from tests.cli.test_commands import askd, one_error_line
from tests.support.mailbox import PASSWORD, USER, Mailbox, listening, mailbox, server_tls  # noqa: F401  (mailbox: the fixture)
from tests.support.receiver import HANG, Receiver, receiver  # noqa: F401  (the fixture)

HOOK_SECRET = "whsec-cli-0123456789"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# No daemon runs in these tests: the command says so and sends from this
# machine's settings (tests/cli/test_notify_daemon.py has the daemon's). The
# admin URL names a port nothing listens on, so an askd running on this
# machine's default ports (`make serve`) is not the one asked.
NO_DAEMON = f"http://127.0.0.1:{_closed_port()}"
LOCAL = f"No askd answers at {NO_DAEMON}: sending from this machine's settings (its config file and ASKD_* variables)."


@pytest.fixture(autouse=True)
def no_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASKD_ADMIN_URL", NO_DAEMON)


def local_report(stdout: str) -> str:
    """The report after the first line, which must say the settings are this machine's."""
    first, _, rest = stdout.partition("\n")
    assert first == LOCAL, stdout
    return rest


@pytest.fixture
def env(receiver: Receiver) -> dict[str, str]:
    return {
        "ASKD_NOTIFY__WEBHOOK_URL": receiver.url,
        "ASKD_NOTIFY__WEBHOOK_SECRET": HOOK_SECRET,
        "ASKD_NOTIFY__TIMEOUT_SECONDS": "5",  # a loaded machine's TLS handshake can take over 0.5 s
        "ASKD_PUBLIC_URL": "https://askd.example.com/inbox/",
    }


async def test_it_sends_a_signed_sample_and_prints_the_answer(receiver: Receiver, env: dict[str, str]) -> None:
    r = await askd("notify", "test", "--user", "alice", env=env)
    assert r.exit_code == 0, r.stderr
    [got] = receiver.got
    assert got.signed_with(HOOK_SECRET)
    body = got.json()
    assert body["event"] == "question.asked" and body["test"] is True
    assert body["userId"] == "alice"
    assert body["url"] == "https://askd.example.com/inbox/?session=askd-notify-test"
    assert body["to"] == body["users"] == ["alice"]
    assert set(body) == {"event", "userId", "to", "users", "sessionId", "requestId", "questions", "createdAt", "expiresAt", "url", "links", "test"}
    [(who, alice)] = body["links"].items()  # public_url is set: the daemon's links, for the sample's user
    assert who == "alice" and [o["label"] for o in alice["options"]] == ["Yes", "No"]
    shown = [alice["options"][0]["url"], alice["options"][1]["url"], alice["open"]]
    assert all(u.startswith("https://askd.example.com/inbox/a/") for u in shown) and len(set(shown)) == 3
    assert r.stdout.endswith(f"  Yes: {shown[0]}\n  No: {shown[1]}\n  Open: {shown[2]}\n")  # the links, listed
    out = local_report(r.stdout).splitlines()
    assert out[0] == f"Sent a sample question (json, signed) to http://127.0.0.1:{receiver.port}/…"
    assert out[1].startswith("The receiver answered 200 OK in ") and out[1].endswith(" ms: 'ok'")
    assert "s3cr3tpath" not in r.stdout + r.stderr  # the URL's path is its secret


async def test_slack_format_from_the_flag(receiver: Receiver, env: dict[str, str]) -> None:
    r = await askd("notify", "test", "--format", "slack", env=env)
    assert r.exit_code == 0, r.stderr
    text = receiver.got[0].json()["text"]
    assert "*askd test*: This is a test" in text and "(Yes / No)" in text


async def test_teams_format_from_the_flag(receiver: Receiver, env: dict[str, str]) -> None:
    r = await askd("notify", "test", "--format", "teams", "--user", "alice", env=env)
    assert r.exit_code == 0, r.stderr
    body = receiver.got[0].json()
    [attachment] = body["attachments"]
    assert body["type"] == "message" and attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and "This is a test" in json.dumps(card["body"])
    # public_url is set: the sample's answer links as buttons, as the command lists them
    shown = [(a["title"], a["url"]) for a in card["actions"]]
    assert [title for title, _ in shown] == ["Yes", "No", "Open"]
    assert r.stdout.endswith("".join(f"  {title}: {url}\n" for title, url in shown))
    assert "Sent a sample question (teams, signed)" in r.stdout


async def test_a_4xx_is_one_line_and_exit_1(receiver: Receiver, env: dict[str, str]) -> None:
    receiver.script = [404]
    line = one_error_line(await askd("notify", "test", env=env))
    assert line == f"askd: the webhook at http://127.0.0.1:{receiver.port}/… answered 404 Not Found: 'error 404'"
    assert len(receiver.got) == 1  # one attempt, never retried


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refusal_without_a_secret_says_nothing_was_signed(receiver: Receiver, env: dict[str, str], status: int) -> None:
    receiver.script = [status]
    unsigned = {k: v for k, v in env.items() if k != "ASKD_NOTIFY__WEBHOOK_SECRET"}
    line = one_error_line(await askd("notify", "test", env=unsigned))
    assert line.endswith("; no notify.webhook_secret (ASKD_NOTIFY__WEBHOOK_SECRET) is configured, so nothing was signed")
    receiver.script = [status]
    signed = one_error_line(await askd("notify", "test", env=env))
    assert "nothing was signed" not in signed  # signed, and refused anyway: another cause


async def test_a_receiver_that_hangs_times_out(receiver: Receiver, env: dict[str, str]) -> None:
    receiver.script = [HANG]
    line = one_error_line(await askd("notify", "test", env={**env, "ASKD_NOTIFY__TIMEOUT_SECONDS": "0.5"}))
    assert line.endswith("did not answer: no answer within 0.5 s")


async def test_json_output_for_scripts(receiver: Receiver, env: dict[str, str]) -> None:
    r = await askd("notify", "test", "--json", env=env)
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert out["ok"] is True and out["status"] == 200 and out["body"] == "ok" and out["signed"] is True
    assert out["url"] == f"http://127.0.0.1:{receiver.port}/…"
    receiver.script = [503]
    r = await askd("notify", "test", "--json", env=env)
    assert r.exit_code == 1 and r.stderr == ""
    assert json.loads(r.stdout)["status"] == 503


async def test_without_a_webhook_or_with_a_bad_url_it_says_so() -> None:
    line = one_error_line(await askd("notify", "test"), code=2)
    assert "set notify.webhook_url (ASKD_NOTIFY__WEBHOOK_URL)" in line
    line = one_error_line(await askd("notify", "test", "--webhook-url", "ftp://example.com/"), code=2)
    assert line == "askd: --webhook-url: URL scheme should be 'http' or 'https'"
    r = await askd("notify", "test", "--webhook-url", "http://127.0.0.1:9/")
    line = one_error_line(r)
    assert line.startswith("askd: the webhook at http://127.0.0.1:9/… did not answer: cannot connect")
    assert r.stdout.splitlines()[0] == (
        "With --webhook-url or --format the test runs on this machine, not the daemon: "
        "sending from this machine's settings (its config file and ASKD_* variables)."
    )


# ---- e-mail -----------------------------------------------------------------


@pytest.fixture
def mail_env(mailbox: Mailbox) -> dict[str, str]:
    return {
        "ASKD_NOTIFY__SMTP_URL": mailbox.url,
        "ASKD_NOTIFY__EMAIL_FROM": "askd <askd@example.com>",
        "ASKD_NOTIFY__TIMEOUT_SECONDS": "5",  # a loaded machine's TLS handshake can take over 0.5 s
        "ASKD_PUBLIC_URL": "https://askd.example.com/inbox/",
    }


async def test_it_mails_a_sample_and_shows_its_text(mailbox: Mailbox, mail_env: dict[str, str]) -> None:
    r = await askd("notify", "test", "--user", "alice", "--email", "alice@example.com", env=mail_env)
    assert r.exit_code == 0, r.stderr
    [m] = mailbox.got
    assert m.rcpt_tos == ["alice@example.com"] and m.mail_from == "askd@example.com"
    text = m.part("plain")
    assert "This is a test from `askd notify test`" in text
    assert "Open your askd inbox: https://askd.example.com/inbox/?session=askd-notify-test" in text
    out = local_report(r.stdout).splitlines()
    assert out[0].startswith(f"Sent a sample mail to alice@example.com through smtp://127.0.0.1:{mailbox.port} in ")
    assert out[1] == f"Subject: {m.message['Subject']}"
    assert f"Subject: {m.message['Subject']}\n\n{text}" in r.stdout  # what was sent is what is shown
    yes = re.search(r"  - Yes: (\S+)", text)
    assert yes is not None and f"  Yes: {yes.group(1)}\n" in r.stdout  # the mail's one-tap link, listed


async def test_it_mails_between_intranet_addresses(mailbox: Mailbox, mail_env: dict[str, str]) -> None:
    # askd never resolves a domain: the relay does. Both ends on an Active Directory domain.
    env = {**mail_env, "ASKD_NOTIFY__EMAIL_FROM": "askd <askd@corp.local>"}
    r = await askd("notify", "test", "--user", "alice", "--email", "alice@corp.local", env=env)
    assert r.exit_code == 0, r.stderr
    [m] = mailbox.got
    assert (m.rcpt_tos, m.mail_from) == (["alice@corp.local"], "askd@corp.local")
    assert m.message["From"] == "askd <askd@corp.local>" and m.message["To"].endswith("alice@corp.local")


async def test_without_an_address_the_mail_is_shown_not_sent(mailbox: Mailbox, mail_env: dict[str, str]) -> None:
    r = await askd("notify", "test", env=mail_env)
    assert r.exit_code == 0, r.stderr
    assert local_report(r.stdout).startswith(f"The mail askd sends through smtp://127.0.0.1:{mailbox.port} (not sent: pass --email ADDRESS to send it):")
    assert "Did it arrive?" in r.stdout
    assert mailbox.got == []


async def test_json_has_the_webhook_and_the_mail(
    receiver: Receiver, mailbox: Mailbox, env: dict[str, str], mail_env: dict[str, str]  # noqa: F811
) -> None:
    r = await askd("notify", "test", "--json", "--email", "bob@example.com", env={**env, **mail_env})
    assert r.exit_code == 0, r.stdout + r.stderr  # --json reports a failure on stdout
    out = json.loads(r.stdout)
    assert out["ok"] is True and out["status"] == 200
    assert out["payload"] == receiver.got[0].json()  # the body it sent
    assert out["links"] == out["payload"]["links"]["you"] and out["links"]["open"] in out["email"]["text"]
    email = out["email"]
    assert (email["ok"], email["sent"], email["to"], email["from"]) == (True, True, "bob@example.com", "askd <askd@example.com>")
    assert email["server"] == f"smtp://127.0.0.1:{mailbox.port}" and email["error"] is None
    assert email["text"] == mailbox.got[0].part("plain")


async def test_a_mail_server_that_refuses_is_one_line_and_exit_1(mailbox: Mailbox, mail_env: dict[str, str]) -> None:
    mailbox.script = ["554 no relaying"]
    line = one_error_line(await askd("notify", "test", "--email", "x@example.com", env=mail_env))
    assert line == f"askd: the mail server at smtp://127.0.0.1:{mailbox.port} did not take the mail: the server answered 554 no relaying"
    down = {**mail_env, "ASKD_NOTIFY__SMTP_URL": "smtp://127.0.0.1:9"}
    line = one_error_line(await askd("notify", "test", "--email", "x@example.com", env=down))
    assert line.startswith("askd: the mail server at smtp://127.0.0.1:9 did not take the mail: cannot connect")


async def test_email_needs_a_mail_server(mail_env: dict[str, str]) -> None:
    line = one_error_line(await askd("notify", "test", "--email", "x@example.com"), code=2)
    assert line == "askd: --email needs notify.smtp_url (ASKD_NOTIFY__SMTP_URL): no mail server is configured"
    line = one_error_line(await askd("notify", "test", "--email", "nope", env=mail_env), code=2)
    assert line.startswith("askd: --email: ")


async def test_it_mails_over_starttls_to_a_server_of_a_ca_in_ssl_cert_file(mail_env: dict[str, str], tmp_path: Path) -> None:
    ca = trustme.CA()
    bundle = tmp_path / "mail-ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    async with listening(Mailbox(), tls_context=server_tls(ca), auth_require_tls=True) as box:
        env = {**mail_env, "ASKD_NOTIFY__SMTP_URL": f"smtp://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{box.port}"}
        line = one_error_line(await askd("notify", "test", "--email", "x@example.com", env=env))
        assert line.startswith(f"askd: the mail server at smtp://127.0.0.1:{box.port} did not take the mail: the server's certificate is not trusted (")
        assert box.got == [] and box.logins == []
        r = await askd("notify", "test", "--email", "x@example.com", env={**env, "SSL_CERT_FILE": str(bundle)})
        assert r.exit_code == 0, r.stderr
        [m] = box.got
        assert m.tls and box.tls_logins == [USER]
