"""E-mail over TLS against a real TLS mail server (aiosmtpd with a test CA
from ``trustme``): ``smtps://`` (TLS from the first byte) and ``smtp://``
with STARTTLS deliver when the daemon trusts the server's CA (here through
``SSL_CERT_FILE``, as for any private CA); a certificate it does not trust
fails the mail at once, with one warning and never in plain text; and a
password goes only over TLS unless ``notify.smtp_login_without_tls``."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import trustme

from askd.channels.retry import Retry
from tests.conftest import QUIET, RunningDaemon, eventually, log_text, q  # noqa: F401  (log_text: the fixture)
from tests.support.mailbox import PASSWORD, USER, Mailbox, listening, server_tls
from tests.system.wire.test_email import SENDER, TIMEOUT, addresses
from tests.system.wire.test_webhooks import metric

LOGIN = f"{USER}:{quote(PASSWORD, safe='')}@"


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def server_name() -> str:
    """Parametrize: the name the server's certificate is for."""
    return "127.0.0.1"


@pytest.fixture
def mode() -> str:
    """Parametrize: ``smtps`` (TLS from the first byte), ``starttls``
    (offered, and a login only inside it), ``plain`` (no TLS at all)."""
    return "starttls"


@pytest.fixture
def scheme(mode: str) -> str:
    """Parametrize: the URL's scheme, when it is not the server's."""
    return "smtps" if mode == "smtps" else "smtp"


@pytest.fixture
def trusted() -> bool:
    """Parametrize: whether the daemon trusts the test CA (SSL_CERT_FILE)."""
    return True


@pytest.fixture
def login() -> bool:
    """Parametrize: whether the URL carries a user and password."""
    return True


@pytest.fixture
async def box(ca: trustme.CA, server_name: str, mode: str) -> AsyncIterator[Mailbox]:
    tls = server_tls(ca, server_name)
    options: dict[str, Any] = {
        "smtps": {"tls": tls},
        "starttls": {"tls_context": tls, "auth_require_tls": True},  # AUTH only after STARTTLS
        "plain": {},
    }[mode]
    async with listening(Mailbox(), **options) as box:
        yield box


@pytest.fixture
def notify_settings() -> dict[str, Any]:
    """Parametrize: more of the notify section."""
    return {}


@pytest.fixture
def settings_overrides(
    box: Mailbox, scheme: str, login: bool, trusted: bool, ca: trustme.CA, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, notify_settings: dict[str, Any],
) -> dict[str, Any]:
    if trusted:  # before the daemon starts, as a user would set it
        bundle = tmp_path / "mail-ca.pem"
        ca.cert_pem.write_to_path(str(bundle))
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    else:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)  # the system's CAs: not the test CA
    url = f"{scheme}://{LOGIN if login else ''}127.0.0.1:{box.port}"
    return {"notify": {"smtp_url": url, "email_from": f"askd <{SENDER}>", "timeout_seconds": TIMEOUT, **notify_settings}}


@pytest.fixture(autouse=True)
def fast_retry(daemon: RunningDaemon) -> None:
    assert daemon.daemon.mailer is not None
    daemon.daemon.mailer.retry = Retry(attempts=3, base=0.02, cap=0.05)


def events(log: io.StringIO, name: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, log.getvalue().splitlines()) if e.get("event") == name]


async def ask_alice(daemon: RunningDaemon, question: str) -> str:
    """Ask alice, who has an address, one question; its requestId."""
    await addresses(daemon, alice="alice@example.com")
    return str((await daemon.ask("s1", "alice", [q(question)]))["requestId"])


async def failed_once(daemon: RunningDaemon, box: Mailbox, log: io.StringIO) -> dict[str, Any]:
    """The mail failed, on its first attempt, with one warning that names
    the server but not its user or password; nothing arrived."""
    await eventually(lambda: metric(daemon, "askd_emails_total", result="failed"), what="the mail failed")
    await box.quiet(QUIET, 0)
    assert events(log, "email.retry") == []  # final at once: another try meets the same refusal
    [line] = [line for line in log.getvalue().splitlines() if '"email.failed"' in line]
    warning = json.loads(line)
    assert warning["level"] == "warning" and warning["attempt"] == 1
    assert warning["server"].endswith(f"://127.0.0.1:{box.port}")
    assert PASSWORD not in line and quote(PASSWORD, safe="") not in line and USER not in line
    return warning


@pytest.mark.parametrize("mode", ["smtps"])
async def test_smtps_delivers_over_tls_to_a_server_whose_ca_is_trusted(
    daemon: RunningDaemon, box: Mailbox, log_text: io.StringIO
) -> None:
    await ask_alice(daemon, "Over TLS?")
    [m] = await box.wait_for(1)
    assert m.tls and m.rcpt_tos == ["alice@example.com"] and "Over TLS?" in m.part("plain")
    assert box.logins == box.tls_logins == [USER]
    await eventually(lambda: events(log_text, "email.sent"), what="email.sent logged")
    assert PASSWORD not in log_text.getvalue()


@pytest.mark.parametrize("login", [True, False])
async def test_smtp_takes_starttls_when_offered_and_logs_in_only_inside_it(
    daemon: RunningDaemon, box: Mailbox, login: bool
) -> None:
    await ask_alice(daemon, "Upgraded?")
    [m] = await box.wait_for(1)
    assert m.tls  # with or without a login: never in plain text when TLS is offered
    assert box.logins == box.tls_logins == ([USER] if login else [])  # the server refuses AUTH before TLS


@pytest.mark.parametrize(
    ("mode", "trusted", "server_name"),
    [("smtps", False, "127.0.0.1"), ("starttls", False, "127.0.0.1"), ("starttls", True, "mail.example.com")],
    ids=["smtps-unknown-ca", "starttls-unknown-ca", "starttls-other-name"],
)
async def test_a_certificate_not_trusted_fails_the_mail_loudly_and_never_falls_back(
    daemon: RunningDaemon, box: Mailbox, log_text: io.StringIO, mode: str
) -> None:
    rid = await ask_alice(daemon, "Trusted?")
    warning = await failed_once(daemon, box, log_text)
    assert warning["reason"].startswith("the server's certificate is not trusted (")
    assert box.logins == []  # the password never left the daemon
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"


@pytest.mark.parametrize(("mode", "scheme"), [("plain", "smtps")])
async def test_smtps_to_a_server_without_tls_fails_at_once(daemon: RunningDaemon, box: Mailbox, log_text: io.StringIO) -> None:
    await ask_alice(daemon, "TLS?")
    warning = await failed_once(daemon, box, log_text)
    assert warning["reason"].startswith("TLS failed (")
    assert box.logins == []


@pytest.mark.parametrize("mode", ["plain"])
async def test_a_password_is_not_sent_to_a_server_without_starttls(
    daemon: RunningDaemon, box: Mailbox, log_text: io.StringIO
) -> None:
    await ask_alice(daemon, "In the clear?")
    warning = await failed_once(daemon, box, log_text)
    assert "offers no STARTTLS" in warning["reason"] and "notify.smtp_login_without_tls" in warning["reason"]
    assert box.logins == []


@pytest.mark.parametrize(
    ("mode", "login", "notify_settings"),
    [("plain", False, {}), ("plain", True, {"smtp_login_without_tls": True})],
    ids=["no-login", "login-opted-in"],
)
async def test_plain_text_only_without_a_password_or_when_opted_into(
    daemon: RunningDaemon, box: Mailbox, login: bool
) -> None:
    await ask_alice(daemon, "Plain?")
    [m] = await box.wait_for(1)
    assert not m.tls and box.logins == ([USER] if login else []) and box.tls_logins == []
